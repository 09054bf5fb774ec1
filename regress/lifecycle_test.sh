#!/usr/bin/env bash
# ctest test `pg_lifecycle`: the walseg preallocator's life as the postmaster's child.
#
#   bash regress/lifecycle_test.sh BUILD_DIR [PG_CONFIG]
#
# 1. Postmaster killed mid-fill. 1 GB segments (initdb --wal-segsize=1024) and
#    walseg.prealloc_segments = 1, so the worker spends seconds filling one segment. While its
#    xlogtemp.* file is being filled the postmaster is killed with SIGKILL. The worker must be
#    gone within 5 s (the time it took is printed), having removed its temporary file and installed nothing more in pg_wal,
#    and the server must start again at once (a worker still running holds the old shared
#    memory: "pre-existing shared memory block ... is still in use").
# 0. Scratch-like leftovers: a link and a directory with a user's file, named as a dead
#    process's scratch directories, are left as they are by the worker's clean-up at start.
# 2. Worker stopped alone. SIGTERM to the worker: it exits with status 1 and the postmaster
#    starts a new one after bgw_restart_time (10 s), so preallocation resumes without a server
#    restart, and walseg_status() shows the new pid; meanwhile its state says why there is
#    no worker.
# 2b. A file put into a running walseg_bench()'s scratch directory stays, and a WARNING names
#    the directory before the cancel's ERROR; a second walseg_bench() meanwhile is refused.
# 3. In recovery. Started again as a standby (standby.signal, no primary), walseg_status()
#    says 'in recovery', with NULLs for the pool, not zeros.
# 4. Preloaded by an absolute path to a copy of walseg.so: the preallocator starts (it runs the
#    library the postmaster loaded), and a WARNING says the SQL functions load $libdir's.
# 5. No room: with max_wal_size larger than the disk the worker makes no segment, says so in
#    one LOG line, walseg_status() names the cap, and walseg_prealloc() gives a NOTICE.
# 6. Someone's short file at the next segment name is not counted in segments_ahead, and a
#    LOG line names it once.
# Exits 0 when all hold, 1 otherwise (the work directory is kept for inspection).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build_dir="$(cd "${1:?usage: lifecycle_test.sh BUILD_DIR [PG_CONFIG]}" && pwd)"
pg_config="${2:-pg_config}"
bindir="$("$pg_config" --bindir)"

# shellcheck source=pg_common.sh
source "$here/pg_common.sh"
walseg_ensure_installed "$build_dir" "$pg_config"
walseg_as_user

work="$(mktemp -d /tmp/walseg_lifecycle.XXXXXX)"
if [ "$(id -u)" -eq 0 ]; then chown "$WALSEG_RUN_USER" "$work"; fi
data="$work/data"
log="$work/server.log"
port=55480

