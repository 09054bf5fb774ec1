--
-- Case C18 through the extension's settings: units are case-sensitive, a number without a
-- unit is in the base unit (walseg.segment_size: kB, walseg.min_size/max_size: MB,
-- walseg.block_size: bytes), fractions are rounded, and out-of-range values are rejected,
-- never wrapped. ALTER SYSTEM checks a value exactly as the server will when it reads it.
--
ALTER SYSTEM SET walseg.segment_size = '16MB';          -- accepted: 16777216 bytes
ALTER SYSTEM SET walseg.segment_size = '16 MB';         -- accepted: space allowed
ALTER SYSTEM SET walseg.segment_size = 16384;           -- accepted: no unit = kB
ALTER SYSTEM SET walseg.segment_size = '16mb';
ALTER SYSTEM SET walseg.segment_size = '16M';
ALTER SYSTEM SET walseg.segment_size = '16 Mb';
ALTER SYSTEM SET walseg.segment_size = '16KB';
ALTER SYSTEM SET walseg.segment_size = 16777216;        -- bytes meant: 16 GB in kB
ALTER SYSTEM SET walseg.segment_size = 4294967296;      -- beyond a 32-bit integer
ALTER SYSTEM SET walseg.segment_size = '1.5MB';         -- 1536kB, not a power of two
ALTER SYSTEM SET walseg.segment_size = '3MB';
ALTER SYSTEM SET walseg.segment_size = 0;
ALTER SYSTEM SET walseg.segment_size = '-16MB';
ALTER SYSTEM SET walseg.segment_size = '2TB';
ALTER SYSTEM SET walseg.segment_size = '1GB';           -- accepted: the upper bound
ALTER SYSTEM SET walseg.block_size = 8;                 -- kB meant: 8 bytes
ALTER SYSTEM SET walseg.block_size = '8kB';
ALTER SYSTEM SET walseg.max_size = '1mb';
ALTER SYSTEM SET walseg.max_size = 1;                   -- below the minimum (2MB)
ALTER SYSTEM SET walseg.prealloc_segments = '3MB';      -- a unit on a plain number
ALTER SYSTEM SET walseg.prealloc_segments = 1025;
ALTER SYSTEM SET walseg.init_method = 'none';
-- What was written to postgresql.auto.conf: the value text exactly as given.
SELECT name, setting FROM pg_file_settings
 WHERE name LIKE 'walseg.%' AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY name;
ALTER SYSTEM RESET walseg.segment_size;
ALTER SYSTEM RESET walseg.block_size;

--
-- A reload applies sighup settings, with fractions rounded as PostgreSQL rounds them:
-- 4.6 segments -> 5, 1.5GB -> 1536MB. The preallocator picks up the new target.
--
ALTER SYSTEM SET walseg.prealloc_segments = 4.6;
ALTER SYSTEM SET walseg.min_size = '1.5GB';
ALTER SYSTEM SET walseg.max_size = 4096;                -- no unit: MB
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SHOW walseg.prealloc_segments;
SHOW walseg.min_size;
SHOW walseg.max_size;
SELECT setting, unit, source, regexp_replace(sourcefile, '^.*/', '') AS file
  FROM pg_settings WHERE name = 'walseg.min_size';
DO $$
BEGIN
  FOR i IN 1..300 LOOP      -- up to 30 s for the worker to reload and top up
    EXIT WHEN (SELECT target_ahead = 5 AND segments_ahead = 5 FROM walseg_status());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT target_ahead, segments_ahead FROM walseg_status();
ALTER SYSTEM RESET walseg.prealloc_segments;
ALTER SYSTEM RESET walseg.min_size;
ALTER SYSTEM RESET walseg.max_size;
ALTER SYSTEM RESET walseg.init_method;
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SHOW walseg.prealloc_segments;
SHOW walseg.min_size;
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN (SELECT target_ahead = 3 FROM walseg_status());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT target_ahead FROM walseg_status();
