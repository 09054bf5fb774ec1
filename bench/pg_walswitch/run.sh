#!/usr/bin/env bash
# Commit latency of PostgreSQL 15 across WAL segment switches: stock PostgreSQL against the
# walseg preallocator (contrib/walseg), measured with the libpq client pg_walswitch.
#
#   bench/pg_walswitch/run.sh [options]     (--help; --quick: a smoke run of a few seconds each)
#
# Configurations, each with wal_recycle = off (the copy-on-write advice), then on:
#   stock-zero-on     stock PostgreSQL, wal_init_zero = on (its default)
#   stock-zero-off    stock PostgreSQL, wal_init_zero = off
#   walseg-METHOD     shared_preload_libraries = 'walseg', walseg.init_method = METHOD, for the
#                     full-size methods the extension accepts: zero_write posix_fallocate
#                     glibc_emulation sparse; wal_init_zero = on for any segment PostgreSQL
#                     still has to create itself
# One template cluster (initdb --wal-segsize, default 16 MB; the table created) is copied for
# every run, so all start from the same state. A run: start the copy (as the unprivileged user
# walseg_test when we are root, regress/pg_common.sh); for walseg, CREATE EXTENSION and wait
# until the preallocator has its target of segments ahead; then pg_walswitch: K connections
# (default 4) of single-row INSERT commits, each >= 8 kB of random bytea stored uncompressed
# (synchronous_commit on), a warm-up (5 s), an immediate CHECKPOINT with the load going on,
# and T measured seconds (30); stop the server, remove the copy.
#
# Why the CHECKPOINT and the large max_wal_size (4GB; min_wal_size is 2 segments, the least
# PostgreSQL accepts): every configuration enters the window with its dirty buffers written
# and, with wal_recycle = on, its old segments recycled as future ones (as many as PostgreSQL
# decides from min_wal_size and its distance estimate), and no checkpoint completes inside
# the window (each one's fsync of the table and, with wal_recycle = off, its unlinking of old
# segments stall commits for 50-250 ms here, in every configuration alike, which would hide
# what this measures). --max-wal-size 256MB --no-checkpoint measures with checkpoints inside.
#
# Repetitions (--reps) run the configurations in alternating order (forward, backward, ...)
# so that a drift of the machine's load favours none; the table pools them: percentiles over
# all commits of a configuration, TPS = its commits / its measured seconds.
#
# "PG created": the WAL segments PostgreSQL created itself inside the window. PostgreSQL 15
# logs nothing about that at the default level; XLogFileInitInternal logs "creating and
# filling new WAL file" at DEBUG2 right before it creates one (whatever wal_init_zero is) and
# "done creating ..." after. So the servers run with log_min_messages = debug2 and
# log_line_prefix '%m [%p] %b: ' and the client brackets the window with RAISE LOG markers;
# the count is split by who created the segment: "commit path" (backends and the WAL writer,
# inside XLogWrite with WALWriteLock held) and "ckpt" (the checkpointer's PreallocXlogFiles,
# off the commit path). DEBUG2 adds a few lines per second (connections, checkpoints); the
# simple query protocol the client uses logs nothing per statement at that level.
# Cross-check, from pg_ls_waldir() at both ends of the window: segments entered = future
# segment files at the start + created (PostgreSQL's + walseg_status().segments_created) +
# recycled in the window - future files at the end; "acct" in results.json is that minus the
# log count, 0 when everything is accounted for.
# Tail attribution: each commit at or above a configuration's p99.9, and its slowest, is
# marked "creating" if it overlapped one of PostgreSQL's own segment creations in the commit
# path (log timestamps, ms), "installing" if it overlapped the walseg preallocator's fsync of a
# filled segment and its installation (rename and directory fsync, under ControlFileLock; the
# DEBUG2 line "walseg: installed WAL segment" gives their times), "ckpt" if it overlapped a
# checkpoint's sync phase, "writeback" if it overlapped a burst of the kernel's writeback
# (below), "disk" if it overlapped a stall of the disk (below), else "other"; the first that
# applies, in that order.
# Writeback bursts: the table grows by about as many bytes as the WAL (40 MB/s here), and
# PostgreSQL writes each new block to the kernel when it extends the relation; the kernel
# keeps those dirty pages until they are 30 s old (vm.dirty_expire_centisecs) and then writes
# them out at once, over a GB here. Every WAL fdatasync queues behind that for 100-300 ms,
# whatever the configuration, and since the CHECKPOINT cleaned everything at the window's
# start, the burst comes near the end of a 30 s window: inside it in some runs, just after it
# in others. So the script samples Dirty from /proc/meminfo every 100 ms during each run
# (runs/NAME.io) and marks as a burst any stretch in which Dirty falls by at least
# max(64 MB, two segments) within 0.5 s (a segment's own fsync falls by one segment).
# Disk stalls: the virtual disk here sometimes completes nothing for 100-300 ms, in any
# configuration (other tenants of the host). The same sampler reads the work directory's block
# device counters (/sys/class/block/DEV/stat): two samples in a row with requests in flight
# and no request completed in between mark a stall. A fill that kept the disk busy would show
# its own completions, so this does not hide what walseg does.
#
# Data directory (--data-parent): by default the clusters' data directories are in the work
# directory, on the disk measured, so the table's writeback shares the WAL's disk as on a
# one-disk server, and its bursts decide the maximum of any configuration they land in.
# PostgreSQL's documentation advises the WAL on a disk of its own ("WAL Internals"); on a
# machine with one disk, --data-parent /dev/shm puts the data directories on tmpfs and leaves
# the disk to the WAL (pg_wal stays in the work directory: initdb --waldir), which measures
# what segment creation, and nothing else, costs the commits.
#
# Output: the table on stdout and in WORK/results.md, every number in WORK/results.json,
# per run the client's JSON (slowest commits, switch times, per-second series), its samples
# and the server log in WORK/runs/. WORK is a new directory under --work-parent (/var/tmp).
set -euo pipefail

