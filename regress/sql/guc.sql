--
-- walseg's settings as PostgreSQL sees them: the library's table registered through
-- DefineCustom*Variable (names, units, bounds, enum values and checks from one source).
--
SELECT name, setting, unit, context, vartype, min_val, max_val, enumvals, boot_val
  FROM pg_settings WHERE name LIKE 'walseg.%' ORDER BY name;

-- Values read from walseg_settings.conf, a file written for the walseg tool and included
-- into postgresql.conf: '160 MB' (space before the unit) means 160MB in both.
SELECT name, setting, unit, source, regexp_replace(sourcefile, '^.*/', '') AS file, sourceline
  FROM pg_settings WHERE name LIKE 'walseg.%' AND source <> 'default' ORDER BY name;
SHOW walseg.min_size;
SHOW walseg.max_size;
SHOW walseg.segment_size;
SHOW walseg.block_size;
SHOW walseg.wal_buffers;

--
-- SET on the settings a superuser may change per session.
--
SET walseg.init_method = posix_fallocate;
SHOW walseg.init_method;
SET walseg.init_method = 'SPARSE';              -- enum values are case-insensitive
SHOW walseg.init_method;
SET walseg.init_method = auto;
SHOW walseg.init_method;
-- Refused inside PostgreSQL: these make files shorter than the segment size.
SET walseg.init_method = none;
SET walseg.init_method = fallocate_keep_size;
SET walseg.init_method = zero_fill;             -- no such method
SHOW walseg.init_method;                        -- still auto
RESET walseg.init_method;
SHOW walseg.init_method;
SET walseg.fallocate_fallback = error;
SHOW walseg.fallocate_fallback;
SET walseg.fallocate_fallback = posix_fallocate; -- not a fallback
RESET walseg.fallocate_fallback;
SET walseg.recycle = of;                        -- a unique prefix of "off"
SHOW walseg.recycle;
SET walseg.recycle = o;                         -- ambiguous
RESET walseg.recycle;
SHOW walseg.recycle;
BEGIN;
SET LOCAL walseg.init_method = glibc_emulation;
SHOW walseg.init_method;
COMMIT;
SHOW walseg.init_method;
SELECT set_config('walseg.init_method', 'sparse', false);
RESET ALL;
SHOW walseg.init_method;

--
-- Contexts: reload-only and start-only settings cannot be SET.
--
SET walseg.prealloc_segments = 2;
SET walseg.min_size = '1GB';
SET walseg.segment_size = '16MB';
SET walseg.io_method = io_uring;

--
-- The "walseg" prefix is reserved: unknown names under it are errors, not placeholders.
--
SET walseg.no_such_setting = 1;
SHOW walseg.no_such_setting;
SELECT current_setting('walseg.no_such_setting', true) IS NULL AS missing;
ALTER SYSTEM SET walseg.no_such_setting = 1;
SET walseg.Segment_Size = '16MB';               -- names are case-insensitive: known, postmaster
-- Other prefixes are not walseg's.
SET walseg_other.x = 'kept';
SHOW walseg_other.x;
RESET walseg_other.x;
