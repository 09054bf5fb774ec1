#!/usr/bin/env bash
# MariaDB's 2018 experiment (maria-developers, February 2018, MDEV-14425), redone with walseg's
# init methods and counted at the device: N writers (1 and 4) at once, each writing its own file
# in 2 KiB blocks, into a file preallocated by posix_fallocate (walseg's posix_fallocate
# method) or appended to (walseg's none), buffered as in the thread (one fdatasync at the end,
# so that the bytes reach the device and are counted) and with an fdatasync after every block
# (the WAL case). The hypothesis under test: overwriting preallocated blocks makes a journaled
# filesystem write more than appending does.
#
# Usage (root, after scripts/build.sh):
#   bench/seeds/mdev14425.sh [--size SIZE] [--sync-size SIZE] [--fs "ext4 xfs ..."] [--work DIR]
#   --size: bytes per file, buffered runs (default 64M; the thread's files were 2 GiB);
#   --sync-size: bytes per file with an fdatasync per block (default 1M). Sizes take K/M/G.
# Prints a markdown section on stdout: per filesystem, writers, method and sync mode, each
# writer's elapsed time as `time` prints it, device bytes and write amplification, flush
# requests and jbd2 commits, beside the thread's XFS figures. Images live in WORK (default
# ./mdev14425-work) and are unmounted and removed on exit, also when interrupted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
seed=${WALSEG_SEED_IO:-$top/build/bin/walseg_seed_io}
size=64M sync_size=1M work=./mdev14425-work
source "$here/../fs_lib.sh"
fslist=$(fs_names | tr '\n' ' ')
while [ $# -gt 0 ]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --sync-size) sync_size=$2; shift 2 ;;
    --fs) fslist=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "usage: $0 [--size SIZE] [--sync-size SIZE] [--fs \"NAMES\"] [--work DIR]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "mdev14425.sh: needs root (mkfs, mount)" >&2; exit 1; }
[ -x "$seed" ] || { echo "mdev14425.sh: $seed not built; run scripts/build.sh" >&2; exit 1; }
bytes() { numfmt --from=iec "${1%B}"; }
# walseg_seed_io's device line as four table cells (bytes | amplification | flushes | commits).
device_cells() {
  local cells
  cells=$(sed -n 's/^device [^:]*: \([0-9]*\) bytes written for [0-9]* asked, write amplification \([0-9.]*\), flushes \([0-9a-z]*\), journal commits \([0-9a-z]*\),.*/\1 | \2 | \3 | \4/p')
  echo "${cells:-n/a | n/a | n/a | n/a}"
}
size_b=$(bytes "$size") sync_b=$(bytes "$sync_size")
mkdir -p "$work"
work=$(cd "$work" && pwd)
trap 'fs_cleanup; rmdir "$work/mnt"/* "$work/mnt" "$work/img" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM
# Room for four files of the larger size, and for mkfs.btrfs's minimum.
image=$(( (4 * (size_b > sync_b ? size_b : sync_b)) / 1048576 + 512 ))M

echo "## MDEV-14425 (2018): append versus posix_fallocate, 2 KiB blocks"
echo
echo "Files of $size (buffered, one fdatasync at the end) and $sync_size (fdatasync per block); the"
echo "thread's were 2 GiB. \`real\` per writer as \`time\` prints it; device figures for all writers"
echo "together (amplification = device bytes / bytes the writers wrote)."
echo
echo "| filesystem | writers | method | sync | real per writer | device bytes | amplification | flushes | jbd2 commits |"
echo "|---|---|---|---|---|---|---|---|---|"
for fs in $fslist; do
  fs_mount "$fs" "$work" "$image"
  mnt=$FS_MNT
  for sync in none block; do
    sz=$size_b
    [ "$sync" = block ] && sz=$sync_b
    for writers in 1 4; do
      for method in none posix_fallocate; do
        out=$("$seed" mdev14425 --dir "$mnt" --writers "$writers" --size "$sz" --method "$method" --sync "$sync")
        echo "$out" >&2
        reals=$(awk '$1 == "real" {printf "%s%s", sep, $2; sep=", "}' <<<"$out")
        used=$(sed -n 's/.* used \([a-z_]*\),.*/\1/p' <<<"$out" | sort -u | paste -sd/)
        dev=$(device_cells <<<"$out")
        label=$method
        [ "$method" = none ] && label="append (none)"
        [ "$method" != none ] && [ "$used" != "$method" ] && label="$method (used $used)"
        echo "| $fs | $writers | $label | $([ "$sync" = block ] && echo "fdatasync per block" || echo buffered) | $reals | $dev |"
      done
    done
  done
  fs_umount "$mnt"
done
echo
echo "The thread's figures (XFS on four SSDs in RAID 5, 2 GiB per file, four writers at once,"
echo "buffered): appending 6.3-6.7 s, preallocated 6.1-6.7 s per writer. It measured no device bytes."