cmdline="$0 $*"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

duration=30
warmup=5
clients=4
reps=2
segsize=16            # MB, initdb --wal-segsize
min_wal=""            # default: 2 segments
max_wal="4GB"
ckpt_timeout="5min"
shared_buffers="1GB"
prealloc=4
checkpoint=1
payload=8192
port=56432
work_parent=/var/tmp
work=""
data_parent=""        # default: the work directory
build_dir="$root/build"
client=""
pg_config=pg_config
recycles="off on"
configs="stock-zero-on stock-zero-off walseg-zero_write walseg-posix_fallocate walseg-glibc_emulation walseg-sparse"
keep=0
remove_work=0

usage() {
  cat <<EOF
usage: $0 [options]
  --quick               smoke run: 3 s measured, 1 s warm-up, 1 repetition
  --duration S          measured seconds per run (default $duration)
  --warmup S            seconds of load before the measured window (default $warmup)
  --clients K           connections (default $clients)
  --reps N              repetitions of every configuration, alternating order (default $reps)
  --wal-segsize MB      initdb --wal-segsize (default $segsize)
  --min-wal-size SIZE   default: 2 segments (the least PostgreSQL accepts)
  --max-wal-size SIZE   default $max_wal
  --checkpoint-timeout T  default $ckpt_timeout
  --shared-buffers SIZE default $shared_buffers
  --prealloc N          walseg.prealloc_segments (default $prealloc)
  --no-checkpoint       no CHECKPOINT between the warm-up and the measured window
  --payload BYTES       random bytes per transaction (default $payload)
  --configs "LIST"      subset of: $configs
  --recycle "LIST"      wal_recycle values (default "$recycles")
  --port P              (default $port; the socket lives in the work directory)
  --work-parent DIR     where the work directory is made (default $work_parent; the
                        filesystem measured is that of this directory)
  --work DIR            use this (new or empty) work directory instead
  --data-parent DIR     where the data directories go (default: the work directory; pg_wal
                        is always in the work directory); /dev/shm: the WAL alone on the disk
  --build DIR           build directory with lib/walseg.so (default $build_dir)
  --client PATH         pg_walswitch binary (default: BUILD/bin/pg_walswitch, then
                        $root/build-pgb/bin/pg_walswitch)
  --pg-config PATH      (default pg_config)
  --keep                keep the data directories (large)
  --rm                  remove the work directory at the end (after printing the table)
EOF
}

