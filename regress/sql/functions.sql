--
-- The SQL functions with good and bad input (the superuser's view; see permissions).
--
SELECT setting AS wal_segment_size FROM pg_settings WHERE name = 'wal_segment_size' \gset

-- walseg_segment_name: PostgreSQL's names (16MB segments: 256 per 4 GiB xlogid).
SELECT walseg_segment_name(1, 0) AS seg0, walseg_segment_name(1, 1) AS seg1,
       walseg_segment_name(1, 255) AS seg255, walseg_segment_name(1, 256) AS seg256,
       walseg_segment_name(2147483647, 4096) AS big_tli;
-- The same names as PostgreSQL's own pg_walfile_name for LSNs inside a segment.
SELECT lsn, pg_walfile_name(lsn) = walseg_segment_name(1, floor((lsn - '0/0') / :wal_segment_size)::bigint) AS same
  FROM (VALUES ('0/1000001'::pg_lsn), ('0/FFFFFFF'), ('1/0000001'), ('A/12345678')) v(lsn);
-- Bad input.
SELECT walseg_segment_name(0, 1);
SELECT walseg_segment_name(-1, 1);
SELECT walseg_segment_name(1, -1);
SELECT walseg_segment_name(1, 9223372036854775807);
SELECT walseg_segment_name(NULL, 1) IS NULL AS null_in_null_out;

-- walseg_parse_segment_name: the strict inverse.
SELECT * FROM walseg_parse_segment_name('000000010000000000000001');
SELECT * FROM walseg_parse_segment_name('0000000A00000001000000FF');
SELECT * FROM walseg_parse_segment_name(walseg_segment_name(7, 123456789));
SELECT name, (SELECT segno FROM walseg_parse_segment_name(name)) AS segno
  FROM (SELECT walseg_segment_name(1, s) AS name FROM generate_series(250, 260) s) v;
-- Bad input: only exact segment names are segments.
SELECT * FROM walseg_parse_segment_name('00000001000000000000001');     -- 23 characters
SELECT * FROM walseg_parse_segment_name('000000010000000000000001 ');   -- trailing space
SELECT * FROM walseg_parse_segment_name('00000001000000000000000a');    -- lower case
SELECT * FROM walseg_parse_segment_name('000000000000000000000001');    -- timeline 0
SELECT * FROM walseg_parse_segment_name('000000010000000000000100');    -- low part >= 256
SELECT * FROM walseg_parse_segment_name('000000010000000000000001.partial');
SELECT * FROM walseg_parse_segment_name('00000002.history');
SELECT * FROM walseg_parse_segment_name('000000010000000000000001.00000028.backup');
SELECT * FROM walseg_parse_segment_name('xlogtemp.123');
SELECT * FROM walseg_parse_segment_name('');

-- walseg_fs_info: facts of pg_wal's filesystem and what auto would pick there. The
-- values depend on the machine, so only their shape is shown.
SELECT directory, filesystem <> '' AS has_type, block_size >= 512 AS block_size_ok,
       free_bytes > 0 AS has_free, fallocate_supported IS NOT NULL AS fallocate_tested,
       auto_method IN ('zero_write', 'posix_fallocate', 'glibc_emulation', 'sparse') AS auto_usable,
       auto_reason LIKE '%fastest commits%' AS reason_given
  FROM walseg_fs_info();
SELECT directory, filesystem <> '' AS has_type FROM walseg_fs_info('base');
-- The probes write files, so they run only in pg_wal or below it: 'base' gets the facts only.
SELECT directory, fallocate_supported IS NULL AS not_tested, auto_method IS NULL AS not_probed,
       auto_reason FROM walseg_fs_info('base');
-- Nor in PostgreSQL's own subdirectories of pg_wal: archive_status is the archiver's queue.
SELECT directory, auto_method IS NOT NULL AS probed, fallocate_supported IS NULL AS not_tested, auto_reason
  FROM walseg_fs_info('pg_wal/archive_status');
SELECT * FROM walseg_fs_info('/nonexistent/walseg');
SELECT * FROM walseg_fs_info('PG_VERSION');
SELECT * FROM walseg_fs_info('');
SELECT walseg_fs_info(NULL) IS NULL AS null_in_null_out;

-- walseg_bench: one row per method and phase.
SELECT method, phase, samples, median_us > 0 AS timed,
       p10_us <= median_us AND median_us <= max_us AS ordered, method_used
  FROM walseg_bench(ARRAY['zero_write', 'Sparse'], 1048576, 2) ORDER BY phase, method;
-- A zero-filled segment is allocated in full on every filesystem.
SELECT method, allocated_bytes >= 1048576 AS fully_allocated
  FROM walseg_bench(ARRAY['zero_write'], 1048576, 1) WHERE phase = 'create';
-- The write rows' allocation is taken before the commits: a sparse file reserved little, though
-- its 1MB of commits then filled it (the new-user trial read that as the method's).
SELECT method, phase, allocated_bytes < 1048576 AS reserved_before_commits
  FROM walseg_bench(ARRAY['sparse'], 1048576, 1) ORDER BY phase;
SELECT count(*) AS rows, count(DISTINCT method) AS methods FROM walseg_bench(NULL, 1048576, 1);
-- Bad input.
SELECT * FROM walseg_bench(ARRAY[]::text[]);
SELECT * FROM walseg_bench(ARRAY['auto']);
SELECT * FROM walseg_bench(ARRAY['zero_fill']);
SELECT * FROM walseg_bench(ARRAY['zero_write', NULL]);
SELECT * FROM walseg_bench(ARRAY['zero_write', 'ZERO_WRITE']);
SELECT * FROM walseg_bench(ARRAY['zero_write'], 3145728);
SELECT * FROM walseg_bench(ARRAY['zero_write'], 0);
SELECT * FROM walseg_bench(ARRAY['zero_write'], 2147483648);
SELECT * FROM walseg_bench(ARRAY['zero_write'], NULL);
SELECT * FROM walseg_bench(ARRAY['zero_write'], 1048576, 0);
SELECT * FROM walseg_bench(ARRAY['zero_write'], 1048576, 1001);
-- n and segment_size are each in range, but together too much work for one call.
SELECT * FROM walseg_bench(NULL, 1073741824, 20);
-- Free space first: what the bench holds at once (one segment per method) plus max_wal_size
-- left for PostgreSQL's WAL must be free, or it refuses, saying how much it needs (the free
-- space varies, so it is shown as F).
-- A new connection sees the reloaded value: the postmaster reads the file on SIGHUP before it
-- forks the next backend, while this backend would only at some later command (a sleep guessed).
ALTER SYSTEM SET max_wal_size = '1000TB';
SELECT pg_reload_conf();
\c
SHOW max_wal_size;
DO $$
BEGIN
  PERFORM walseg_bench(ARRAY['zero_write', 'sparse'], 16777216, 1);
EXCEPTION WHEN disk_full THEN
  RAISE NOTICE 'disk_full: %', regexp_replace(SQLERRM, 'only [0-9]+ MB', 'only F MB');
END $$;
-- walseg_fs_info()'s probes keep the same room (break-it round 22: they filled a small pg_wal).
SELECT fallocate_supported IS NULL AS no_test, auto_method IS NULL AS no_method,
       regexp_replace(auto_reason, 'has [0-9]+ MB free', 'has F MB free') AS auto_reason
  FROM walseg_fs_info('pg_wal');
ALTER SYSTEM RESET max_wal_size;
SELECT pg_reload_conf();
\c
SHOW max_wal_size;
SELECT count(*) AS rows FROM walseg_bench(ARRAY['zero_write'], 1048576, 1);
-- A canceled bench stops promptly and cleans up.
SET statement_timeout = '200ms';
SELECT * FROM walseg_bench(NULL, 16777216, 100);
RESET statement_timeout;
-- Nothing is left behind by benches, probes or failures.
SELECT count(*) AS leftovers FROM pg_ls_dir('pg_wal') f
 WHERE f LIKE 'walseg_scratch.%' OR f LIKE 'xlogtemp.%';

-- walseg_prealloc: bad input (good input is in the preallocator test).
SELECT walseg_prealloc(-1);
SELECT walseg_prealloc(1025);
SELECT walseg_prealloc(NULL) IS NULL AS null_in_null_out;
SELECT walseg_prealloc(0);

-- walseg_status() declared with other columns than the library returns (a catalog from an
-- older walseg--1.0.sql) is refused, not filled with values of other types.
CREATE FUNCTION walseg_status_as_declared_before(OUT worker_pid int, OUT segments_ahead int)
RETURNS record AS '$libdir/walseg', 'walseg_status' LANGUAGE C;
SELECT * FROM walseg_status_as_declared_before();
DROP FUNCTION walseg_status_as_declared_before();