run() { (cd / && "${AS_USER[@]}" "$@"); }
psql_() { run "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d postgres "$@"; }
fail() { echo "lifecycle_test: FAILED: $*"; echo "---- end of $log"; tail -n 30 "$log"; echo "work directory kept: $work"; exit 1; }
postmaster_pid() { head -n 1 "$data/postmaster.pid" 2>/dev/null; }

cleanup() {
  if [ -f "$data/postmaster.pid" ]; then run "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

run "$bindir/initdb" -D "$data" -A trust -U postgres --no-locale --wal-segsize=1024 -N >/dev/null
cat >> "$data/postgresql.conf" <<EOF
shared_preload_libraries = 'walseg'
port = $port
listen_addresses = ''
unix_socket_directories = '$work'
walseg.init_method = 'zero_write'
walseg.prealloc_segments = 1
max_wal_size = '4GB'
min_wal_size = '2GB'
EOF

start_server() {
  run "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 start >/dev/null || fail "server did not start ($1)"
}
worker_pid() { psql_ -c "SELECT coalesce(worker_pid, 0) FROM walseg_status()" 2>/dev/null || echo 0; }
segments() { find "$data/pg_wal" -maxdepth 1 -regextype posix-extended -regex '.*/[0-9A-F]{24}' -printf '%f\n' 2>/dev/null | sort; }

# ---- 0. leftovers that look like a dead process's scratch directories -------------------
# The worker removes its own crashed processes' scratch directories at start, but only
# walseg's files in real directories: never through a link, never anyone's file.
victim="$work/victim"
mkdir -p "$victim" "$data/pg_wal/walseg_scratch.999998.y.abcdef"
echo theirs > "$victim/precious.txt"
echo theirs > "$victim/000000010000000000000009"
echo mine > "$data/pg_wal/walseg_scratch.999998.y.abcdef/mynotes"
# Files under walseg's own names in a directory walseg did not make are still someone's
# (break-it round 3: they were removed): only a directory whose owner file names it is walseg's.
echo mine > "$data/pg_wal/walseg_scratch.999998.y.abcdef/000000010000000000000001"
echo mine > "$data/pg_wal/walseg_scratch.999998.y.abcdef/walseg.lock"
ln -s "$victim" "$data/pg_wal/walseg_scratch.999999.x.abcdef"
# A real scratch directory of a dead backend (its owner file names it), holding a file of
# zeros born after the owner file (as its bench files are, and as a user's copy of a zero-filled
# segment is: break-it round 14 F1 saw such a copy removed) and a user's file moved in under a
# segment's name (break-it round 11 F3): both stay, with the directory, named in a LOG line.
# What the dead backend made is known by the journal in its owner file (a "made DEV INO
# BORN_NS GENERATION" line per file): segment 2 below, listed there, is removed. A dead
# backend's scratch holding only its owner file is removed.
dead="$data/pg_wal/walseg_scratch.999997.bench.abcdef"
empty="$data/pg_wal/walseg_scratch.999996.bench.abcdef"
mkdir -p "$dead" "$empty"
printf 'walseg scratch directory %s\n' "$(stat -c '%d:%i' "$empty")" > "$empty/walseg_scratch.owner"
echo mine > "$work/moved-in"
sleep 0.05
printf 'walseg scratch directory %s\n' "$(stat -c '%d:%i' "$dead")" > "$dead/walseg_scratch.owner"
sleep 0.05
head -c 65536 /dev/zero > "$dead/000000010000000000000001"
head -c 65536 /dev/zero > "$dead/000000010000000000000002"
born_ns() { date -d "$(stat -c %w "$1")" +%s%N; }
printf 'made %s %s -1\n' "$(stat -c '%d %i' "$dead/000000010000000000000002")" \
  "$(born_ns "$dead/000000010000000000000002")" >> "$dead/walseg_scratch.owner"
mv "$work/moved-in" "$dead/000000010000000000000FFF"
if [ "$(id -u)" -eq 0 ]; then chown -R "$WALSEG_RUN_USER" "$victim" "$data/pg_wal"; fi

# ---- 1. the postmaster killed while the worker fills ------------------------------------
start_server "first start"
psql_ -c "CREATE EXTENSION walseg"
for _ in $(seq 1 100); do [ "$(worker_pid)" != 0 ] && break; sleep 0.1; done
[ "$(cat "$victim/precious.txt" "$victim/000000010000000000000009" 2>/dev/null)" = "$(printf 'theirs\ntheirs')" ] ||
  fail "the preallocator removed files through a link named like a scratch directory"
[ -L "$data/pg_wal/walseg_scratch.999999.x.abcdef" ] || fail "the link named like a scratch directory is gone"
for f in mynotes 000000010000000000000001 walseg.lock; do
  [ -f "$data/pg_wal/walseg_scratch.999998.y.abcdef/$f" ] || fail "file $f in a directory named like scratch is gone"
done
[ "$(cat "$dead/000000010000000000000FFF" 2>/dev/null)" = mine ] ||
  fail "a user's file moved into a dead backend's scratch directory was removed"
[ -f "$dead/000000010000000000000001" ] || fail "a file of zeros in a dead backend's scratch directory was removed"
[ ! -e "$dead/000000010000000000000002" ] || fail "the dead backend's journaled bench file was not removed"
grep -q "leaving scratch directory \"[^\"]*walseg_scratch.999997.bench.abcdef\" of a walseg_bench() whose backend is gone" "$log" ||
  fail "no LOG line names the dead backend's scratch directory left in place"
[ ! -e "$empty" ] || fail "a dead backend's scratch directory holding only its owner file was not removed"
rm -rf "$data/pg_wal/walseg_scratch.999998.y.abcdef" "$data/pg_wal/walseg_scratch.999999.x.abcdef" "$dead"
echo "scratch-like leftovers: nothing of anyone else's removed"
temp=""
for _ in $(seq 1 600); do   # up to 60 s for a fill to be under way
  temp="$(find "$data/pg_wal" -maxdepth 1 -name 'xlogtemp.*' -size +1M -printf '%f\n' 2>/dev/null | head -n 1 || true)"
  [ -n "$temp" ] && break
  sleep 0.1
done
[ -n "$temp" ] || fail "no fill of a 1 GB segment was seen (segments: $(segments | tr '\n' ' '))"
wpid="$(worker_pid)"
[ "$wpid" != 0 ] || fail "no walseg preallocator process"
pm="$(postmaster_pid)"
kids="$(pgrep -P "$pm" | tr '\n' ' ')"
before="$(segments)"
kill -KILL "$pm"
gone=""
# 5 s, as for the other children below: a chunk's write can wait that long for writeback on a
# loaded disk (a CI run beside a crash-state run took over 2 s); what matters is the restart.
for i in $(seq 1 50); do
  if ! kill -0 "$wpid" 2>/dev/null; then gone=yes; break; fi
  sleep 0.1
done
[ -n "$gone" ] || fail "the preallocator (pid $wpid) still runs 5 s after its postmaster was killed"
echo "the preallocator exited within $(( i * 100 )) ms of its postmaster's SIGKILL"
[ "$(segments)" = "$before" ] || fail "pg_wal changed after the postmaster was killed: $(segments | tr '\n' ' ')"
[ ! -e "$data/pg_wal/$temp" ] || fail "the worker left its temporary file $temp"
# The other children die with the postmaster too (they watch for its death); the restart
# must not meet a live child holding the old shared memory.
for _ in $(seq 1 50); do
  alive=""
  for k in $kids; do kill -0 "$k" 2>/dev/null && alive="$alive $k"; done
  [ -z "$alive" ] && break
  sleep 0.1
done
rm -f "$data/postmaster.pid"
start_server "restart right after the postmaster was killed mid-fill"
echo "postmaster killed mid-fill of $temp: preallocator gone, temporary file removed, nothing installed, restart ok"

# ---- 2. the worker alone stopped with SIGTERM -------------------------------------------
first=""
for _ in $(seq 1 300); do
  first="$(worker_pid)"
  [ "$first" != 0 ] && break
  sleep 0.1
done
[ "$first" != 0 ] || fail "the preallocator did not start after the restart"
kill -TERM "$first"
second=0
stopped=""
for _ in $(seq 1 300); do   # bgw_restart_time is 10 s
  second="$(worker_pid)"
  [ "$second" != 0 ] && [ "$second" != "$first" ] && break
  # Meanwhile walseg_status() says why there is no worker.
  if [ "$second" = 0 ] && [ -z "$stopped" ]; then
    stopped="$(psql_ -c "SELECT state FROM walseg_status()" 2>/dev/null || true)"
  fi
  sleep 0.1
done
[ "$second" != 0 ] && [ "$second" != "$first" ] || fail "no new preallocator 30 s after SIGTERM to pid $first"
grep -q "walseg preallocator stopping on SIGTERM" "$log" || fail "the worker did not log its stop"
case "$stopped" in
  "not running: stopped on SIGTERM; the postmaster starts it again within 10 s") ;;
  *) fail "walseg_status().state while the worker was stopped: '$stopped'" ;;
