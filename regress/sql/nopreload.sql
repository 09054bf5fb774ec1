--
-- walseg loaded by CREATE EXTENSION only, not by shared_preload_libraries: the settings
-- PostgreSQL uses exist with the configuration's values; the tool's setting in the
-- configuration (walseg.segment_size) is dropped, with PostgreSQL's warning that the prefix
-- is now reserved; the functions that need no preallocator work, and walseg_status() says
-- why there is none.
--
CREATE EXTENSION walseg;
SELECT walseg_segment_name(1, 2);
SELECT name, setting, context FROM pg_settings WHERE name LIKE 'walseg.%' ORDER BY name;
SHOW walseg.segment_size;
SHOW walseg.prealloc_segments;
SELECT extra_desc FROM pg_settings WHERE name = 'walseg.prealloc_segments';
SET walseg.segment_size = '16MB';
SET walseg.init_method = sparse;
SHOW walseg.init_method;
SET walseg.no_such_setting = 1;
-- walseg_status() answers with its reason instead of an ERROR; nothing else is known.
\x on
SELECT * FROM walseg_status();
\x off
-- walseg_prealloc works without the preallocator (no statistics are kept).
SELECT walseg_prealloc(2) >= 0 AS ran;
SELECT walseg_prealloc(2) AS created_again;
DROP EXTENSION walseg;
