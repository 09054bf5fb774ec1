--
-- The extension installs and its objects are what walseg--1.0.sql declares.
--
CREATE EXTENSION walseg;
SELECT extname, extversion, extrelocatable FROM pg_extension WHERE extname = 'walseg';
SELECT p.proname, pg_get_function_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result, p.provolatile, p.proisstrict
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'walseg')
 ORDER BY p.proname;
-- The module was loaded at server start, so the preallocator runs (it starts once the
-- server accepts connections, so give it up to 30 s).
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN (SELECT worker_pid IS NOT NULL FROM walseg_status());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT worker_pid IS NOT NULL AS running, failures FROM walseg_status();
