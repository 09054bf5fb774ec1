--
-- Functions that create files on the server are revoked from PUBLIC and work for a role
-- granted EXECUTE, as PostgreSQL's own since version 10; the rest, and reading the
-- settings, are for everyone. walseg.init_method and friends are superuser-settable,
-- like PostgreSQL's wal_init_zero, unless granted.
--
CREATE ROLE regress_walseg_user;
SET ROLE regress_walseg_user;
SELECT walseg_prealloc(1);
SELECT * FROM walseg_bench(ARRAY['zero_write'], 1048576, 1);
SELECT * FROM walseg_fs_info();
SELECT walseg_segment_name(1, 1);
SELECT segno FROM walseg_parse_segment_name('000000010000000000000002');
SELECT worker_pid IS NOT NULL AS running FROM walseg_status();
SHOW walseg.init_method;
SHOW walseg.prealloc_segments;
SET walseg.init_method = sparse;
SET walseg.fallocate_fallback = error;
ALTER SYSTEM SET walseg.prealloc_segments = 1;
RESET ROLE;
-- GRANT EXECUTE lets the role call them (no superuser check of walseg's own refuses it).
GRANT EXECUTE ON FUNCTION walseg_prealloc(int) TO regress_walseg_user;
GRANT EXECUTE ON FUNCTION walseg_bench(text[], bigint, int) TO regress_walseg_user;
GRANT EXECUTE ON FUNCTION walseg_fs_info(text) TO regress_walseg_user;
SET ROLE regress_walseg_user;
SELECT walseg_prealloc(1) >= 0 AS prealloc_ran;
SELECT method, phase, samples FROM walseg_bench(ARRAY['zero_write'], 1048576, 1) ORDER BY phase;
SELECT directory, filesystem <> '' AS has_type FROM walseg_fs_info();
SELECT directory, filesystem <> '' AS has_type FROM walseg_fs_info('base');
-- Outside the data directory the facts need pg_read_server_files' privileges (as
-- pg_stat_file's); nothing is written there (the probes run only in pg_wal).
SELECT directory FROM walseg_fs_info('/');
SELECT directory FROM walseg_fs_info('../..');
RESET ROLE;
SELECT current_setting('data_directory') AS data_directory \gset
GRANT pg_read_server_files TO regress_walseg_user;
SET ROLE regress_walseg_user;
SELECT directory = :'data_directory' AS examined, auto_method IS NULL AS not_probed
  FROM walseg_fs_info(:'data_directory');
RESET ROLE;
REVOKE pg_read_server_files FROM regress_walseg_user;
-- REVOKE denies again.
REVOKE EXECUTE ON FUNCTION walseg_prealloc(int) FROM regress_walseg_user;
REVOKE EXECUTE ON FUNCTION walseg_bench(text[], bigint, int) FROM regress_walseg_user;
REVOKE EXECUTE ON FUNCTION walseg_fs_info(text) FROM regress_walseg_user;
SET ROLE regress_walseg_user;
SELECT walseg_prealloc(1);
SELECT * FROM walseg_bench(ARRAY['zero_write'], 1048576, 1);
SELECT * FROM walseg_fs_info();
RESET ROLE;
-- The privileges the extension script sets: no EXECUTE for PUBLIC on the three.
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'walseg')
 ORDER BY p.proname;
-- PostgreSQL 15's parameter privileges work for walseg's settings too.
GRANT SET ON PARAMETER walseg.init_method TO regress_walseg_user;
SET ROLE regress_walseg_user;
SET walseg.init_method = sparse;
SHOW walseg.init_method;
RESET walseg.init_method;
RESET ROLE;
REVOKE SET ON PARAMETER walseg.init_method FROM regress_walseg_user;
DROP ROLE regress_walseg_user;