while (($#)); do
  case "$1" in
    --quick) duration=3; warmup=1; reps=1 ;;
    --duration) duration="$2"; shift ;;
    --warmup) warmup="$2"; shift ;;
    --clients) clients="$2"; shift ;;
    --reps) reps="$2"; shift ;;
    --wal-segsize) segsize="$2"; shift ;;
    --min-wal-size) min_wal="$2"; shift ;;
    --max-wal-size) max_wal="$2"; shift ;;
    --checkpoint-timeout) ckpt_timeout="$2"; shift ;;
    --shared-buffers) shared_buffers="$2"; shift ;;
    --prealloc) prealloc="$2"; shift ;;
    --no-checkpoint) checkpoint=0 ;;
    --payload) payload="$2"; shift ;;
    --configs) configs="$2"; shift ;;
    --recycle) recycles="$2"; shift ;;
    --port) port="$2"; shift ;;
    --work-parent) work_parent="$2"; shift ;;
    --work) work="$2"; shift ;;
    --data-parent) data_parent="$2"; shift ;;
    --build) build_dir="$2"; shift ;;
    --client) client="$2"; shift ;;
    --pg-config) pg_config="$2"; shift ;;
    --keep) keep=1 ;;
    --rm) remove_work=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[ -n "$min_wal" ] || min_wal="$((2 * segsize))MB"

build_dir="$(cd "$build_dir" && pwd)"
if [ -z "$client" ]; then
  for c in "$build_dir/bin/pg_walswitch" "$root/build-pgb/bin/pg_walswitch"; do
    [ -x "$c" ] && { client="$c"; break; }
  done
fi
[ -n "$client" ] && [ -x "$client" ] ||
  { echo "run.sh: pg_walswitch not built (cmake --build BUILD --target pg_walswitch)" >&2; exit 1; }
bindir="$("$pg_config" --bindir)"
command -v python3 >/dev/null || { echo "run.sh: python3 is needed for the report" >&2; exit 1; }

# shellcheck source=../../regress/pg_common.sh
source "$root/regress/pg_common.sh"
case " $configs " in
  *" walseg-"*) walseg_ensure_installed "$build_dir" "$pg_config" ;;
esac
walseg_as_user
run() { "${AS_USER[@]}" "$@"; }

# Checked before anything is made: the server runs as another user when we are root, from
# the data directory, so the path is made absolute and must let that user in.
if [ -n "$data_parent" ]; then
  [ -d "$data_parent" ] || { echo "run.sh: --data-parent $data_parent: not a directory" >&2; exit 2; }
  data_parent="$(cd "$data_parent" && pwd)"
  run test -x "$data_parent" ||
    { echo "run.sh: --data-parent $data_parent: the user ${WALSEG_RUN_USER} the server runs as cannot enter it" >&2; exit 2; }
fi
if [ -z "$work" ]; then
  work="$(mktemp -d "$work_parent/pg_walswitch.XXXXXX")"
else
  mkdir -p "$work"
  # A second run would overwrite the first's meta.txt and fail at initdb.
  [ -z "$(ls -A "$work")" ] || { echo "run.sh: --work $work is not empty" >&2; exit 2; }
fi
work="$(cd "$work" && pwd)"
if [ "$(id -u)" -eq 0 ]; then chown "$WALSEG_RUN_USER" "$work"; fi
chmod 755 "$work"
mkdir -p "$work/runs"
if [ "$(id -u)" -eq 0 ]; then chown "$WALSEG_RUN_USER" "$work/runs"; fi
# Data directories: under --data-parent in a directory of their own, else in the work directory.
datas="$work"
if [ -n "$data_parent" ]; then
  datas="$(mktemp -d "$data_parent/pg_walswitch-data.XXXXXX")"
  if [ "$(id -u)" -eq 0 ]; then chown "$WALSEG_RUN_USER" "$datas"; fi
fi
data=""
conninfo="host=$work port=$port user=postgres dbname=postgres"

sampler=""
stop_sampler() {
  if [ -n "$sampler" ]; then
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    sampler=""
  fi
}

