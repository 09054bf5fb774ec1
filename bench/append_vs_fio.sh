#!/usr/bin/env bash
# Single-writer commit rate of walseg's WAL writer (buffered, then walseg.direct_io = on, with
# walseg.sync_method = fdatasync and, direct only, open_datasync) against two references
# measured in the same run on the same filesystem: fio (ioengine io_uring, 8 kB writes,
# fdatasync after each, into a zero-filled file of one segment's size) and pg_test_fsync's
# "one 8kB write" fdatasync row. The three are interleaved for ROUNDS rounds and compared by
# their medians, because on a shared virtual disk one run of each moves by 20% from minute to
# minute. Each walseg run also measures group commit (walseg bench's commit phase: 1 client,
# then 8, each flushing its own 8 kB record), reported as the median over rounds of each
# round's 8-to-1 ratio.
#
# The single-writer runs (walseg's append phase, fio, pg_test_fsync) are pinned to one CPU:
# the one that takes the interrupts of DIR's disk. A writer on another CPU waits at every
# commit for the wake-up to cross over (on a 2-vCPU virtual machine the same fio job made 6400
# commits/s there against 9700 on the interrupts' CPU), and which CPU an unpinned program
# lands on is the scheduler's choice at its start: a coin toss per run that moved the ratios
# by 30%. The group commit phase runs unpinned: its 8 clients need every CPU.
#
# Usage: bench/append_vs_fio.sh [--cpu N|none|auto] [DIR] [SEGMENTS] [ROUNDS]
#        DIR default: current directory; SEGMENTS x 4 MB of 8 kB commits per walseg run,
#        default 16; ROUNDS default 5; --cpu: pin to CPU N, or not at all (default auto: the
#        CPU that took most of the interrupts of DIR's disk, if this process's affinity, as
#        taskset or a cpuset set it, includes it; unpinned otherwise, and when the disk has no
#        interrupts of its own, as tmpfs, a loop device or device-mapper).
# Needs fio and PostgreSQL's pg_test_fsync (apt-get install fio postgresql-15).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
walseg=${WALSEG:-$here/../build/bin/walseg}
cpu=auto
if [ "${1:-}" = --cpu ]; then
  [ $# -ge 2 ] || { echo "append_vs_fio.sh: --cpu needs a CPU number, none or auto" >&2; exit 2; }
  cpu=$2
  shift 2
fi
dir=${1:-.}
segments=${2:-16}
rounds=${3:-5}
[ -d "$dir" ] || { echo "append_vs_fio.sh: $dir is not a directory" >&2; exit 2; }
dir=$(cd -- "$dir" && pwd)
for n in "$segments" "$rounds"; do
  [[ "$n" =~ ^[1-9][0-9]{0,4}$ ]] ||
    { echo "append_vs_fio.sh: SEGMENTS and ROUNDS are whole numbers from 1 to 99999, not \"$n\"" >&2; exit 2; }
done
pgbin=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
command -v fio >/dev/null || { echo "append_vs_fio.sh: fio missing (apt-get install fio)" >&2; exit 1; }
[ -x "$pgbin/pg_test_fsync" ] || { echo "append_vs_fio.sh: $pgbin/pg_test_fsync missing" >&2; exit 1; }

# The CPU with the most interrupts from the disk holding $1 (virtio "virtio1-req.0", NVMe
# "nvme0q1", ...); prints nothing when that disk has no interrupts of its own.
irq_cpu() {
  local src dev name
  # --nofsroot: a bind mount's source is "/dev/vda[/its/root]" otherwise.
  src=$(findmnt -nvo SOURCE --target "$1" 2>/dev/null) || return 0
  dev=$(basename "$(readlink -f "$src")")
  [ -e "/sys/class/block/$dev/partition" ] && dev=$(basename "$(readlink -f "/sys/class/block/$dev/..")")
  [ -e "/sys/class/block/$dev/device" ] || return 0
  name=$(basename "$(readlink -f "/sys/class/block/$dev/device")")
  # Columns are named by the header ("CPU0 CPU2 ..."): offline CPUs have none.
  awk -v n="$name" 'NR == 1 { ncpu = NF; for (i = 1; i <= NF; i++) id[i - 1] = substr($i, 4); next }
    index($NF, n "-") == 1 || index($NF, n "q") == 1 { for (i = 0; i < ncpu; i++) sum[i] += $(i + 2) }
    END { best = -1; for (i = 0; i < ncpu; i++) if (sum[i] > 0 && (best < 0 || sum[i] > sum[best])) best = i
          if (best >= 0) print id[best] }' /proc/interrupts
}
# Whether CPU $1 is in this process's affinity list (Cpus_allowed_list: "0-3,6"): an outer
# taskset or a cpuset is the user's choice, which auto does not override.
may_run_on() {
  local part
  for part in $(awk '/^Cpus_allowed_list:/ { gsub(",", " ", $2); print $2 }' /proc/self/status); do
    if [ "$1" -ge "${part%-*}" ] && [ "$1" -le "${part#*-}" ]; then return 0; fi
  done
  return 1
}
case "$cpu" in
  auto)
    cpu=$(irq_cpu "$dir")
    if [ -z "$cpu" ]; then
      cpu=none; why="no interrupts found for the disk holding $dir"
    elif ! may_run_on "$cpu"; then
      why="CPU $cpu takes the interrupts of the disk holding $dir, but this process's CPU affinity"
      why+=" excludes it"; cpu=none
    else
      why="takes the interrupts of the disk holding $dir"
    fi ;;
  none) why="--cpu none" ;;
  *)
    [[ "$cpu" =~ ^[0-9]+$ ]] && taskset -c "$cpu" true 2>/dev/null ||
      { echo "append_vs_fio.sh: --cpu $cpu: not a CPU this process may run on" >&2; exit 2; }
    why="--cpu $cpu" ;;
