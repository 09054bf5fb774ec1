--
-- The background preallocator keeps walseg.prealloc_segments (3, from the included file)
-- future segments in pg_wal, each of wal_segment_size bytes, on the insertion timeline.
--
SELECT setting::bigint AS wal_segment_size FROM pg_settings WHERE name = 'wal_segment_size' \gset

-- How many of the n segments after the insert position exist with the right size.
CREATE FUNCTION ready_ahead(n int) RETURNS int LANGUAGE sql AS $$
  SELECT count(*)::int
    FROM (SELECT floor((pg_current_wal_insert_lsn() - '0/0') / setting::numeric)::bigint AS seg,
                 setting::bigint AS size,
                 (SELECT timeline_id FROM pg_control_checkpoint()) AS tli
            FROM pg_settings WHERE name = 'wal_segment_size') pos
    CROSS JOIN generate_series(1, n) k
    JOIN pg_ls_waldir() w ON w.name = walseg_segment_name(pos.tli, pos.seg + k)
   WHERE w.size = pos.size;
$$;
-- Waits (up to 30 s) until n segments are ready ahead; true if they are.
CREATE FUNCTION wait_until(cond text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
  ok bool;
BEGIN
  FOR i IN 1..300 LOOP
    EXECUTE 'SELECT ' || cond INTO ok;
    IF ok THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.1);
  END LOOP;
  RETURN false;
END $$;
CREATE FUNCTION wait_ready(n int) RETURNS bool LANGUAGE sql
  AS $$ SELECT wait_until(format('ready_ahead(%s) = %s', n, n)) $$;

SELECT state, worker_pid IS NOT NULL AS running, target_ahead, target_capped_by FROM walseg_status();
SELECT wait_ready(3);

-- A switch into a segment the worker had ready is no miss.
SELECT misses AS misses_before FROM walseg_status() \gset
SELECT pg_switch_wal() IS NOT NULL AS switched;
SELECT wait_ready(3);
SELECT misses - :misses_before AS new_misses FROM walseg_status();

-- After a switch the insert position is in the next segment; the worker tops up again.
SELECT pg_switch_wal() IS NOT NULL AS switched;
SELECT wait_ready(3);
CREATE TABLE walseg_t (id int, pad text);
DO $$
BEGIN
  FOR i IN 1..5 LOOP
    INSERT INTO walseg_t SELECT g, repeat('x', 100) FROM generate_series(1, 100) g;
    PERFORM pg_switch_wal();
  END LOOP;
END $$;
SELECT wait_ready(3);
SELECT segments_ahead >= 3 AS ahead, segments_created >= 3 AS created, failures, last_error,
       created_by_method ? 'zero_write' AS by_zero_write, avg_create_ms > 0 AS timed
  FROM walseg_status();

-- Every segment file in pg_wal has the segment size; no temporary file is left.
SELECT count(*) AS wrong_size FROM pg_ls_waldir()
 WHERE name ~ '^[0-9A-F]{24}$' AND size <> :wal_segment_size;

-- walseg_prealloc creates further segments now, beyond the worker's target.
SELECT walseg_prealloc(6) AS created;
SELECT ready_ahead(6);
SELECT walseg_prealloc(6) AS created_again;     -- all present: nothing to do
SELECT segments_created >= 6 AS counted FROM walseg_status();

-- Another init method, set for this session, is used by walseg_prealloc.
SET walseg.init_method = sparse;
SELECT walseg_prealloc(7) AS created;
SELECT created_by_method ? 'sparse' AS by_sparse FROM walseg_status();
SET walseg.init_method = posix_fallocate;
SELECT walseg_prealloc(8) AS created;
SELECT created_by_method ? 'posix_fallocate' OR created_by_method ? 'zero_write' AS by_fallocate
  FROM walseg_status();
RESET walseg.init_method;
SELECT ready_ahead(8);
-- auto is resolved once for pg_wal and kept for every process: the decision is logged once
-- (run_regress.sh counts the lines), however many calls use it.
SET walseg.init_method = auto;
SELECT walseg_prealloc(9) >= 0 AS ran, walseg_prealloc(10) >= 0 AS ran_again;
SELECT auto_method IN ('zero_write', 'posix_fallocate', 'glibc_emulation', 'sparse') AS decided
  FROM walseg_status();