cleanup() {
  stop_sampler
  if [ -n "$data" ] && [ -f "$data/postmaster.pid" ]; then
    run "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true
  fi
  if ((!keep)) && [ -n "$data" ]; then rm -rf "$data" "$work/wal"; fi
  if [ "$datas" != "$work" ]; then
    # --keep: what is still there (the template, an interrupted run's data directory) moves
    # to the work directory, next to its WAL, as in the default layout.
    if ((keep)); then
      for d in "$datas"/*; do
        if [ -e "$d" ]; then mv "$d" "$work/"; fi
      done
    fi
    rm -rf "$datas"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

psql_() { "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$conninfo" "$@"; }

fs="$(findmnt -no FSTYPE -T "$work" 2>/dev/null || stat -f -c %T "$work")"
echo "pg_walswitch: work directory $work ($fs), ${segsize} MB segments, min_wal_size $min_wal," \
     "max_wal_size $max_wal, $clients clients, ${duration} s (+${warmup} s warm-up) x $reps"

{
  echo "command: $cmdline"
  echo "date: $(date -u +%FT%TZ), host: $(uname -n), kernel: $(uname -r), $(nproc) CPUs," \
       "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "work directory: $work on $fs ($(df --output=source "$work" | tail -1)), $("$pg_config" --version)"
  echo "data directories: $( [ "$datas" = "$work" ] && echo "in the work directory" ||
       echo "$datas on $(findmnt -no FSTYPE -T "$datas" 2>/dev/null | head -1), pg_wal in the work directory")"
  echo "initdb --wal-segsize=$segsize; min_wal_size=$min_wal, max_wal_size=$max_wal," \
       "checkpoint_timeout=$ckpt_timeout, shared_buffers=$shared_buffers, autovacuum=off;" \
       "walseg.prealloc_segments=$prealloc"
  echo "client: $clients connections, ${duration} s measured after ${warmup} s warm-up" \
       "$( ((checkpoint)) && echo "and a CHECKPOINT" || echo "(no CHECKPOINT)"), $payload random" \
       "bytes per transaction, $reps repetition(s) in alternating order"
} | sed 's/^/- /' > "$work/meta.txt"
cat "$work/meta.txt"

# The template: initdb, settings shared by every configuration, the table.
# pg_wal is always $work/template.wal (a symlink in the data directory), so that the data
# directory can live elsewhere (--data-parent).
template="$datas/template"
run "$bindir/initdb" -D "$template" -X "$work/template.wal" -A trust -U postgres --no-locale -E UTF8 \
  --wal-segsize="$segsize" -N >/dev/null
cat >> "$template/postgresql.conf" <<EOF
# pg_walswitch
port = $port
listen_addresses = ''
unix_socket_directories = '$work'
fsync = on
synchronous_commit = on
full_page_writes = on
shared_buffers = '$shared_buffers'
min_wal_size = '$min_wal'
max_wal_size = '$max_wal'
checkpoint_timeout = '$ckpt_timeout'
# insert-only load: no autovacuum run in the middle of a measurement
autovacuum = off
log_line_prefix = '%m [%p] %b: '
log_min_messages = debug2
log_checkpoints = on
include_if_exists 'walswitch_config.conf'
EOF
data="$template"
run "$bindir/pg_ctl" -D "$template" -l "$work/template.log" -w -t 120 start >/dev/null
"$client" --conninfo "$conninfo" --setup-only >/dev/null
run "$bindir/pg_ctl" -D "$template" -m fast -w stop >/dev/null
data=""

# Settings of one configuration.
config_conf() {
  local cfg="$1" recycle="$2"
  echo "wal_recycle = $recycle"
  case "$cfg" in
    stock-zero-on) echo "wal_init_zero = on" ;;
    stock-zero-off) echo "wal_init_zero = off" ;;
    walseg-*)
      echo "wal_init_zero = on"
      echo "shared_preload_libraries = 'walseg'"
      echo "walseg.init_method = '${cfg#walseg-}'"
      echo "walseg.prealloc_segments = $prealloc" ;;
    *) echo "run.sh: unknown configuration $cfg" >&2; return 1 ;;
  esac
}

# Waits until the preallocator runs and has its target of segments ahead (at most 60 s).
wait_preallocator() {
  local st
  for _ in $(seq 1 600); do
    st="$(psql_ -c "SELECT worker_pid IS NOT NULL AND target_ahead > 0 AND segments_ahead >= target_ahead
                    FROM walseg_status()" 2>/dev/null || true)"
    [ "$st" = t ] && return 0
    sleep 0.1
  done
  echo "run.sh: the walseg preallocator did not get ahead within 60 s:" >&2
  psql_ -x -c "SELECT * FROM walseg_status()" >&2 || true
  return 1
}

# Prints "unix_seconds dirty_kB writeback_kB completed in_flight" every 100 ms until killed:
# /proc/meminfo, and the requests (reads + writes + flushes) completed so far and in flight on
# the block device given as argument, "- -" without one (see "Writeback bursts" and "Disk
# stalls" in the header).
io_sampler='
import sys, time
dev = sys.argv[1]
while True:
    v = {}
    for line in open("/proc/meminfo"):
        k, n = line.split()[:2]
        v[k] = n
    done = busy = "-"
    try:
        f = [int(x) for x in open(dev).read().split()]
        done = f[0] + f[4] + (f[15] if len(f) > 15 else 0)
        busy = f[8]
    except (OSError, ValueError, IndexError):
        pass
    print(time.time(), v["Dirty:"], v["Writeback:"], done, busy, flush=True)
    time.sleep(0.1)
'
# The work directory's block device (its counters), if the kernel shows one for it.
io_dev="$(readlink -f "$(df --output=source "$work" | tail -1)" 2>/dev/null || true)"
io_dev="/sys/class/block/$(basename "${io_dev:-none}")/stat"

run_one() {
  local rep="$1" cfg="$2" recycle="$3" name
  name="$cfg.recycle-$recycle.rep$rep"
  data="$datas/data"
  rm -rf "$data" "$work/wal"
  run cp -a "$template" "$data"
  run cp -a "$work/template.wal" "$work/wal"
  run ln -sfn "$work/wal" "$data/pg_wal"
  config_conf "$cfg" "$recycle" | run tee "$data/walswitch_config.conf" >/dev/null
  # The last run's data directory (hundreds of MB of WAL) was just removed and the copy
  # written: sync now, so that the journal commit that frees those blocks (and, on a file
  # system mounted with -o discard, trims them, 100-300 ms here) and the copy's writeback
  # happen before this run, not inside its window.
  sync
  local log="$work/runs/$name.log"
  run "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 120 start >/dev/null
  if [[ "$cfg" == walseg-* ]]; then
    psql_ -c "CREATE EXTENSION walseg"
    wait_preallocator
  fi
  printf '%-40s ' "$name"
  python3 -c "$io_sampler" "$io_dev" > "$work/runs/$name.io" &
  sampler=$!
  local ckpt_opt=()
  ((checkpoint)) && ckpt_opt=(--checkpoint)
  "$client" --conninfo "$conninfo" --label "$name" --clients "$clients" --duration "$duration" \
    --warmup "$warmup" "${ckpt_opt[@]}" --payload "$payload" --json "$work/runs/$name.json" \
    --samples "$work/runs/$name.samples" --format json >/dev/null
  stop_sampler
  if [[ "$cfg" == walseg-* ]]; then
    psql_ -c "SELECT row_to_json(s) FROM walseg_status() s" > "$work/runs/$name.walseg.json"
  fi
  run "$bindir/pg_ctl" -D "$data" -m fast -w -t 120 stop >/dev/null
  if ((!keep)); then
    rm -rf "$data" "$work/wal"
  else
    mv "$data" "$work/runs/$name.data"
    mv "$work/wal" "$work/runs/$name.wal"
    ln -sfn "$work/runs/$name.wal" "$work/runs/$name.data/pg_wal"
  fi
  data=""
  python3 - "$work/runs/$name.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
l = j["latency_ms"]
print(f'{j["tps"]:7.1f} TPS  p50 {l["p50"]:6.2f}  p99.9 {l["p99.9"]:7.2f}  max {l["max"]:7.2f} ms  '
      f'{j["wal"]["segments_switched"]} switches, {j["wal"]["bytes_per_commit"]:.0f} B/commit')
PY
}

read -r -a cfg_list <<< "$configs"
read -r -a rec_list <<< "$recycles"
order=()
for r in "${rec_list[@]}"; do for c in "${cfg_list[@]}"; do order+=("$c:$r"); done; done
for rep in $(seq 1 "$reps"); do
  if ((rep % 2)); then seq_idx=$(seq 0 $((${#order[@]} - 1))); else seq_idx=$(seq $((${#order[@]} - 1)) -1 0); fi
  for i in $seq_idx; do
    run_one "$rep" "${order[$i]%%:*}" "${order[$i]#*:}"
  done
done

# The report: pooled over repetitions, one row per configuration.
PGW_RM="$remove_work" python3 - "$work" "$configs" "$recycles" "$reps" <<'PY'
import glob, json, math, os, re, sys
from datetime import datetime, timezone

work, configs, recycles, reps = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4])
ts_re = re.compile(r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \w+ \[(\d+)\] ([^:]*): (\w+):\s+(.*)$')
sync_re = re.compile(r'time=([\d.]+) ms')
install_re = re.compile(r'fsync ([\d.]+) ms, install ([\d.]+) ms')
# Tail causes, in the order a commit is matched against them (run.sh's header).
CAUSES = ("creating", "installing", "ckpt", "writeback", "disk", "other")
ckpt_re = re.compile(r'checkpoint complete: .*?(\d+) WAL file\(s\) added, (\d+) removed, (\d+) recycled')

def log_counts(path):
    """Segments PostgreSQL created itself inside the measured window (see run.sh's header),
    checkpoints, and the time intervals (Unix seconds) of PostgreSQL's own segment creations
    in the commit path and of checkpoint sync phases (first fsync to "checkpoint complete")."""
    inside = False
    c = {"pg_commit_path": 0, "pg_checkpointer": 0, "pg_create_ms_max": 0.0, "pg_create_ms_sum": 0.0,
         "walseg_installed_log": 0, "walseg_install_ms_max": 0.0,
         "ckpt_added": 0, "ckpt_removed": 0, "ckpt_recycled": 0,
         "checkpoints": 0, "recycled_before": 0, "removed_before": 0}
    creating, installing, ckpt_sync = [], [], []
    started, sync_from = {}, None
    for line in open(path, errors="replace"):
        m = ts_re.match(line)
        if not m:
            continue
        ts, pid, btype, level, msg = m.groups()
        if msg.startswith("pg_walswitch: measure start"):
            inside = True
            continue
        if msg.startswith("pg_walswitch: measure end"):
            break
        if not inside:
            # the CHECKPOINT right before the window (the client's): what it recycled
            k = ckpt_re.search(msg)
            if k:
                c["recycled_before"] = int(k.group(3))
                c["removed_before"] = int(k.group(2))
            continue
        t = datetime.strptime(ts, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp()
        if msg == "creating and filling new WAL file":
            c["pg_checkpointer" if btype == "checkpointer" else "pg_commit_path"] += 1
            started[pid] = (t, btype)
        elif msg == "done creating and filling new WAL file" and pid in started:
            t0, who = started.pop(pid)
            ms = (t - t0) * 1000
            c["pg_create_ms_max"] = max(c["pg_create_ms_max"], ms)
            c["pg_create_ms_sum"] += ms
            if who != "checkpointer":
                creating.append((t0, t))
        elif msg.startswith("walseg: installed WAL segment"):
            c["walseg_installed_log"] += 1
            k = install_re.search(msg)
            if k:
                ms = float(k.group(1)) + float(k.group(2))
                c["walseg_install_ms_max"] = max(c["walseg_install_ms_max"], ms)
                installing.append((t - ms / 1000, t))
        elif msg.startswith("checkpoint sync: number="):
            if sync_from is None:
                k = sync_re.search(msg)
                sync_from = t - (float(k.group(1)) / 1000 if k else 0)
        else:
            k = ckpt_re.search(msg)
            if k:
                c["checkpoints"] += 1
                c["ckpt_added"] += int(k.group(1))
                c["ckpt_removed"] += int(k.group(2))
                c["ckpt_recycled"] += int(k.group(3))
                ckpt_sync.append((sync_from if sync_from is not None else t, t))
                sync_from = None
    return c, creating, installing, ckpt_sync

def io_samples(path):
    """The sampler's lines (run.sh's io_sampler): (unix s, dirty bytes, completed, in flight),
    the last two None without a device."""
    s = []
    if os.path.exists(path):
        for x in open(path):
            f = x.split()
            if len(f) == 5:
                dev = f[3] != "-"
                s.append((float(f[0]), int(f[1]) * 1024, int(f[3]) if dev else None,
                          int(f[4]) if dev else None))
    return s

def writeback_bursts(s, segment_bytes):
    """Intervals (Unix seconds) in which the kernel wrote back a burst of dirty pages: Dirty
    fell by at least max(64 MB, two segments) within 0.5 s (see run.sh's header), widened by
    one sample period on each side since a stall starts as the burst is queued."""
    drop = max(64 << 20, 2 * segment_bytes)
    out = []
    for i, (t0, d0, _, _) in enumerate(s):
        for t1, d1, _, _ in s[i + 1:]:
            if t1 - t0 > 0.5:
                break
            if d0 - d1 >= drop:
                out.append((t0 - 0.1, t1 + 0.1))
                break
    return out

def disk_stalls(s):
    """Intervals in which the disk had requests in flight at two samples in a row and
    completed none in between (see run.sh's header); the stall began up to one sample period
    before the first."""
    return [(a[0] - 0.1, b[0]) for a, b in zip(s, s[1:])
            if a[2] is not None and b[2] is not None and a[3] > 0 and b[3] > 0 and a[2] == b[2]]

def overlaps(a, b, intervals, slack=0.002):
    return any(a < y + slack and b > x - slack for x, y in intervals)

# Nearest rank as include/walseg/latency_summary.h defines it (p·n to 12 significant digits).
def pct(sorted_us, p):
    if not sorted_us:
        return 0.0
    x = p * len(sorted_us)
    r = min(max(math.ceil(x - x * 1e-12), 1), len(sorted_us))
    return sorted_us[r - 1] / 1000.0

rows = []
for recycle in recycles:
    for cfg in configs:
        runs = sorted(glob.glob(f"{work}/runs/{cfg}.recycle-{recycle}.rep*.json"))
        runs = [r for r in runs if not r.endswith(".walseg.json")]
        if not runs:
            continue
        lat, secs, commits, per_run = [], 0.0, 0, []
        agg = {}
        wal = {"switches": 0, "bytes": 0, "walseg_created": 0, "acct": 0}
        for r in runs:
            j = json.load(open(r))
            base = r[:-5]
            c, creating, installing, ckpt_sync = log_counts(base + ".log")
            t0 = j["start_unix_ms"] / 1000.0
            io = io_samples(base + ".io")
            intervals = dict(zip(CAUSES[:-1], (creating, installing, ckpt_sync,
                                               writeback_bursts(io, j["wal"]["segment_size"]),
                                               disk_stalls(io))))
            for x in open(base + ".samples"):
                st, l = (int(v) for v in x.split())
                a = t0 + st / 1e6
                cause = next((k for k, iv in intervals.items() if overlaps(a, a + l / 1e6, iv)), "other")
                lat.append((l, cause))
            secs += j["measured_s"]
            commits += j["commits"]
            for k, v in c.items():
                agg[k] = max(agg.get(k, 0), v) if k.endswith("_ms_max") else agg.get(k, 0) + v
            w = j["wal"]
            wal["switches"] += w["segments_switched"]
            wal["bytes"] += w["bytes"]
            wc = j["walseg_created"] or 0
            wal["walseg_created"] += wc
            # entered = future at start + created + recycled - future at end
            acct = (w["segments_switched"] - w["future_segments_start"] + w["future_segments_end"]
                    - wc - c["ckpt_recycled"]) - (c["pg_commit_path"] + c["pg_checkpointer"])
            wal["acct"] += acct
            per_run.append({"run": os.path.basename(base), "tps": j["tps"], "latency_ms": j["latency_ms"],
                            "switches": w["segments_switched"], "walseg_created": j["walseg_created"],
                            "future_segments_start": w["future_segments_start"],
                            "future_segments_end": w["future_segments_end"], "log": c, "acct": acct})
        lat.sort()
        p999 = pct([l for l, _ in lat], .999)
        tail = [cause for l, cause in lat if l / 1000.0 >= p999]
        causes = {k: tail.count(k) for k in CAUSES}
        lat_cause = lat
        lat = [l for l, _ in lat]
        rows.append({"config": cfg, "wal_recycle": recycle, "runs": len(runs), "commits": commits,
                     "seconds": secs, "tps": commits / secs,
                     "latency_ms": {"p50": pct(lat, .5), "p99": pct(lat, .99), "p99.9": pct(lat, .999),
                                    "p99.99": pct(lat, .9999), "max": lat[-1] / 1000.0},
                     "wal_bytes_per_commit": wal["bytes"] / max(commits, 1),
                     "segments_switched": wal["switches"], "walseg_created": wal["walseg_created"],
                     "pg_created_commit_path": agg["pg_commit_path"],
                     "pg_created_checkpointer": agg["pg_checkpointer"],
                     "pg_create_ms_max": agg["pg_create_ms_max"],
                     "walseg_install_ms_max": agg["walseg_install_ms_max"],
                     "pg_create_ms_avg": agg["pg_create_ms_sum"] / max(1, agg["pg_commit_path"] + agg["pg_checkpointer"]),
                     "checkpoints": agg["checkpoints"], "recycled": agg["ckpt_recycled"],
                     "recycled_before": agg["recycled_before"],
                     "removed": agg["ckpt_removed"], "acct": wal["acct"],
                     "tail_causes": causes, "max_cause": lat_cause[-1][1], "per_run": per_run})

hdr = ("| configuration | wal_recycle | TPS | p50 ms | p99 ms | p99.9 ms | p99.99 ms | max ms | "
       "switches | PG created (commit path + ckpt) | PG create ms avg/max | walseg created | "
       f"recycled (before + in window) | ckpts in window | >= p99.9 during {'/'.join(CAUSES)} | max during |")
lines = [hdr, "|" + "---|" * 16]
for r in rows:
    l = r["latency_ms"]
    lines.append(f'| {r["config"]} | {r["wal_recycle"]} | {r["tps"]:.1f} | {l["p50"]:.2f} | {l["p99"]:.2f} | '
                 f'{l["p99.9"]:.2f} | {l["p99.99"]:.2f} | {l["max"]:.2f} | {r["segments_switched"]} | '
                 f'{r["pg_created_commit_path"] + r["pg_created_checkpointer"]} '
                 f'({r["pg_created_commit_path"]} + {r["pg_created_checkpointer"]}) | '
                 f'{r["pg_create_ms_avg"]:.1f}/{r["pg_create_ms_max"]:.1f} | {r["walseg_created"]} | '
                 f'{r["recycled_before"]} + {r["recycled"]} | {r["checkpoints"]} | '
                 f'{"/".join(str(r["tail_causes"][k]) for k in CAUSES)} | '
                 f'{r["max_cause"]} |')

verdict = []
def find(cfg, rec):
    return next((r for r in rows if r["config"] == cfg and r["wal_recycle"] == rec), None)
for rec in recycles:
    base = find("stock-zero-on", rec)
    if not base:
        continue
    for r in rows:
        if r["wal_recycle"] != rec or not r["config"].startswith("walseg-"):
            continue
        q = r["latency_ms"]["p99.9"] / base["latency_ms"]["p99.9"]
        m = r["latency_ms"]["max"] / base["latency_ms"]["max"]
        t = r["tps"] / base["tps"]
        ok = q <= 0.5 and m <= 0.5 and t >= 1.0
        verdict.append(f'wal_recycle={rec} {r["config"]} / stock-zero-on: p99.9 x{q:.2f}, max x{m:.2f}, '
                       f'TPS x{t:.2f}' + (f' -> {"MET" if ok else "not met"} (p99.9 and max <= 0.5x, TPS >= 1x)'
                                          if rec == "off" else ""))

out = "\n".join(lines + [""] + verdict)
print()
print(out)
meta = open(f"{work}/meta.txt").read() if os.path.exists(f"{work}/meta.txt") else ""
with open(f"{work}/results.md", "w") as f:
    f.write("# pg_walswitch results\n\n" + meta + "\n" + out + "\n")
json.dump({"rows": rows, "verdict": verdict}, open(f"{work}/results.json", "w"), indent=2)
print(f"\nresults: {work}/results.md, {work}/results.json" + (" (removed: --rm)" if os.environ.get("PGW_RM") == "1" else ""))
PY
if ((remove_work)); then rm -rf "$work"; fi
