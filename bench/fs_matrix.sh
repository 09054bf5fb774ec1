#!/usr/bin/env bash
# Append versus preallocate on journaled filesystems: runs `walseg bench --json` on six
# loop-mounted filesystems built in image files, then writes one combined report (a markdown
# table per phase, filesystem x method) and gnuplot plots of creation cost and commit latency.
#
# Usage (root): bench/fs_matrix.sh [WORK_DIR] [-- extra walseg bench options]
#   WORK_DIR defaults to ./fs-matrix; results land in WORK_DIR/report.md, *.json, *.png.
# Filesystems: ext4 (data=ordered), ext4 data=journal, xfs, btrfs, ext4 without extents (where
# fallocate is unsupported and the fallback shows), tmpfs. Everything mounted or created is
# unmounted and removed on exit, also when interrupted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
walseg=${WALSEG:-$top/build/bin/walseg}
work=${1:-./fs-matrix}
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
mounts=()
cleanup() {
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  rm -rf "$work"/img "$work"/mnt
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# name | mkfs command (image appended) | mount options
filesystems=(
  "ext4|mkfs.ext4 -q -F|data=ordered"
  "ext4-journal|mkfs.ext4 -q -F|data=journal"
  "xfs|mkfs.xfs -q -f|defaults"
  "btrfs|mkfs.btrfs -q -f|defaults"
  "ext4-noextents|mkfs.ext4 -q -F -O ^extents,^64bit|defaults"
  "tmpfs||size=$image_size"
)
mkdir -p "$work/img" "$work/mnt"
for entry in "${filesystems[@]}"; do
  IFS='|' read -r name mkfs opts <<<"$entry"
  mnt="$work/mnt/$name"
  mkdir -p "$mnt"
  if [ "$name" = tmpfs ]; then
    mount -t tmpfs -o "$opts" tmpfs "$mnt"
  else
    img="$work/img/$name.img"
    truncate -s "$image_size" "$img"
    $mkfs "$img" >/dev/null
    mount -o loop,"$opts" "$img" "$mnt"
  fi
  mounts+=("$mnt")
  echo "== $name ($(findmnt -n -o FSTYPE,OPTIONS "$mnt"))" >&2
  "$walseg" bench --dir "$mnt" --json "$work/$name.json" "${bench_args[@]}" >"$work/$name.txt" 2>"$work/$name.log" ||
    { echo "walseg bench failed on $name; see $work/$name.log" >&2; exit 1; }
  umount "$mnt"
  mounts=("${mounts[@]/$mnt}")
  rm -f "$work/img/$name.img"
done

python3 "$here/fs_report.py" "$work" "${filesystems[@]%%|*}"
echo "report: $work/report.md" >&2