esac
if [ "$cpu" = none ]; then
  pin=()
  echo "single-writer runs not pinned ($why)" >&2
else
  pin=(taskset -c "$cpu")
  echo "single-writer runs pinned to CPU $cpu ($why)" >&2
fi
work=$(mktemp -d "$dir/append-vs-fio.XXXXXX")
# Each program runs in the background and is waited for, so that an interrupt is handled at
# once and stops it before its directory is removed (a walseg left running went on writing
# into the removed directory and recreated it).
child=
run() {
  "$@" &
  child=$!
  wait "$child"
}
cleanup() {
  if [ -n "$child" ]; then kill "$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bytes=$((segments * 4 * 1024 * 1024))
for r in $(seq 1 "$rounds"); do
  # walseg: one writer, 8 kB records each flushed, into zero-filled 16 MB segments made before
  # the run, both io methods, through the page cache and with O_DIRECT; then group commit.
  # open_datasync only with O_DIRECT, as PostgreSQL uses it (pg_test_fsync's open_datasync row
  # too): with no FUA on the device the kernel still sends a cache flush after each write, but
  # io_uring then needs no linked fsync, which it can only run in a worker thread.
  for conf in off.fdatasync on.fdatasync on.open_datasync; do
    args=(--dir "$work/w" --methods zero_write --segments "$segments"
          -c "walseg.direct_io=${conf%%.*}" -c "walseg.sync_method=${conf#*.}")
    run "${pin[@]}" "$walseg" bench "${args[@]}" --phases append --json "$work/walseg.$conf.$r.json" >/dev/null
    run "$walseg" bench "${args[@]}" --phases commit --json "$work/commit.$conf.$r.json" >/dev/null
  done
  # fio: the same number of 8 kB commits into a 16 MB file laid out with zeros first
  # (overwrite=1), so it compares with zero-filled segments.
  run "${pin[@]}" fio --name=wal --directory="${work//:/\\:}" --ioengine=io_uring --rw=write --bs=8k --fdatasync=1 \
    --size=16M --io_size="$bytes" --overwrite=1 --fallocate=none --output-format=json >"$work/fio.$r.json"
  rm -f "$work"/wal.*
  # pg_test_fsync: its fdatasync row of "Compare file sync methods using one 8kB write".
  run "${pin[@]}" "$pgbin/pg_test_fsync" -f "$work/pg_test_fsync.out" -s 1 >"$work/pg_test_fsync.$r.txt"
  echo "round $r of $rounds done" >&2
done

python3 - "$work" "$rounds" "$cpu" "$why" <<'PY'
import json, re, statistics, sys
work, rounds, cpu, why = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
confs = ("off.fdatasync", "on.fdatasync", "on.open_datasync")
walseg = {}  # (conf, io) -> ops/s per round
group = {}   # (conf, io) -> 8 clients / 1 client per round
fio, pg = [], []
tainted = []  # append runs during which segments were made
for r in range(1, rounds + 1):
    for conf in confs:
        commit = {}
        for x in (json.load(open(f"{work}/walseg.{conf}.{r}.json"))["rows"] +
                  json.load(open(f"{work}/commit.{conf}.{r}.json"))["rows"]):
            if x["phase"] == "append":
                walseg.setdefault((conf, x["io"]), []).append(x["ops_per_s"])
                if x["created_while_measuring"]:  # then the run also measured fills
                    tainted.append(f"round {r} {conf} {x['io']}: {x['created_while_measuring']}")
            elif x["phase"] == "commit":
                commit[(x["io"], x["clients"])] = x["ops_per_s"]
        for io in ("pwrite", "io_uring"):
            group.setdefault((conf, io), []).append(commit[(io, 8)] / commit[(io, 1)])
    fio.append(json.load(open(f"{work}/fio.{r}.json"))["jobs"][0]["write"]["iops"])
    text = open(f"{work}/pg_test_fsync.{r}.txt").read()
    one = text.split("one 8kB write", 1)[1].split("Compare file sync methods using two", 1)[0]
    pg.append(float(re.search(r"fdatasync\s+([\d.]+) ops/sec", one).group(1)))
med = statistics.median
fmt = lambda xs, d=0: " ".join(f"{x:.{d}f}" for x in xs)
print(f"rounds: {rounds} (medians; every round listed)")
if tainted:
    print("WARNING: segments were made while walseg's append phase was timed: " + "; ".join(tainted))
pinned = "not pinned" if cpu == "none" else f"pinned to CPU {cpu}"
print(f"single-writer runs (walseg append, fio, pg_test_fsync) {pinned}: {why}; group commit unpinned")
name = lambda conf: "direct_io={} sync_method={}".format(*conf.split("."))
for (conf, io), xs in sorted(walseg.items()):
    label = f"walseg append {io:<8} {name(conf)} (zero_write, 8 kB records flushed one by one)"
    print(f"{label:<100} {med(xs):.0f}/s  [{fmt(xs)}]")
print(f"{'fio io_uring 8 kB write + fdatasync':<100} {med(fio):.0f}/s  [{fmt(fio)}]")
print(f"{'pg_test_fsync fdatasync, one 8kB write':<100} {med(pg):.0f}/s  [{fmt(pg)}]")
for (conf, io), xs in sorted(group.items()):
    label = f"walseg commit {io:<8} {name(conf)} 8 clients / 1 client"
    print(f"{label:<100} {med(xs):.2f}x  [{fmt(xs, 2)}]")
for conf in confs:
    ur = med(walseg[(conf, "io_uring")])
    best = max(med(walseg[(conf, "pwrite")]), ur)
    print(f"{name(conf)}: walseg io_uring / fio = {ur / med(fio):.2f} (target >= 0.95); "
          f"walseg best / pg_test_fsync = {best / med(pg):.2f} (target >= 0.95); "
          f"8 clients / 1 = {med(group[(conf, 'pwrite')]):.2f} pwrite, "
          f"{med(group[(conf, 'io_uring')]):.2f} io_uring (target >= 4)")
PY
