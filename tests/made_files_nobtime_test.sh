#!/usr/bin/env bash
# made_files_nobtime_test.sh: made_files_test again on ext4 with 128-byte inodes, which keeps no
# birth times (break-it round 13 F2: there the inode number alone decided, and bench removed a
# user's file that got the number of one bench made). The inode generation decides there now.
#
# Usage: made_files_nobtime_test.sh /path/to/made_files_test   (ctest: SKIP_RETURN_CODE 77)
# Needs root, loop devices and mkfs.ext4; exits 77 (skip) without them. The EXIT trap
# unmounts and removes what it made.
set -u -o pipefail

TEST_BIN=${1:?usage: made_files_nobtime_test.sh MADE_FILES_TEST_BINARY}
skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root (loop mount)"
for t in mkfs.ext4 mount umount stat; do command -v "$t" >/dev/null || skip "$t not found"; done

WORK=$(mktemp -d /var/tmp/walseg_nobtime.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
MNT=$WORK/mnt
cleanup() {
  mountpoint -q "$MNT" 2>/dev/null && { umount "$MNT" 2>/dev/null || umount -l "$MNT"; }
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP

truncate -s 64M "$WORK/img"
mkfs.ext4 -q -F -I 128 "$WORK/img" >/dev/null 2>&1 || { echo "FAIL: mkfs.ext4 -I 128"; exit 1; }
mkdir -p "$MNT"
mount -o loop "$WORK/img" "$MNT" 2>/dev/null || skip "cannot loop-mount"
touch "$MNT/probe"
# %W is 0 (or -) where the filesystem keeps no birth time: the case this test is for.
born=$(stat -c %W "$MNT/probe")
[[ $born == 0 || $born == - ]] || { echo "FAIL: ext4 -I 128 keeps birth times here ($born): the test proves nothing"; exit 1; }
WALSEG_MADE_FILES_DIR=$MNT "$TEST_BIN" --log_level=message
