#!/usr/bin/env bash
# bench_fs_notes_test.sh: what `walseg bench` says about two filesystems whose figures need a
# word, on loop mounts. btrfs (copy-on-write): "What to set" turns recycling off, PostgreSQL's
# advice there and walseg's own warning, with the recycle row beside it, and the tie-break puts
# sparse first, so the advice draws no copy-on-write WARNING. xfs: a row whose `allocated`
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
check "btrfs: the header says how copy-on-write changes the verdict" contains "$out" \
  'the methods that reserve nothing first, and "What to set" turns recycling off'
check "btrfs: what to set names PostgreSQL's copy-on-write advice and the measured row" contains "$out" \
  "btrfs is copy-on-write: PostgreSQL advises wal_recycle = off there, and walseg warns against recycling"
# The new-user trial of this session: "What to set" said recycle = on (the recycle row within
# the threshold) and posix_fallocate (the tie-break's reserve-first order), and following it
# drew walseg's own copy-on-write WARNING. Recycling is off there; among the methods that
# passed both steps, sparse (which reserves nothing) comes first.
got=$(python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["verdict"]
s = v["what_to_set"]
print(s["postgresql"]["wal_recycle"], s["walseg"]["walseg.recycle"], "sparse" in v["passed_both"], v["both"])' \
  "$WORK/btrfs.json" 2>/dev/null)
check "btrfs: wal_recycle and walseg.recycle are off (got '$got')" test "${got% * *}" == "off off"
check "btrfs: the printed line says it" contains "$out" "wal_recycle = off  ("
if [[ $got == *" True "* ]]; then
  check "btrfs: sparse passed both steps, so it is the choice (got '$got')" test "${got##* }" == "sparse"
  werr=$("$WALSEG" write --dir "$MNT/advised" --records 5 -c walseg.segment_size=1MB -c walseg.init_method=sparse \
    -c walseg.recycle=off 2>&1)
  check "btrfs: the advised settings draw no WARNING" lacks "$werr" "WARNING"
fi

# New-user trial 5: the commit phase opens one scratch WAL per row, and btrfs's WARNING about
# zero_write and recycling came once per row (four times): each kind is said once.
out=$("$WALSEG" bench --dir "$MNT" --phases commit --segment-size 1MB --clients 1,2 --commit-seconds 0.2 \
  -c walseg.init_method=zero_write 2>&1)
n=$(grep -c "WARNING" <<<"$out")
check "btrfs: the commit phase's WARNINGs are said once each (got $n)" test "$n" -ge 1 -a "$n" -le 2
check "btrfs: no WARNING line repeats itself" test "$(grep "WARNING" <<<"$out" | sed 's/"[^"]*"//g' | sort | uniq -d | wc -l)" -eq 0

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
