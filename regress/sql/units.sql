--
-- Case C18 through the extension's settings. PostgreSQL registers only the walseg settings
-- the extension uses, and none of them has a unit: the tool's sizes (walseg.segment_size,
-- min_size, max_size, block_size, wal_buffers) are not PostgreSQL settings, so ALTER SYSTEM
-- refuses them by name, whatever the value. (The tool's units are tested by
-- guc_definitions_test and tool_options_test.) A plain number takes no unit, fractions are
-- rounded, out-of-range values are rejected, never wrapped, and ALTER SYSTEM checks a value
-- exactly as the server will when it reads it.
--
ALTER SYSTEM SET walseg.segment_size = '16MB';
ALTER SYSTEM SET walseg.block_size = '8kB';
ALTER SYSTEM SET walseg.max_size = '1GB';
ALTER SYSTEM SET walseg.prealloc_segments = '3MB';      -- a unit on a plain number
ALTER SYSTEM SET walseg.prealloc_segments = 1025;
ALTER SYSTEM SET walseg.prealloc_segments = -1;
ALTER SYSTEM SET walseg.prealloc_segments = 4294967299; -- beyond 32 bits: not wrapped to 3
ALTER SYSTEM SET walseg.init_method = 'none';
ALTER SYSTEM SET walseg.fill_io_class = 'IDLE';         -- accepted: enums ignore case
-- What was written to postgresql.auto.conf: the value text exactly as given.
SELECT name, setting FROM pg_file_settings
 WHERE name LIKE 'walseg.%' AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY name;
ALTER SYSTEM RESET walseg.fill_io_class;

--
-- A reload applies sighup settings, with fractions rounded as PostgreSQL rounds them:
-- 4.6 segments -> 5. The preallocator picks up the new target.
--
ALTER SYSTEM SET walseg.prealloc_segments = 4.6;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SHOW walseg.prealloc_segments;
SELECT setting, unit, source, regexp_replace(sourcefile, '^.*/', '') AS file
  FROM pg_settings WHERE name = 'walseg.prealloc_segments';
DO $$
BEGIN
  FOR i IN 1..300 LOOP      -- up to 30 s for the worker to reload and top up
    EXIT WHEN (SELECT target_ahead = 5 AND segments_ahead = 5 FROM walseg_status());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT target_ahead, segments_ahead FROM walseg_status();
ALTER SYSTEM RESET walseg.prealloc_segments;
ALTER SYSTEM RESET walseg.init_method;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SHOW walseg.prealloc_segments;
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN (SELECT target_ahead = 3 FROM walseg_status());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT target_ahead FROM walseg_status();
