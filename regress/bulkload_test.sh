#!/usr/bin/env bash
# ctest test `pg_bulkload`: a bulk load on 1 MB segments makes no miss once the target is
# large enough (issue 18: 34 misses during `pgbench -i -s 10`, still 22 with 32 segments).
#
#   bash regress/bulkload_test.sh BUILD_DIR [PG_CONFIG]
#
# initdb --wal-segsize=1 (each load crosses about two hundred segment boundaries and a
# checkpoint or two with max_wal_size = 256MB), the preallocator with
# walseg.prealloc_segments = 32.
# Two loads, each once the pool is full: right after the server start with min_wal_size 40MB,
# then with initdb's 5MB. After each:
#   - walseg_status().misses is 0 (the segments PostgreSQL had to make itself, misses.c);
#   - the server log, at DEBUG2, holds no "creating and filling new WAL file" of PostgreSQL's
#     own XLogFileInit during the load (the same fact, seen by PostgreSQL rather than walseg);
#   - the preallocator failed nothing and made segments during the load.
# Then DROP EXTENSION: the preallocator goes on (README: what DROP EXTENSION leaves running).
# The misses and the creations are printed either way. Exits 0 when all hold, 1 otherwise
# (the work directory is kept for inspection).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build_dir="$(cd "${1:?usage: bulkload_test.sh BUILD_DIR [PG_CONFIG]}" && pwd)"
pg_config="${2:-pg_config}"
bindir="$("$pg_config" --bindir)"

# shellcheck source=pg_common.sh
source "$here/pg_common.sh"
walseg_ensure_installed "$build_dir" "$pg_config"
walseg_as_user

work="$(mktemp -d /tmp/walseg_bulkload.XXXXXX)"
if [ "$(id -u)" -eq 0 ]; then chown "$WALSEG_RUN_USER" "$work"; fi
data="$work/data"
log="$work/server.log"
port=55490

run() { (cd / && "${AS_USER[@]}" "$@"); }
psql_() { run "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d postgres "$@"; }
fail() { echo "bulkload_test: FAILED: $*"; echo "---- end of $log"; tail -n 30 "$log"; echo "work directory kept: $work"; exit 1; }

cleanup() {
  if [ -f "$data/postmaster.pid" ]; then run "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# -g: group access, so PostgreSQL makes its files 0640, and the preallocator's segments must be
# made so too (they were 0600: a group member's file-level backup could not read them).
run "$bindir/initdb" -D "$data" -A trust -U postgres --no-locale --wal-segsize=1 -N -g >/dev/null
cat >> "$data/postgresql.conf" <<EOF
shared_preload_libraries = 'walseg'
port = $port
listen_addresses = ''
unix_socket_directories = '$work'
walseg.init_method = 'zero_write'
walseg.prealloc_segments = 32
# PostgreSQL's own segment creation is logged only at DEBUG2 (XLogFileInitInternal).
log_min_messages = debug2
min_wal_size = '40MB'
# initdb's 64MB (for 1 MB segments) holds the redo pointer so close behind a bulk load that
# the next checkpoint starts late and the horizon (redo + max_wal_size - 1) stops the pool:
# PostgreSQL says "checkpoints are occurring too frequently" and walseg_status() says the
# target is capped by max_wal_size. Out of the way here, as PostgreSQL's hint says.
max_wal_size = '256MB'
EOF
run "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 start >/dev/null || fail "server did not start"
psql_ -c "CREATE EXTENSION walseg"

# load LABEL: waits for a full pool, runs pgbench -i -s 10, checks that nothing was missed.
load() {
  local full="" before mark status misses failures target cap own
  for _ in $(seq 1 600); do   # up to 60 s for the pool
    full="$(psql_ -c "SELECT segments_ahead >= 32 AND target_ahead = 32 FROM walseg_status()")"
    [ "$full" = t ] && break
    sleep 0.1
  done
  [ "$full" = t ] || fail "$1: the pool did not fill: $(psql_ -c "SELECT * FROM walseg_status()")"
  # Every segment in pg_wal, the preallocator's and PostgreSQL's own, has PostgreSQL's mode.
  local wrong
  wrong="$(find "$data/pg_wal" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9A-F]{24}' \
    ! -perm 0640 -printf '%f %m\n' | head -5)"
  [ -z "$wrong" ] || fail "$1: segments not made with the cluster's group-access mode 0640: $wrong"
  echo "$1: all $(find "$data/pg_wal" -maxdepth 1 -type f | grep -cE '/[0-9A-F]{24}$') segments in pg_wal are 0640," \
       "as PostgreSQL makes them in a group-access cluster"
  before="$(psql_ -c "SELECT misses FROM walseg_status()")"
  mark="$(wc -l < "$log")"
  run "$bindir/pgbench" -i -s 10 -q -h "$work" -p "$port" -U postgres postgres > "$work/pgbench.out" 2>&1 ||
    { cat "$work/pgbench.out"; fail "$1: pgbench -i -s 10"; }
  status="$(psql_ -F ' ' -c "SELECT misses - $before, failures, target_ahead, target_capped_by FROM walseg_status()")"
  read -r misses failures target cap <<< "$status"
  own="$(tail -n +"$((mark + 1))" "$log" | grep -c 'done creating and filling new WAL file' || true)"
  echo "$1: pgbench -i -s 10, walseg.prealloc_segments = 32: misses $misses, segments PostgreSQL" \
       "created itself (DEBUG2) $own, failures $failures; target afterwards $target ($cap)"
  [ "$failures" = 0 ] || fail "$1: the preallocator failed $failures times"
  [ "$misses" = 0 ] || fail "$1: walseg_status() counted $misses misses during the load"
  [ "$own" = 0 ] || fail "$1: PostgreSQL created $own segments itself during the load"
}

# 1. Right after start, with min_wal_size above the target: no checkpoint has been seen yet,
#    so this is the fills' speed alone (catching up at full speed, no poll while behind).
load "right after start, min_wal_size = 40MB"
# 2. initdb's min_wal_size (5MB: 4 segments after a checkpoint's redo): the load's checkpoints
#    must not cap the target there, since PostgreSQL's own recycling keeps a cycle's worth.
psql_ -c "ALTER SYSTEM SET min_wal_size = '5MB'" -c "SELECT pg_reload_conf()" >/dev/null
load "steady state, min_wal_size = 5MB"
# DROP EXTENSION removes the functions only (README): the worker goes on and tops up again.
wpid="$(psql_ -c "SELECT worker_pid FROM walseg_status()")"
psql_ -c "DROP EXTENSION walseg"
mark="$(wc -l < "$log")"
psql_ -c "SELECT pg_switch_wal()" >/dev/null
made=""
for _ in $(seq 1 100); do
  made="$(tail -n +"$((mark + 1))" "$log" | grep -c "\[$wpid\] DEBUG:  walseg: installed WAL segment" || true)"
  [ "$made" != 0 ] && break
  sleep 0.1
done
kill -0 "$wpid" 2>/dev/null || fail "the preallocator $wpid is gone after DROP EXTENSION"
[ "$made" != 0 ] || fail "the preallocator $wpid made no segment after DROP EXTENSION and a switch"
echo "after DROP EXTENSION the preallocator $wpid still runs and made $made segment(s) after a switch"
echo "bulkload_test: passed"
run "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null || fail "fast shutdown"
rm -rf "$work"
