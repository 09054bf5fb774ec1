/* contrib/walseg/walseg--1.0.sql: the SQL interface of walseg (sql_functions.c). */

\echo Use "CREATE EXTENSION walseg" to load this file. \quit

-- The preallocator's state and statistics. Without shared_preload_libraries = 'walseg'
-- there is neither: state says so and every other column is NULL.
CREATE FUNCTION walseg_status(
    OUT state text,                 -- running | not running: <why> | in recovery |
                                    -- not preloaded: add walseg to shared_preload_libraries
    OUT worker_pid int,             -- NULL when the preallocator is not running
    OUT segments_ahead int,         -- future segments (files of wal_segment_size, one after
                                    -- another) present in pg_wal at the last look;
                                    -- NULL in recovery (the preallocator waits for its end)
    OUT target_ahead int,           -- walseg.prealloc_segments, bounded by the horizon
    OUT target_capped_by text,      -- what bounds target_ahead: walseg.prealloc_segments,
                                    -- max_wal_size, min_wal_size (before any checkpoint
                                    -- distance is known) or checkpoint distance (what
                                    -- PostgreSQL's recycling keeps for the next cycle: the
                                    -- larger of the WAL since the last checkpoint and the
                                    -- estimate of a cycle's WAL), or free space (a segment
                                    -- more would leave less than max_wal_size free)
    OUT segments_created bigint,    -- by the preallocator and walseg_prealloc()
    OUT misses bigint,              -- segments the insert position reached before walseg
                                    -- had them ready, which PostgreSQL made itself
    OUT created_by_method jsonb,    -- {"method": {"segments", "avg_ms", "max_ms"}}
    OUT avg_create_ms float8,       -- fill + fsync + install
    OUT max_create_ms float8,
    OUT last_segment text,
    OUT last_create_at timestamptz,
    OUT failures bigint,
    OUT last_error text,
    OUT last_error_at timestamptz,
    OUT auto_method text)           -- what walseg.init_method = auto resolved to
RETURNS record
AS 'MODULE_PATHNAME', 'walseg_status'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- Creates up to n future segments now; returns how many it created. Creates files in pg_wal:
-- revoked from PUBLIC below, so superusers and the roles granted EXECUTE may call it.
CREATE FUNCTION walseg_prealloc(n int)
RETURNS int
AS 'MODULE_PATHNAME', 'walseg_prealloc'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

-- The create and write phases of `walseg bench` in a scratch directory inside pg_wal
-- (revoked from PUBLIC below). methods NULL means every init method but auto. Refused
-- (disk_full) unless pg_wal's filesystem has room for one segment per method plus
-- max_wal_size left for PostgreSQL's WAL; the message says what it needs and what is free.
CREATE FUNCTION walseg_bench(
    methods text[] DEFAULT NULL,
    segment_size bigint DEFAULT 16777216,
    n int DEFAULT 5,
    OUT method text,
    OUT phase text,                 -- create | write
    OUT samples int,                -- creations, or commits of 8kB (pwrite + fdatasync)
    OUT p10_us float8,              -- the statistic walseg.init_method = auto compares commits by
    OUT median_us float8,
    OUT p90_us float8,
    OUT p99_us float8,
    OUT max_us float8,
    OUT method_used text,           -- differs from method after a fallback
    OUT allocated_bytes bigint)     -- st_blocks * 512 of the last file right after its creation
                                    -- (write rows too: what the method reserved, before the commits)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walseg_bench'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL UNSAFE;

-- Filesystem facts of a directory (revoked from PUBLIC below; outside the data directory
-- also pg_read_server_files' privileges); relative paths are in the data directory. The two
-- probes that write files (fallocate, auto's) run only in pg_wal or below it, never in its
-- archive_status or summaries (PostgreSQL's own); elsewhere
-- fallocate_supported and auto_method are NULL and auto_reason says why.
CREATE FUNCTION walseg_fs_info(
    path text DEFAULT 'pg_wal',
    OUT directory text,
    OUT filesystem text,
    OUT mount_point text,
    OUT block_size bigint,
    OUT free_bytes bigint,
    OUT copy_on_write bool,
    OUT fallocate_supported bool,   -- NULL when it could not be tested
    OUT auto_method text,           -- what walseg.init_method = auto would pick here
    OUT auto_reason text)
RETURNS record
AS 'MODULE_PATHNAME', 'walseg_fs_info'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

-- PostgreSQL's file name of segment segno on timeline tli (for this wal_segment_size).
CREATE FUNCTION walseg_segment_name(tli int, segno bigint)
RETURNS text
AS 'MODULE_PATHNAME', 'walseg_segment_name'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

-- The strict inverse of walseg_segment_name.
CREATE FUNCTION walseg_parse_segment_name(
    name text,
    OUT timeline bigint,
    OUT segno bigint,
    OUT start_lsn pg_lsn)
RETURNS record
AS 'MODULE_PATHNAME', 'walseg_parse_segment_name'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

-- The functions that create files on the server are not for everyone, but by privilege, as
-- PostgreSQL's own (pg_ls_waldir, pg_switch_wal, ...) since version 10: no superuser check
-- in the C code, so `GRANT EXECUTE ON FUNCTION walseg_prealloc(int) TO ops` works, and
-- pg_dump keeps such grants.
REVOKE EXECUTE ON FUNCTION walseg_prealloc(int) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION walseg_bench(text[], bigint, int) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION walseg_fs_info(text) FROM PUBLIC;
