--
-- walseg's settings as PostgreSQL sees them: the entries of the library's table that the
-- extension uses, registered through DefineCustom*Variable (names, bounds, enum values, checks
-- and the long description from one source). The walseg tool's own settings are not
-- registered: SHOW would print values nothing inside PostgreSQL uses.
--
SELECT name, setting, unit, context, vartype, min_val, max_val, enumvals, boot_val
  FROM pg_settings WHERE name LIKE 'walseg.%' ORDER BY name;
SELECT name, extra_desc FROM pg_settings WHERE name LIKE 'walseg.%' ORDER BY name;

-- walseg_settings.conf, a file written for the walseg tool, is included into postgresql.conf:
-- PostgreSQL applies the settings it has and refuses the tool's (min_size, max_size) as names
-- under the reserved prefix; walseg_regress.conf gives walseg.fill_io_class a value PostgreSQL
-- refuses, so the default applies (and the preallocator's start line says so, which
-- run_regress.sh checks in the server log).
SELECT name, setting, unit, source, regexp_replace(sourcefile, '^.*/', '') AS file, sourceline
  FROM pg_settings WHERE name LIKE 'walseg.%' AND source <> 'default' ORDER BY name;
SELECT name, setting, regexp_replace(sourcefile, '^.*/', '') AS file, applied, error
  FROM pg_file_settings WHERE name LIKE 'walseg.%' ORDER BY seqno;
SHOW walseg.fill_io_class;
-- The tool's settings do not exist here, so nothing can show a value PostgreSQL does not use.
SHOW walseg.segment_size;
SHOW walseg.min_size;
SELECT current_setting('walseg.block_size', true) IS NULL AS not_registered;
SELECT count(*) AS tool_settings_listed FROM pg_settings
 WHERE name IN ('walseg.segment_size', 'walseg.recycle', 'walseg.io_method', 'walseg.wal_buffers');

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
SHOW walseg.fallocate_fallback;
BEGIN;
SET LOCAL walseg.init_method = glibc_emulation;
SHOW walseg.init_method;
COMMIT;
SHOW walseg.init_method;
SELECT set_config('walseg.init_method', 'sparse', false);
RESET ALL;
SHOW walseg.init_method;

--
-- Contexts: reload-only settings cannot be SET; the tool's settings cannot be set at all.
--
SET walseg.prealloc_segments = 2;
SET walseg.fill_io_class = idle;
SET walseg.Prealloc_Segments = 2;               -- names are case-insensitive: known, sighup
SET walseg.recycle = off;
SET walseg.segment_size = '16MB';

--
-- The "walseg" prefix is reserved: unknown names under it are errors, not placeholders.
--
SET walseg.no_such_setting = 1;
SHOW walseg.no_such_setting;
SELECT current_setting('walseg.no_such_setting', true) IS NULL AS missing;
ALTER SYSTEM SET walseg.no_such_setting = 1;
-- Other prefixes are not walseg's.
SET walseg_other.x = 'kept';
SHOW walseg_other.x;
RESET walseg_other.x;