esac
[ "$(psql_ -c "SELECT state FROM walseg_status()")" = running ] || fail "state after the restart is not 'running'"
echo "preallocator $first stopped with SIGTERM ('$stopped'), restarted by the postmaster as $second"

# ---- 2b. a file put into a live walseg_bench()'s scratch directory ------------------------
# The bench removes only what it made: a file someone put into its scratch directory stays,
# and so does the directory, named in a WARNING before the cancel's ERROR (round 15 L4: the
# directory was left in pg_wal without a word).
bench_err="$work/bench.err"
(psql_ -c "SELECT count(*) FROM walseg_bench(ARRAY['zero_write'], 16777216, 60)" >/dev/null 2>"$bench_err" || true) &
bench_job=$!
scratch=""
for _ in $(seq 1 600); do
  scratch="$(find "$data/pg_wal" -maxdepth 1 -name 'walseg_scratch.*.bench.*' -print -quit)"
  [ -n "$scratch" ] && break
  sleep 0.05
done
[ -n "$scratch" ] || fail "no walseg_bench() scratch directory appeared in pg_wal"
# A second bench meanwhile is refused: each checks the free space for itself alone (round 17 M3:
# three at once filled a small pg_wal, and PostgreSQL PANICked).
second="$(psql_ -c "SELECT count(*) FROM walseg_bench(ARRAY['zero_write'], 1048576, 1)" 2>&1 || true)"
case "$second" in
  *"walseg_bench() cannot run while another walseg_bench() or walseg_fs_info() runs"*) ;;
  *) fail "a second walseg_bench() while one ran: '$second'" ;;
