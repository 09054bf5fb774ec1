#!/usr/bin/env bash
# Append versus preallocate on journaled filesystems: runs `walseg bench --json` on five
# loop-mounted filesystems built in image files, tmpfs, and a FUSE pass-through mount without
# fallocate, then the two seed experiments (bench/seeds), and writes one combined report (a
# markdown table per phase, filesystem x method, with device bytes, write amplification and
# flushes per commit) and gnuplot plots of creation cost, commit latency and amplification.
#
# Usage (root): bench/fs_matrix.sh [WORK_DIR] [-- extra walseg bench options]
#   WORK_DIR defaults to ./fs-matrix; results land in WORK_DIR/report.md, *.json, *.png.
#   SEEDS=0 leaves the seed experiments out; SEED_ARGS adds options to both seed scripts
#   (e.g. SEED_ARGS="--size 16M"); IMAGE_SIZE sets the image size (default 3G).
# Filesystems: ext4 (data=ordered), ext4 data=journal, xfs, btrfs, ext4 without extents (where
# fallocate is unsupported and the fallback shows), tmpfs, and fuse-nofallocate: walseg_lazyfs
# --passthrough --no-fallocate over a directory of a loop ext4, where every posix_fallocate is
# glibc's emulation (as on NFS before 4.2; MariaDB MDEV-32268); its device figures are the
# backing ext4's (--device-of). Everything mounted or created is unmounted and removed on
# exit, also when interrupted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
walseg=${WALSEG:-$top/build/bin/walseg}
case ${1:-} in
  -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) [ "$1" = "--" ] || { echo "fs_matrix.sh: unknown option $1 (see --help)" >&2; exit 2; } ;;
esac
work=${1:-./fs-matrix}
[ "${1:-}" = "--" ] && work=./fs-matrix
[ "${1:-}" ] && shift
[ "${1:-}" = "--" ] && shift
bench_args=("$@")
[ ${#bench_args[@]} -gt 0 ] || bench_args=(--segments 5 --commit-seconds 2)
image_size=${IMAGE_SIZE:-3G}

[ "$(id -u)" = 0 ] || { echo "fs_matrix.sh: needs root (mkfs, mount)" >&2; exit 1; }
[ -x "$walseg" ] || { echo "fs_matrix.sh: $walseg not built; run scripts/build.sh" >&2; exit 1; }
for tool in mkfs.ext4 mkfs.xfs mkfs.btrfs gnuplot python3; do
  command -v "$tool" >/dev/null || { echo "fs_matrix.sh: $tool missing (apt-get install e2fsprogs xfsprogs btrfs-progs gnuplot-nox python3)" >&2; exit 1; }
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
# img/ and mnt/ are made here and removed whole at the end: never a user's.
for d in "$work/img" "$work/mnt"; do
  [ -e "$d" ] && { echo "fs_matrix.sh: $d exists (an interrupted run's, or not ours); remove it or give another WORK_DIR" >&2; exit 1; }
done
source "$here/fs_lib.sh"
LAZYFS=${LAZYFS:-$top/build/bin/walseg_lazyfs}
# shellcheck source=../tests/lazyfs/lazyfs_lib.sh
source "$top/tests/lazyfs/lazyfs_lib.sh"
tmpfs_mnt=
cleanup() {
  lazyfs_cleanup
  [ -n "$tmpfs_mnt" ] && { umount "$tmpfs_mnt" 2>/dev/null || umount -l "$tmpfs_mnt" 2>/dev/null || true; }
  fs_cleanup
  rm -rf "$work"/img "$work"/mnt
}
trap cleanup EXIT
trap 'exit 130' INT TERM

run_bench() {  # NAME DIR [extra bench options]
  local name=$1 dir=$2
  shift 2
  echo "== $name ($(findmnt -n -o FSTYPE,OPTIONS -T "$dir"))" >&2
  "$walseg" bench --dir "$dir" --json "$work/$name.json" "$@" "${bench_args[@]}" >"$work/$name.txt" 2>"$work/$name.log" ||
    { echo "walseg bench failed on $name; see $work/$name.log" >&2; exit 1; }
}

names=()
for name in $(fs_names); do
  fs_mount "$name" "$work" "$image_size"
  run_bench "$name" "$FS_MNT"
  fs_umount "$FS_MNT"
  names+=("$name")
done

tmpfs_mnt="$work/mnt/tmpfs"
mkdir -p "$tmpfs_mnt"
mount -t tmpfs -o size="$image_size" tmpfs "$tmpfs_mnt"
run_bench tmpfs "$tmpfs_mnt"
umount "$tmpfs_mnt"
tmpfs_mnt=
names+=(tmpfs)

skip=$(lazyfs_skip_reason "$LAZYFS")
if [ -z "$skip" ]; then
  fs_mount ext4 "$work" "$image_size"
  backing=$FS_MNT/backing
  mkdir -p "$backing"
  fuse="$work/mnt/fuse-nofallocate"
  lazyfs_mount "$fuse" "$work/lazyfs.sock" --passthrough "$backing" --no-fallocate
  run_bench fuse-nofallocate "$fuse" --device-of "$backing"
  lazyfs_umount "$fuse"
  fs_umount "$FS_MNT"
  names+=(fuse-nofallocate)
else
  echo "fs_matrix.sh: no FUSE run: $skip" >&2
fi

if [ "${SEEDS:-1}" != 0 ]; then
  # shellcheck disable=SC2086 # SEED_ARGS is a list of options
  "$here/seeds/mdev14425.sh" --work "$work/seed-work" ${SEED_ARGS:-} >"$work/mdev14425.md" 2>"$work/mdev14425.log"
  # shellcheck disable=SC2086
  "$here/seeds/pg2013_fallocate.sh" --work "$work/seed-work" ${SEED_ARGS:-} >"$work/pg2013.md" 2>"$work/pg2013.log"
fi

python3 "$here/fs_report.py" "$work" "${names[@]}"
echo "report: $work/report.md" >&2
