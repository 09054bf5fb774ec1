# fs_lib.sh: the loop-mounted filesystems of the matrix, for bench/fs_matrix.sh and the seed
# scripts in bench/seeds (sourced, not run). Each mount is recorded, so that one call of
# fs_cleanup (put it in the caller's EXIT trap) unmounts everything and removes the images,
# also after a failure or an interrupt.
#
#   fs_names                     the block filesystems, one name a line
#   fs_mount NAME WORK [SIZE]    makes WORK/img/NAME.img (SIZE, default $IMAGE_SIZE or 3G),
#                                mkfs, mounts it at WORK/mnt/NAME and sets FS_MNT to
#                                that path (not printed: a $(...) subshell would lose the record)
#   fs_umount MNT                unmounts MNT and removes its image
#   fs_cleanup                   unmounts whatever is still mounted, removes images
#
# ext4 is made with its inode tables and journal initialised by mkfs (lazy_itable_init=0,
# lazy_journal_init=0): otherwise ext4lazyinit zeroes them in the background for minutes after
# the mount, and every device counter of the run counts those writes too.

# name | mkfs command (image appended) | mount options
FS_TABLE=(
  "ext4|mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0|data=ordered"
  "ext4-journal|mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0|data=journal"
  "xfs|mkfs.xfs -q -f|defaults"
  "btrfs|mkfs.btrfs -q -f|defaults"
  "ext4-noextents|mkfs.ext4 -q -F -O ^extents,^64bit -E lazy_itable_init=0,lazy_journal_init=0|defaults"
)
FS_MOUNTS=()
declare -A FS_IMAGES=()

fs_names() {
  local e
  for e in "${FS_TABLE[@]}"; do echo "${e%%|*}"; done
}

fs_mount() {
  local want=$1 work=$2 size=${3:-${IMAGE_SIZE:-3G}} e name mkfs opts
  for e in "${FS_TABLE[@]}"; do
    IFS='|' read -r name mkfs opts <<<"$e"
    [ "$name" = "$want" ] || continue
    mkdir -p "$work/img" "$work/mnt/$name"
    local img="$work/img/$name.img" mnt="$work/mnt/$name"
    # Never over a file that is there already (a user's, or an interrupted run's): refuse.
    if [ -e "$img" ]; then
      echo "fs_lib.sh: $img exists; remove it or give another work directory" >&2
      return 1
    fi
    truncate -s "$size" "$img"
    $mkfs "$img" >/dev/null 2>&1 || { echo "fs_lib.sh: $mkfs $img failed" >&2; return 1; }
    mount -o loop,"$opts" "$img" "$mnt" || return 1
    FS_MOUNTS+=("$mnt")
    FS_IMAGES[$mnt]=$img
    FS_MNT=$mnt
    return 0
  done
  echo "fs_lib.sh: unknown filesystem $want" >&2
  return 1
}

fs_umount() {
  local mnt=$1 m kept=()
  umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
  rm -f "${FS_IMAGES[$mnt]:-}"
  unset "FS_IMAGES[$mnt]"
  for m in "${FS_MOUNTS[@]}"; do [ "$m" = "$mnt" ] || kept+=("$m"); done
  FS_MOUNTS=("${kept[@]}")
}

fs_cleanup() {
  local i
  for ((i = ${#FS_MOUNTS[@]} - 1; i >= 0; i--)); do fs_umount "${FS_MOUNTS[i]}"; done
}
