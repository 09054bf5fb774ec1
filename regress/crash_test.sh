#!/usr/bin/env bash
# ctest test `pg_crash`: crash safety of PostgreSQL with the walseg preallocator.
#
#   bash regress/crash_test.sh BUILD_DIR [PG_CONFIG] [ROUNDS]     (ROUNDS default 10)
#
# Method: a temporary instance with 1 MB WAL segments (so the load crosses many of them),
# max_wal_size 32MB (so checkpoints recycle segments while the preallocator adds new ones)
# and the preallocator on, with a different walseg.init_method and prealloc_segments each
# round. Per round:
#   1. start the server; 6 clients run INSERTs of ~4 kB rows, one row per transaction, and
#      one client inserts 2000-row transactions; every commit the server acknowledged is
#      printed by psql (RETURNING) into an acknowledgement file;
#   2. after a random 1.5-4.5 s, `pg_ctl stop -m immediate` (a crash: no checkpoint, no
#      flush of anything not yet flushed);
#   3. with the server down, every file in pg_wal with a segment name must have exactly the
#      segment size (a final name only ever names a complete file);
#   4. restart (crash recovery) and check that every acknowledged transaction is present
#      with all its rows, that no transaction is present in part (atomicity), and that the
#      preallocator is running again without failures;
#   5. pg_waldump over the whole range of pg_wal (oldest segment to the flush position)
#      reports no error; wal_keep_size keeps that range across the crash point.
# The server log must contain no PANIC and no preallocator failure. Exits 0 when every
# round passes, 1 otherwise (the work directory is kept for inspection).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build_dir="$(cd "${1:?usage: crash_test.sh BUILD_DIR [PG_CONFIG] [ROUNDS]}" && pwd)"
pg_config="${2:-pg_config}"
rounds="${3:-10}"
bindir="$("$pg_config" --bindir)"
methods=(zero_write posix_fallocate glibc_emulation sparse auto)
big_rows=2000
small_clients=6

# shellcheck source=pg_common.sh
source "$here/pg_common.sh"
walseg_ensure_installed "$build_dir" "$pg_config"
walseg_as_user

work="$(mktemp -d /tmp/walseg_crash.XXXXXX)"
if [ "$(id -u)" -eq 0 ]; then chown "$WALSEG_RUN_USER" "$work"; fi
data="$work/data"
log="$work/server.log"
port=55470   # the socket lives in $work, so the port cannot clash with another server

# From "/": the unprivileged user may not be able to enter the directory ctest runs in (a
# clone under a mode-0700 directory), and every path given to these commands is absolute.
run() { (cd / && "${AS_USER[@]}" "$@"); }
psql_() { run "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d postgres "$@"; }
fail() { echo "crash_test: FAILED: $*"; echo "---- end of $log"; tail -n 30 "$log"; echo "work directory kept: $work"; exit 1; }

cleanup() {
  if [ -f "$data/postmaster.pid" ]; then run "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true; fi
  jobs -p | xargs -r kill 2>/dev/null || true
}
trap cleanup EXIT

run "$bindir/initdb" -D "$data" -A trust -U postgres --no-locale --wal-segsize=1 -N >/dev/null
cat >> "$data/postgresql.conf" <<EOF
shared_preload_libraries = 'walseg'
port = $port
listen_addresses = ''
unix_socket_directories = '$work'
max_wal_size = '32MB'
min_wal_size = '4MB'
# Keeps the WAL around the crash point, so that pg_waldump reads across it.
wal_keep_size = '48MB'
checkpoint_timeout = '30s'
fsync = on
synchronous_commit = on
full_page_writes = on
include_if_exists 'walseg_round.conf'
EOF
segment_bytes=$((1024 * 1024))

# Starts the server and (unless given "nowait") waits until the preallocator is up.
start_server() {
  run "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 120 start >/dev/null || fail "server did not start"
  [ "${1:-}" = nowait ] && return 0
  for _ in $(seq 1 300); do
    [ "$(psql_ -c "SELECT worker_pid IS NOT NULL FROM walseg_status()")" = t ] && return 0
    sleep 0.1
  done
  fail "the walseg preallocator did not start"
}

# One client: writes acknowledgement lines "round writer txn rows" to $2 until its
# connection breaks. Writer 0 inserts $big_rows rows per transaction, the others one.
client() {
  local w="$1" ack="$2"
  awk -v r="$round" -v w="$w" -v big="$big_rows" -v q="'" 'BEGIN {
    for (i = 1; ; i++)
      if (w == 0)
        printf "WITH x AS (INSERT INTO t SELECT %d, 0, %d, j, md5(random()::text) FROM generate_series(1, %d) j RETURNING 1) SELECT %s%d 0 %d %s || count(*) FROM x;\n", r, i, big, q, r, i, q
      else
        printf "INSERT INTO t SELECT %d, %d, %d, 1, (SELECT string_agg(md5(random()::text), %s%s) FROM generate_series(1, 128)) RETURNING %s%d %d %d 1%s;\n", r, w, i, q, q, q, r, w, i, q
  }' | psql_ >"$ack" 2>/dev/null || true
}

start_server nowait
psql_ -c "CREATE EXTENSION walseg" \
      -c "CREATE TABLE t (r int, w int, i int, j int, pad text)" \
      -c "CREATE INDEX ON t (r, w, i)" \
      -c "CREATE TABLE ack (r int, w int, i int, n int)"
run "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null