RESET walseg.init_method;

--
-- The horizon: never beyond max_wal_size's worth of segments after the redo pointer.
-- With max_wal_size = 32MB (two segments) right after a checkpoint, at most one.
--
ALTER SYSTEM SET max_wal_size = '32MB';
SELECT pg_reload_conf();
SELECT pg_switch_wal() IS NOT NULL AS switched;
CHECKPOINT;
SELECT pg_sleep(0.5);
SHOW max_wal_size;
SELECT walseg_prealloc(10) AS created_beyond_horizon;
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN (SELECT target_ahead = 1 FROM walseg_status());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT target_ahead, target_capped_by FROM walseg_status();
ALTER SYSTEM RESET max_wal_size;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SHOW max_wal_size;
SELECT wait_ready(3);
SELECT failures FROM walseg_status();

--
-- The other bounds of the target, from PostgreSQL's recycle horizon (XLOGfileslop): the
-- checkpoint distance, that is the larger of the WAL written since the redo pointer and the
-- estimate of a checkpoint cycle's WAL (the worker has seen the redo pointer move at the
-- CHECKPOINT above, after a few segments' worth), never below min_wal_size. So right after a
-- checkpoint, even with min_wal_size = 32MB (one segment after the redo segment), the target
-- stays walseg.prealloc_segments (it fell to min_wal_size's one segment before: PostgreSQL's
-- own recycling at that checkpoint keeps a cycle's worth). With a target beyond the
-- checkpoint distance, that distance caps it.
--
CREATE FUNCTION wait_capped_by(what text) RETURNS bool LANGUAGE sql
  AS $$ SELECT wait_until(format('(SELECT target_capped_by = %L FROM walseg_status())', what)) $$;
ALTER SYSTEM SET min_wal_size = '32MB';
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SELECT pg_switch_wal() IS NOT NULL AS switched;
CHECKPOINT;
SELECT pg_sleep(0.5);
SELECT wait_ready(3);
SELECT target_ahead, target_capped_by FROM walseg_status();
ALTER SYSTEM SET walseg.prealloc_segments = 60;
SELECT pg_reload_conf();
SELECT wait_capped_by('checkpoint distance');
SELECT target_ahead > 3 AND target_ahead < 60 AS capped_between, target_capped_by FROM walseg_status();
ALTER SYSTEM RESET walseg.prealloc_segments;
ALTER SYSTEM RESET min_wal_size;
SELECT pg_reload_conf();
SELECT wait_capped_by('walseg.prealloc_segments');

--
-- Misses: with walseg.prealloc_segments = 0 the worker makes nothing, so once the segments
-- already there (made or recycled ahead) are used up, PostgreSQL makes the next ones itself,
-- and the worker counts each.
--
CREATE TEMP TABLE misses_before AS SELECT misses FROM walseg_status();
ALTER SYSTEM SET walseg.prealloc_segments = 0;
SELECT pg_reload_conf();
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN (SELECT target_ahead = 0 FROM walseg_status());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT target_ahead, target_capped_by FROM walseg_status();
-- Switch until the next segment is missing, then into three segments nobody prepared,
-- waiting in between so that the worker's looks see each one missing first.
DO $$
BEGIN
  FOR i IN 1..200 LOOP
    EXIT WHEN ready_ahead(1) = 0;
    INSERT INTO walseg_t VALUES (i, 'x');
    PERFORM pg_switch_wal();
  END LOOP;
  FOR i IN 1..3 LOOP
    PERFORM pg_sleep(0.3);
    INSERT INTO walseg_t VALUES (i, 'y');
    PERFORM pg_switch_wal();
  END LOOP;
END $$;
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN (SELECT s.misses >= b.misses + 3 FROM walseg_status() s, misses_before b);
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT s.misses - b.misses AS new_misses FROM walseg_status() s, misses_before b;
ALTER SYSTEM RESET walseg.prealloc_segments;
SELECT pg_reload_conf();
SELECT wait_ready(3);
SELECT state, target_capped_by, failures FROM walseg_status();
