--
-- Failures, injected with the library's failpoints. run_regress.sh starts this instance with
--   WALSEG_FAILPOINTS='fsync=EIO@1*2;fallocate=ENOSPC@1;dir_fsync=EIO@1'
-- so in every server process the first two file fsyncs fail with EIO, the first fallocate
-- with ENOSPC and the first directory fsync with EIO. Expected (never PANIC): the
-- preallocator logs each failure at LOG, keeps it in its statistics and retries later;
-- walseg_prealloc() raises ERROR; no temporary file is left; nothing raises PANIC; the
-- server keeps working. (run_regress.sh also checks the server log for the LOG lines.)
--
CREATE EXTENSION walseg;

-- The preallocator's first fills fail; it reports and retries.
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN (SELECT failures >= 1 FROM walseg_status());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT worker_pid IS NOT NULL AS running, failures >= 1 AS failed,
       regexp_replace(regexp_replace(last_error, 'xlogtemp\.[0-9]+(\.[0-9]+)?', 'xlogtemp.PID'),
                      '[0-9A-F]{24}', 'SEGMENT', 'g') AS last_error
  FROM walseg_status();
SELECT count(*) AS temp_files FROM pg_ls_dir('pg_wal') f WHERE f LIKE 'xlogtemp.%';
-- It recovers by itself: the second fill fails too (5 s later), the third succeeds, but
-- the directory fsync after its rename fails: that segment stays (a backend may already
-- use it) and the failure is counted. Then it reaches its target.
DO $$
BEGIN
  FOR i IN 1..600 LOOP
    EXIT WHEN (SELECT segments_ahead >= 3 FROM walseg_status());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT segments_ahead, failures, regexp_replace(last_error, '[0-9A-F]{24}', 'SEGMENT', 'g') AS last_error
  FROM walseg_status();

-- walseg_prealloc in this backend: the failures are ERRORs naming the file and errno.
CREATE FUNCTION try_prealloc(n int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN CASE WHEN walseg_prealloc(n) > 0 THEN 'created' ELSE 'nothing to do' END;
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || regexp_replace(regexp_replace(regexp_replace(SQLERRM, '[0-9A-F]{24}', 'SEGMENT', 'g'),
                                                           '\.[0-9]+', '.PID', 'g'),
                                            '[0-9]+ bytes free on .*', 'N bytes free on FS');
END $$;
SELECT try_prealloc(8);                 -- fsync #1: EIO
SELECT try_prealloc(8);                 -- fsync #2: EIO
SET walseg.init_method = posix_fallocate;
SELECT try_prealloc(8);                 -- fallocate #1: ENOSPC, reported, never masked
SELECT count(*) AS temp_files FROM pg_ls_dir('pg_wal') f WHERE f LIKE 'xlogtemp.%';
-- fsync #3 succeeds; the directory fsync after the rename fails: as in the preallocator,
-- the segment stays and the failure is logged and counted, but the call succeeds.
SELECT try_prealloc(8);
SELECT failures, regexp_replace(last_error, '[0-9A-F]{24}', 'SEGMENT', 'g') AS last_error FROM walseg_status();
RESET walseg.init_method;
SELECT ready AS all_ready FROM (SELECT count(*) = 8 AS ready FROM pg_ls_waldir() w,
  (SELECT floor((pg_current_wal_insert_lsn() - '0/0') / setting::numeric)::bigint AS seg
     FROM pg_settings WHERE name = 'wal_segment_size') pos, generate_series(1, 8) k
  WHERE w.name = walseg_segment_name(1, pos.seg + k)) x;

-- And the server works throughout.
CREATE TABLE failure_t AS SELECT g AS id FROM generate_series(1, 1000) g;
SELECT pg_switch_wal() IS NOT NULL AS switched;
SELECT count(*) FROM failure_t;
SELECT count(*) AS wrong_size FROM pg_ls_waldir()
 WHERE name ~ '^[0-9A-F]{24}$'
   AND size <> (SELECT setting::bigint FROM pg_settings WHERE name = 'wal_segment_size');
DROP TABLE failure_t;
DROP FUNCTION try_prealloc(int);
DROP EXTENSION walseg;
