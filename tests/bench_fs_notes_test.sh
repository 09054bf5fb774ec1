#!/usr/bin/env bash
# bench_fs_notes_test.sh: what `walseg bench` says about two filesystems whose figures need a
# word, on loop mounts. btrfs (copy-on-write): the verdict's "What to set" weighs the recycle
# row it measured, PostgreSQL's advice there being wal_recycle = off: off when the recycle row's
# commit p10 is above the verdict's threshold, on (saying the run does not show the cost) when
# it is within it; the header says the recycle rows are weighed. xfs: a row whose `allocated`
# exceeds the segment size gets the speculative-preallocation note (xfs trims that at close,
# so whether a row shows it is the kernel's; the check applies when one does).
#
# Usage: bench_fs_notes_test.sh /path/to/walseg   (ctest: add_test bench_fs_notes, SKIP_RETURN_CODE 77)
# Needs root, loop devices, mkfs.btrfs and mkfs.xfs; exits 77 (skip) without them. The EXIT
# trap unmounts and detaches everything made here.
set -u -o pipefail

WALSEG=${1:?usage: bench_fs_notes_test.sh WALSEG_BINARY}
skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root (loop mounts)"
for t in losetup mkfs.btrfs mkfs.xfs mount umount python3; do command -v "$t" >/dev/null || skip "$t not found"; done
[[ -x $WALSEG ]] || { echo "FAIL: walseg binary '$WALSEG' is not executable"; exit 1; }

WORK=$(mktemp -d /var/tmp/walseg_fs_notes.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
MOUNTS=()
LOOPS=()
cleanup() {
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}"; done
  for i in "${LOOPS[@]}"; do losetup -d "$i" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP

source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

# make_fs TYPE SIZE_MB: image, loop device, mount at $WORK/TYPE; sets MNT.
make_fs() {
  local type=$1 img=$WORK/$1.img dev
  truncate -s "${2}M" "$img"
  dev=$(losetup -f --show "$img" 2>/dev/null) || skip "loop devices unavailable"
  LOOPS+=("$dev")
  "mkfs.$type" -q "$dev" >/dev/null 2>&1 || mkfs."$type" -f "$dev" >/dev/null 2>&1 || { echo "FAIL: mkfs.$type"; exit 1; }
  MNT=$WORK/$type
  mkdir -p "$MNT"
  mount "$dev" "$MNT" || { echo "FAIL: mount $type"; exit 1; }
  MOUNTS+=("$MNT")
}

run_bench() {  # DIR JSON: a small create and write run
  "$WALSEG" bench --dir "$1" --phases create,write --methods zero_write,sparse,none --segment-size 1MB \
    --segments 3 --write-bytes 256kB --json "$2" 2>&1
}

make_fs btrfs 400
out=$(run_bench "$MNT" "$WORK/btrfs.json")
status=$?
check "btrfs: the run succeeds (got $status)" test "$status" -eq 0
check "btrfs: the header says the recycle rows are weighed" contains "$out" '"What to set" weighs the recycle rows'
check "btrfs: what to set names PostgreSQL's copy-on-write advice" contains "$out" \
  "btrfs is copy-on-write, where PostgreSQL advises wal_recycle = off; here recycled segments commit in"
# The value follows from the recycle write row's p10 against the verdict's threshold.
expect=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rec = [r for r in d["rows"] if r["phase"] == "write" and r["method"] == "recycle"][0]
print("off" if rec["p10_us"] > d["verdict"]["threshold_us"] else "on")' "$WORK/btrfs.json" 2>/dev/null)
got=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["verdict"]["what_to_set"]
print(s["postgresql"]["wal_recycle"], s["walseg"]["walseg.recycle"])' "$WORK/btrfs.json" 2>/dev/null)
check "btrfs: wal_recycle and walseg.recycle are $expect, from the recycle row (got '$got')" test "$got" == "$expect $expect"
check "btrfs: the printed line says it" contains "$out" "wal_recycle = $expect  ("

make_fs xfs 400
out=$(run_bench "$MNT" "$WORK/xfs.json")
status=$?
check "xfs: the run succeeds (got $status)" test "$status" -eq 0
over=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted({r["method"] for r in d["rows"] if r["allocated_bytes"] > d["segment_size"]})))' "$WORK/xfs.json" 2>/dev/null)
if [[ -n $over ]]; then
  check "xfs: rows over the segment size ($over) get the speculative-preallocation note" contains "$out" \
    "xfs's speculative preallocation reserves blocks past the end of a file being written"
else
  check "xfs: no row over the segment size, no note" lacks "$out" "speculative preallocation"
fi

check_summary
