--
-- The server keeps working while segments are consumed, recycled by checkpoints, and
-- replaced by the preallocator: many segments of WAL, checkpoints in between, and every
-- committed row still there.
--
SELECT setting::bigint AS wal_segment_size FROM pg_settings WHERE name = 'wal_segment_size' \gset
SELECT segments_created AS created_before FROM walseg_status() \gset
SELECT pg_current_wal_insert_lsn() AS start_lsn \gset
-- The newest segment walseg made is still in the future now; PostgreSQL will write into it.
SELECT segno AS made_segno FROM walseg_parse_segment_name((SELECT last_segment FROM walseg_status())) \gset
SELECT floor((pg_current_wal_insert_lsn() - '0/0') / :wal_segment_size) < :made_segno AS in_future;

CREATE TABLE walseg_load (id int, pad text);
INSERT INTO walseg_load SELECT g, repeat(md5(g::text), 30) FROM generate_series(1, 20000) g;
CHECKPOINT;
INSERT INTO walseg_load SELECT g, repeat(md5(g::text), 30) FROM generate_series(20001, 40000) g;
SELECT pg_switch_wal() IS NOT NULL AS switched;
CHECKPOINT;
INSERT INTO walseg_load SELECT g, repeat(md5(g::text), 30) FROM generate_series(40001, 60000) g;
CHECKPOINT;
UPDATE walseg_load SET pad = upper(pad) WHERE id % 2 = 0;
CHECKPOINT;
INSERT INTO walseg_load SELECT g, repeat(md5(g::text), 30) FROM generate_series(60001, 100000) g;
CHECKPOINT;

-- At least twelve segments of WAL went by.
SELECT (pg_current_wal_insert_lsn() - :'start_lsn') / :wal_segment_size >= 12 AS many_segments;
SELECT count(*), count(DISTINCT id), sum(length(pad)) FROM walseg_load;
SELECT count(*) AS upper_rows FROM walseg_load WHERE pad = upper(pad) AND id % 2 = 0 AND id <= 60000;
SELECT wait_ready(3);
-- The segment walseg made was consumed: the insert position went past it. Whether newer
-- ones were made or recycled by the checkpointer into place first is PostgreSQL's timing.
SELECT floor((pg_current_wal_insert_lsn() - '0/0') / :wal_segment_size) > :made_segno AS consumed;
SELECT segments_created >= :created_before AS counted, failures FROM walseg_status();
SELECT count(*) AS wrong_size FROM pg_ls_waldir()
 WHERE name ~ '^[0-9A-F]{24}$' AND size <> :wal_segment_size;
SELECT count(*) AS leftovers FROM pg_ls_dir('pg_wal') f WHERE f LIKE 'walseg_scratch.%';
DROP TABLE walseg_load;
DROP TABLE walseg_t;
DROP FUNCTION wait_ready(int);
DROP FUNCTION wait_capped_by(text);
DROP FUNCTION wait_until(text);
DROP FUNCTION ready_ahead(int);
DROP EXTENSION walseg;