esac
echo mine > "$scratch/mynotes"
psql_ -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
          WHERE query LIKE 'SELECT count(*) FROM walseg_bench%' AND pid <> pg_backend_pid()" >/dev/null
wait "$bench_job"
grep -q "canceling statement" "$bench_err" || fail "walseg_bench() was not canceled mid-run: $(cat "$bench_err")"
grep -q "WARNING:  walseg: leaving scratch directory \"pg_wal/${scratch##*/}\": it holds 1 file (mynotes)" "$bench_err" ||
  fail "no WARNING names the scratch directory walseg_bench() left: $(cat "$bench_err")"
[ -f "$scratch/mynotes" ] || fail "the file put into walseg_bench()'s scratch directory was removed"
rm -rf "$scratch"
echo "a file put into a live walseg_bench()'s scratch directory: kept, directory named in a WARNING"

run "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null || fail "fast shutdown"
! kill -0 "$second" 2>/dev/null || fail "the preallocator $second outlived the fast shutdown"

# ---- 3. in recovery ----------------------------------------------------------------------
# A standby (standby.signal, no primary: it stays in recovery and takes read-only queries):
# no worker, and walseg_status() says 'in recovery' with the pool's columns NULL, not zeros.
run touch "$data/standby.signal"
start_server "as a standby"
status="$(psql_ -F ' ' -c "SELECT state, worker_pid IS NULL, segments_ahead IS NULL, target_ahead IS NULL,
                                  target_capped_by IS NULL FROM walseg_status()")"
[ "$status" = "in recovery t t t t" ] || fail "walseg_status() on a standby: '$status'"
echo "on a standby: walseg_status() says '$status'"
run "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null || fail "fast shutdown of the standby"
# ---- 4. preloaded by an absolute path to a copy outside $libdir -------------------------
# The worker was registered by the name "walseg", so it loaded $libdir's walseg.so as a second
# library ("attempt to redefine parameter") and never ran (the new-user trial). It runs the
# library the postmaster loaded, and a WARNING says that the SQL functions load another file.
rm -f "$data/standby.signal"
mkdir -p "$work/lib"
cp "$("$pg_config" --pkglibdir)/walseg.so" "$work/lib/walseg.so"
if [ "$(id -u)" -eq 0 ]; then chown -R "$WALSEG_RUN_USER" "$work/lib"; fi
sed -i "s|^shared_preload_libraries = .*|shared_preload_libraries = '$work/lib/walseg.so'|" "$data/postgresql.conf"
: > "$log"
start_server "preloaded from $work/lib"
for _ in $(seq 1 100); do grep -q "walseg preallocator started" "$log" && break; sleep 0.1; done
grep -q "walseg preallocator started" "$log" || fail "preloaded by absolute path, the preallocator did not start"
! grep -q "attempt to redefine parameter" "$log" || fail "the worker loaded a second walseg library"
grep -q "WARNING:  walseg was preloaded from \"$work/lib/walseg.so\", which is not" "$log" ||
  fail "no WARNING that the SQL functions load another walseg.so"
run "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null || fail "fast shutdown (preloaded by path)"
echo "preloaded by an absolute path: the preallocator runs that library, and a WARNING names both files"