for round in $(seq 1 "$rounds"); do
  method="${methods[$(((round - 1) % ${#methods[@]}))]}"
  ahead=$((2 + round % 5))
  # Odd rounds: PostgreSQL removes old segments instead of recycling them, so every new
  # segment is the preallocator's (or PostgreSQL's own, if the preallocator lags).
  recycle=$([ $((round % 2)) -eq 1 ] && echo off || echo on)
  printf "walseg.init_method = '%s'\nwalseg.prealloc_segments = %d\nwal_recycle = %s\n" \
    "$method" "$ahead" "$recycle" > "$work/round.conf"
  run cp "$work/round.conf" "$data/walseg_round.conf"
  start_server
  start_lsn="$(psql_ -c "SELECT pg_current_wal_insert_lsn()")"

  # 1-2. load, then crash at a random moment
  pids=()
  for w in $(seq 0 "$small_clients"); do
    client "$w" "$work/ack.$round.$w" &
    pids+=($!)
  done
  sleep "$(awk -v s="$RANDOM" 'BEGIN { printf "%.2f", 1.5 + (s % 300) / 100 }')"
  made="$(psql_ -c "SELECT segments_created FROM walseg_status()" 2>/dev/null || echo '?')"
  run "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null
  wait "${pids[@]}" 2>/dev/null || true
  acked="$(cat "$work"/ack."$round".* | wc -l)"

  # 3. every segment-named file is complete, even after a crash mid-creation
  leftovers="$(find "$data/pg_wal" -maxdepth 1 -name 'xlogtemp.*' | wc -l)"
  bad="$(find "$data/pg_wal" -maxdepth 1 -regextype posix-extended -regex '.*/[0-9A-F]{24}' \
           ! -size "${segment_bytes}c" -printf '%f %s\n')"
  [ -z "$bad" ] || fail "round $round: segment files of the wrong size after the crash: $bad"

  # 4. recovery keeps every acknowledged transaction, whole, and no partial one
  start_server
  cat "$work"/ack."$round".* | psql_ -c "\copy ack FROM pstdin (DELIMITER ' ')"
  missing="$(psql_ -c "SELECT count(*) FROM ack a WHERE a.r = $round AND a.n <>
                         (SELECT count(*) FROM t WHERE (t.r, t.w, t.i) = (a.r, a.w, a.i))")"
  [ "$missing" = 0 ] || fail "round $round: $missing acknowledged transactions lost or incomplete"
  partial="$(psql_ -c "SELECT count(*) FROM (SELECT w, count(*) AS n FROM t WHERE r = $round
                         GROUP BY w, i) g WHERE n <> CASE WHEN w = 0 THEN $big_rows ELSE 1 END")"
  [ "$partial" = 0 ] || fail "round $round: $partial transactions recovered in part"
  [ "$(psql_ -c "SELECT failures FROM walseg_status()")" = 0 ] || fail "round $round: preallocator failures"
  # Scratch directories of a process that is gone (a crash mid-probe) must have been removed
  # by the restarted preallocator; a live one's (auto's probe right now) is legitimate.
  for d in "$data"/pg_wal/walseg_scratch.*; do
    [ -e "$d" ] || continue
    pid="${d##*/walseg_scratch.}"
    kill -0 "${pid%%.*}" 2>/dev/null || fail "round $round: stale scratch directory $d"
  done
  segments="$(psql_ -c "SELECT floor((pg_current_wal_insert_lsn() - '$start_lsn') / $segment_bytes)")"
  committed="$(psql_ -c "SELECT count(*) FROM (SELECT DISTINCT w, i FROM t WHERE r = $round) x")"

  # 5. pg_waldump reads the whole range without error
  first="$(find "$data/pg_wal" -maxdepth 1 -regextype posix-extended -regex '.*/00000001[0-9A-F]{16}' \
             -printf '%f\n' | sort | head -n 1)"
  first_lsn="$(psql_ -c "SELECT start_lsn FROM walseg_parse_segment_name('$first')")"
  end_lsn="$(psql_ -c "SELECT pg_current_wal_flush_lsn()")"
  last="$(psql_ -c "SELECT pg_walfile_name('$end_lsn')")"
  # The start segment is named so that pg_waldump takes the segment size from its header:
  # left to itself it reads the first segment-named file readdir returns, which may be a
  # preallocated future segment whose header is still zeros (PostgreSQL's own
  # PreallocXlogFiles makes those too).
  if ! dump_err="$(run "$bindir/pg_waldump" -q -p "$data/pg_wal" -e "$end_lsn" "$first" "$last" 2>&1)" ||
     [ -n "$dump_err" ]; then
    fail "round $round: pg_waldump $first_lsn..$end_lsn: $dump_err"
  fi
  printf "round %2d: %-15s ahead %d recycle %-3s: %5d commits acked, %5d present; %3d segments of WAL, %3s made by walseg, %d temp left; pg_waldump %s..%s (%s segments) ok\n" \
    "$round" "$method" "$ahead" "$recycle" "$acked" "$committed" "$segments" "$made" "$leftovers" "$first_lsn" "$end_lsn" \
    "$(psql_ -c "SELECT ceil(('$end_lsn'::pg_lsn - '$first_lsn') / $segment_bytes)")"
  run "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null
done

if grep -n "PANIC\|walseg preallocator could not" "$log"; then
  fail "the server log reports a PANIC or a preallocator failure"
fi
echo "crash_test: all $rounds rounds passed"
rm -rf "$work"
