#!/usr/bin/env bash
# PostgreSQL's 2013 experiment (pgsql-hackers, "fallocate / posix_fallocate for new WAL file
# creation"), redone with walseg's init methods and counted at the device: for classic
# zero-fill (walseg's zero_write), posix_fallocate and glibc's emulation (walseg's
# glibc_emulation, one byte per block), 10 iterations of creating a 16 MB file (fsync, close)
# and rewriting it in 8 kB writes (fdatasync at the end of each rewrite, or every N writes).
#
# Usage (root, after scripts/build.sh):
#   bench/seeds/pg2013_fallocate.sh [--size SIZE] [--iterations N] [--sync-every N]
#                                   [--fs "ext4 xfs ..."] [--work DIR]
#   defaults: 16M, 10 iterations, --sync-every 0 (one fdatasync per rewrite; 1 is a WAL
#   commit per 8 kB write, about 20 times longer here).
# Prints a markdown section on stdout: per filesystem the thread's line
# `method: classic. 10 open/close iterations, 10 rewrite in 22.6949s`, and device bytes and
# write amplification (device bytes / bytes the rewrites wrote: creation's own writes are the
# method's cost on top), beside what the thread reported. Images live in WORK (default
# ./pg2013-work) and are unmounted and removed on exit, also when interrupted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
seed=${WALSEG_SEED_IO:-$top/build/bin/walseg_seed_io}
size=16M iterations=10 sync_every=0 work=./pg2013-work
source "$here/../fs_lib.sh"
fslist=$(fs_names | tr '\n' ' ')
while [ $# -gt 0 ]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --iterations) iterations=$2; shift 2 ;;
    --sync-every) sync_every=$2; shift 2 ;;
    --fs) fslist=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "usage: $0 [--size SIZE] [--iterations N] [--sync-every N] [--fs \"NAMES\"] [--work DIR]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "pg2013_fallocate.sh: needs root (mkfs, mount)" >&2; exit 1; }
[ -x "$seed" ] || { echo "pg2013_fallocate.sh: $seed not built; run scripts/build.sh" >&2; exit 1; }
size_b=$(numfmt --from=iec "${size%B}")
mkdir -p "$work"
work=$(cd "$work" && pwd)
trap 'fs_cleanup; rmdir "$work/mnt"/* "$work/mnt" "$work/img" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM

echo "## PostgreSQL 2013: classic zero-fill, posix_fallocate, glibc emulation"
echo
echo "$iterations iterations of creating a $size file and rewriting it in 8 kB writes"
echo "(fdatasync $([ "$sync_every" = 0 ] && echo "at the end of each rewrite" || echo "every $sync_every writes"))."
echo "Amplification = device bytes / bytes the rewrites wrote, so creation's zeros count in it."
echo
for fs in $fslist; do
  fs_mount "$fs" "$work" "$(( size_b / 1048576 * 2 + 512 ))M"
  mnt=$FS_MNT
  echo "### $fs"
  echo
  echo '```'
  for method in zero_write posix_fallocate glibc_emulation; do
    "$seed" pg2013 --dir "$mnt" --method "$method" --iterations "$iterations" --size "$size_b" \
      --write 8192 --sync-every "$sync_every"
  done
  echo '```'
  echo
  fs_umount "$mnt"
done
echo "The thread's figures: RHEL 5/6, ext3 and ext4; the three methods within noise of each other"
echo "(its absolute times came from its machines; only the comparison is carried over)."