# ---- 5. no room: the pool leaves max_wal_size free -----------------------------------------
# Break-it round 21: on a small pg_wal filesystem the preallocator made segments until 244 kB
# were free; every other writer there got ENOSPC, and PostgreSQL a PANIC at its next segment.
# It keeps max_wal_size free beyond a new segment (here more than any disk has), says so once,
# walseg_status() names the cap, and walseg_prealloc() says why it made nothing.
redo="$(run "$bindir/pg_controldata" -D "$data" | sed -n "s/^Latest checkpoint's REDO WAL file: *//p")"
[ -n "$redo" ] || fail "no REDO WAL file from pg_controldata"
for f in $(segments); do if [[ "$f" > "$redo" ]]; then rm -f "$data/pg_wal/$f"; fi; done  # future ones only
before="$(segments | tr '\n' ' ')"
sed -i "s|^shared_preload_libraries = .*|shared_preload_libraries = 'walseg'|" "$data/postgresql.conf"
echo "max_wal_size = '1000TB'" >> "$data/postgresql.conf"
: > "$log"
start_server "with max_wal_size larger than the disk"
for _ in $(seq 1 100); do grep -q "walseg preallocator is making no more segments" "$log" && break; sleep 0.1; done
grep -q "walseg preallocator is making no more segments: pg_wal's filesystem has [0-9]* MB free" "$log" ||
  fail "no LOG that the pool stopped for want of free space"
grep -q "It keeps max_wal_size (1048576000 MB) free beyond a new segment" "$log" || fail "the LOG's DETAIL does not name max_wal_size"
cap="$(psql_ -c "SELECT target_capped_by FROM walseg_status()")"
[ "$cap" = "free space (max_wal_size kept free)" ] || fail "walseg_status().target_capped_by: '$cap'"
made="$(psql_ -c "SELECT walseg_prealloc(1)" 2>"$work/notice")"
[ "$made" = "0" ] || fail "walseg_prealloc(1) with no room made $made"
grep -q "walseg_prealloc created 0 segments and stopped: pg_wal's filesystem has [0-9]* MB free" "$work/notice" ||
  fail "walseg_prealloc gave no NOTICE: $(cat "$work/notice")"
sleep 1  # more rounds of the worker, which must not say it again
[ "$(grep -c "walseg preallocator is making no more segments" "$log")" -eq 1 ] || fail "the LOG was said more than once"
[ "$(segments | tr '\n' ' ')" = "$before" ] || fail "segments were made with no room: $(segments | tr '\n' ' ')"
run "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null || fail "fast shutdown (no room)"
echo "no room: the pool made nothing, said so once, walseg_status() says '$cap', walseg_prealloc() says why"

# ---- 6. someone's file at the next segment name ---------------------------------------------
# Break-it round 24 L1: short files planted at future segment names were counted as segments
# made ahead (segments_ahead), and nothing was said. Only full-size files count, and a LOG line
# names the file (once).
sed -i "/^max_wal_size = '1000TB'$/d" "$data/postgresql.conf"
redo="$(run "$bindir/pg_controldata" -D "$data" | sed -n "s/^Latest checkpoint's REDO WAL file: *//p")"
for f in $(segments); do if [[ "$f" > "$redo" ]]; then rm -f "$data/pg_wal/$f"; fi; done
per_id=$(( 0x100000000 / (1024 * 1024 * 1024) ))  # 1 GB segments: four per xlogid
next=$(( 16#${redo:8:8} * per_id + 16#${redo:16:8} + 1 ))
planted="$data/pg_wal/$(printf '%s%08X%08X' "${redo:0:8}" $(( next / per_id )) $(( next % per_id )))"
printf 'mine\n' > "$planted"
if [ "$(id -u)" -eq 0 ]; then chown "$WALSEG_RUN_USER" "$planted"; fi
: > "$log"
start_server "with someone's file at the next segment name"
for _ in $(seq 1 100); do grep -q "has the name of a future WAL segment but is not one" "$log" && break; sleep 0.1; done
grep -q "walseg: \"pg_wal/$(basename "$planted")\" has the name of a future WAL segment but is not one: it is 5 bytes" "$log" ||
  fail "no LOG naming the file at the next segment name"
ahead="$(psql_ -c "SELECT segments_ahead FROM walseg_status()")"
[ "$ahead" = "0" ] || fail "walseg_status().segments_ahead counts someone's file: $ahead"
[ "$(cat "$planted")" = "mine" ] || fail "the planted file changed"
sleep 1
[ "$(grep -c "has the name of a future WAL segment but is not one" "$log")" -eq 1 ] || fail "the LOG was said more than once"
run "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null || fail "fast shutdown (someone's file)"
echo "someone's file at the next segment name: not counted, named once in the LOG"

echo "lifecycle_test: passed"
rm -rf "$work"
