--
-- Functions that touch the filesystem are for superusers; the rest, and reading the
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
-- PostgreSQL 15's parameter privileges work for walseg's settings too.
GRANT SET ON PARAMETER walseg.init_method TO regress_walseg_user;
SET ROLE regress_walseg_user;
SET walseg.init_method = sparse;
SHOW walseg.init_method;
RESET walseg.init_method;
RESET ROLE;
REVOKE SET ON PARAMETER walseg.init_method FROM regress_walseg_user;
DROP ROLE regress_walseg_user;
