#!/usr/bin/env bash
# lazyfs_model_test.sh: proves walseg_lazyfs's power-cut model (tests/lazyfs/mem_fs.h) with
# ordinary tools, through the kernel, before walseg is judged on it: unsynced data and names are
# lost by a drop, fsync keeps data but not names, a directory fsync keeps names, O_DSYNC is
# durable on return and O_DIRECT is not, a failed fsync loses the dirty data as Linux does,
# fail-fsync limited to files of a name pattern, ownership for a server running as another
# user, the capacity gives ENOSPC, fallocate (and --no-fallocate), flock, stale handles after a
# cut, and the pass-through mode.
#
# Usage: lazyfs_model_test.sh WALSEG_LAZYFS [WALSEG]   (ctest: lazyfs_model; 77 = skipped)
set -u -o pipefail

LAZYFS=${1:?usage: lazyfs_model_test.sh WALSEG_LAZYFS [WALSEG]}
WALSEG=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lazyfs_lib.sh
source "$HERE/lazyfs_lib.sh"
reason=$(lazyfs_skip_reason "$LAZYFS")
[[ -z $reason ]] || { echo "SKIP: $reason"; exit 77; }

WORK=$(mktemp -d -t walseg_lazyfs_model.XXXXXX) || exit 1
trap 'lazyfs_cleanup; rm -rf "$WORK"' EXIT
trap 'echo interrupted; exit 130' INT TERM

PASS=0
FAIL=0
check() {
  local d=$1
  shift
  if "$@"; then PASS=$((PASS + 1)); echo "ok   - $d"; else FAIL=$((FAIL + 1)); echo "FAIL - $d"; fi
}
M=$WORK/mem
S=$WORK/mem.sock
ctl() { lazyfs_ctl "$S" "$@" >/dev/null; }
size_of() { stat -c %s "$1" 2>/dev/null || echo missing; }
content_is() { [[ -f $1 && $(cat "$1") == "$2" ]]; }
gone() { [[ ! -e $1 ]]; }
stat_is() { [[ $(stat -c "$2" "$1" 2>/dev/null) == "$3" ]]; }
fails_with() {  # fails_with TEXT COMMAND...: the command fails and says TEXT
  local text=$1
  shift
  ! "$@" 2>"$WORK/err" >/dev/null && { [[ -z $text ]] || grep -q "$text" "$WORK/err"; }
}

lazyfs_mount "$M" "$S" || exit 1

echo "== data and names"
printf old >"$M/a" && sync "$M/a" "$M" && printf new >"$M/a"
ctl drop
check "unsynced overwrite of a durable file is lost" content_is "$M/a" old
printf 'longer text' >>"$M/a"
ctl drop
check "unsynced append is lost, size back to the size at the last fsync" test "$(size_of "$M/a")" -eq 3
printf data >"$M/b" && sync "$M/b"
ctl drop
check "fsync of a file without its directory: the file is gone" gone "$M/b"
printf data >"$M/c" && sync "$M/c" "$M"
ctl drop
check "file fsync + directory fsync: the file and its data stay" content_is "$M/c" data
mv "$M/c" "$M/c2"
ctl drop
check "rename without directory fsync is undone (old name back)" test -f "$M/c" -a ! -e "$M/c2"
mv "$M/c" "$M/c2" && sync "$M"
ctl drop
check "rename + directory fsync: the new name stays" test ! -e "$M/c" -a -f "$M/c2"
rm "$M/c2"
ctl drop
check "unlink without directory fsync is undone, data intact" content_is "$M/c2" data
rm "$M/c2" && sync "$M"
ctl drop
check "unlink + directory fsync: gone" gone "$M/c2"
mkdir "$M/d" && printf x >"$M/d/f" && sync "$M/d/f" "$M/d"
ctl drop
check "mkdir not covered by its parent's fsync: the directory is gone" gone "$M/d"
printf 'x' >"$M/l1" && sync "$M/l1" && ln "$M/l1" "$M/l2" && sync "$M"
ctl drop
check "hard link + directory fsync: both names, one inode" \
  test "$(stat -c %i "$M/l1")" = "$(stat -c %i "$M/l2")" -a "$(stat -c %h "$M/l1")" -eq 2
truncate -s 0 "$M/a"
ctl drop
check "unsynced ftruncate is undone" content_is "$M/a" old

echo "== O_DSYNC, O_DIRECT, fdatasync"
dd if=/dev/zero of="$M/z" bs=4096 count=4 conv=fsync status=none && sync "$M"
printf 'dsync!' | dd of="$M/z" oflag=dsync conv=notrunc status=none
ctl drop
check "O_DSYNC write is durable on return" test "$(head -c 6 "$M/z")" = 'dsync!'
head -c 4096 /dev/urandom >"$WORK/rand"
dd if="$WORK/rand" of="$M/z" bs=4096 seek=1 oflag=direct conv=notrunc status=none
ctl drop
check "O_DIRECT write without a flush is lost" cmp -s <(head -c 8192 "$M/z" | tail -c 4096) <(head -c 4096 /dev/zero)
dd if="$WORK/rand" of="$M/z" bs=4096 seek=1 conv=notrunc,fdatasync status=none
ctl drop
check "fdatasync persists data" cmp -s <(head -c 8192 "$M/z" | tail -c 4096) "$WORK/rand"

echo "== torn writes (drop SEED KEEP_PERCENT)"
dd if=/dev/zero of="$M/t" bs=4096 count=64 conv=fsync status=none && sync "$M"
dd if=/dev/urandom of="$M/t" bs=4096 count=64 conv=notrunc status=none
ans=$(lazyfs_ctl "$S" drop 7 50)
kept=$(sed -n 's/.* \([0-9]*\) kept.*/\1/p' <<<"$ans")
nonzero=$(od -An -v -w4096 -tx1 "$M/t" | grep -c '[1-9a-f]')
echo "    $ans; blocks not zero: $nonzero"
check "keep 50%: some but not all unsynced blocks survive, size unchanged" \
  test "$kept" -gt 5 -a "$kept" -lt 59 -a "$(size_of "$M/t")" -eq 262144
check "the blocks that survived are the ones it reports" test "$nonzero" -eq "$kept"

echo "== fail-fsync (Linux semantics: error once, dirty data lost)"
printf 11111111 >"$M/e" && sync "$M/e" "$M"
ctl fail-fsync 1 any
printf 22222222 | dd of="$M/e" conv=notrunc,fsync status=none 2>"$WORK/err"
check "the armed fsync fails with Input/output error" grep -q "Input/output error" "$WORK/err"
check "the data stays readable until the cut (page cache)" content_is "$M/e" 22222222
sync "$M/e"
check "a later fsync succeeds" test $? -eq 0
ctl drop
check "after the cut the failed write is gone, though a later fsync succeeded" content_is "$M/e" 11111111
ctl fail-fsync 2 fdatasync
dd if=/dev/zero of="$M/e" bs=8 count=1 conv=notrunc,fsync status=none 2>"$WORK/err1"
dd if=/dev/zero of="$M/e" bs=8 count=1 conv=notrunc,fdatasync status=none 2>"$WORK/err2"
dd if=/dev/zero of="$M/e" bs=8 count=1 conv=notrunc,fdatasync status=none 2>"$WORK/err3"
check "fail-fsync 2 fdatasync: fsync not counted, the second fdatasync fails" \
  test ! -s "$WORK/err1" -a ! -s "$WORK/err2" -a -s "$WORK/err3"
ctl fail-fsync 1 any 'x*.tmp'
printf 1 | dd of="$M/other" conv=fsync status=none 2>"$WORK/err1"
printf 1 | dd of="$M/x1.tmp" conv=fsync status=none 2>"$WORK/err2"
check "fail-fsync 1 any 'x*.tmp': a file of another name is not counted, the matching one fails" \
  test ! -s "$WORK/err1" -a -s "$WORK/err2"

echo "== ownership (a server running as another user works in a directory root gave it)"
chmod 711 "$WORK"
mkdir "$M/owned" && chown nobody: "$M/owned" && chmod 700 "$M/owned"
runuser -u nobody -- sh -c "echo x >'$M/owned/f' && sync '$M/owned/f' '$M/owned'"
check "the owner creates files in it, and they are theirs" stat_is "$M/owned/f" %U nobody
check "the mount's root is root's: others may not create there" \
  fails_with "Permission denied" runuser -u nobody -- touch "$M/theirs"
sync "$M"
ctl drop
check "owners and modes survive a cut" stat_is "$M/owned" '%U %a' 'nobody 700'
rm -rf "$M/owned"

echo "== capacity and fallocate"
rm -f "$M"/* && sync "$M"
ctl capacity $((1024 * 1024))
dd if=/dev/zero of="$M/big" bs=64k count=32 status=none 2>"$WORK/err"
check "writing 2 MiB into 1 MiB: No space left on device" grep -q "No space left on device" "$WORK/err"
check "the short write filled the capacity exactly" test "$(size_of "$M/big")" -eq 1048576
check "statfs reports 1 MiB with nothing free" test "$(stat -f -c '%b %f %S' "$M")" = "256 0 4096"
rm "$M/big"
fallocate -l 512K "$M/fa"
check "fallocate within capacity: size and blocks" stat_is "$M/fa" '%s %b' '524288 1024'
touch "$M/fk" && fallocate -n -l 256K "$M/fk"
check "fallocate --keep-size: blocks reserved, size 0" stat_is "$M/fk" '%s %b' '0 512'
touch "$M/fb"
check "fallocate past the capacity fails with ENOSPC" fails_with "No space left" fallocate -l 1M "$M/fb"
check "... and allocates nothing" stat_is "$M/fb" '%s %b' '0 0'
truncate -s 100M "$M/sp"
check "a sparse file costs nothing" stat_is "$M/sp" %b 0
ctl capacity 0

echo "== handles and locks across a cut"
printf abc >"$M/h" && sync "$M/h" "$M"
exec 7>>"$M/h"
write_fd7() { printf zzz >&7; }
ctl drop
check "a handle opened before the cut is stale: write fails" fails_with "Input/output error" write_fd7
exec 7>&-
check "the file is unchanged by the stale handle" content_is "$M/h" abc
flock "$M/h" sleep 2 &
holder=$!
sleep 0.5
check "flock is exclusive between processes on the mount" fails_with "" flock -n "$M/h" true
wait "$holder"

if [[ $(uname -m) == x86_64 ]] && command -v perl >/dev/null; then
  echo "== renameat2(RENAME_NOREPLACE) (x86_64 syscall 316)"
  printf 1 >"$M/r1" && printf 2 >"$M/r2"
  rn() { perl -e 'exit(syscall(316, -100, $ARGV[0], -100, $ARGV[1], 1) == 0 ? 0 : 1)' "$1" "$2"; }
  check "RENAME_NOREPLACE onto an existing name fails" fails_with "" rn "$M/r1" "$M/r2"
  check "... and moves nothing" test -f "$M/r1" -a "$(cat "$M/r2")" = 2
  rn "$M/r1" "$M/r3"
  check "RENAME_NOREPLACE onto a free name succeeds" test ! -e "$M/r1" -a "$(cat "$M/r3")" = 1
  echo "== renameat2(RENAME_EXCHANGE): how walseg.control is replaced"
  xc() { perl -e 'exit(syscall(316, -100, $ARGV[0], -100, $ARGV[1], 2) == 0 ? 0 : 1)' "$1" "$2"; }
  sync "$M/r2" "$M/r3" "$M"
  xc "$M/r2" "$M/r3"
  check "RENAME_EXCHANGE swaps the two files" test "$(cat "$M/r2")" = 1 -a "$(cat "$M/r3")" = 2
  check "RENAME_EXCHANGE with a missing name fails" fails_with "" xc "$M/r2" "$M/r4"
  ctl drop
  check "an exchange without directory fsync is undone whole" test "$(cat "$M/r2")" = 2 -a "$(cat "$M/r3")" = 1
fi
lazyfs_umount "$M"

echo "== --no-fallocate and --passthrough"
lazyfs_mount "$M" "$S" --no-fallocate || exit 1
check "in-memory --no-fallocate: fallocate says Operation not supported" \
  fails_with "not supported" fallocate -l 1M "$M/f"
lazyfs_umount "$M"
mkdir -p "$WORK/backing"
lazyfs_mount "$M" "$S" --passthrough "$WORK/backing" --no-fallocate || exit 1
printf through >"$M/p" && sync "$M/p" "$M"
check "pass-through: the file is in the backing directory" content_is "$WORK/backing/p" through
check "pass-through --no-fallocate: Operation not supported" fails_with "not supported" fallocate -l 1M "$M/f"
check "pass-through: drop is refused" fails_with "" lazyfs_ctl "$S" drop
if [[ -x $WALSEG ]]; then
  out=$("$WALSEG" create --dir "$M/wal" --method posix_fallocate --segment-size 1MB 2>&1)
  check "pass-through --no-fallocate: walseg create falls back to zero_write" \
    grep -q "not supported.*using zero_write instead" <<<"$out"
fi
lazyfs_umount "$M"

echo "== --control names only a new path or a stale socket (break-it round 18: it removed a file)"
printf precious >"$WORK/user-file"
mkdir -p "$WORK/m2"
"$LAZYFS" mount "$WORK/m2" --control "$WORK/user-file" >"$WORK/m2.log" 2>&1
check "--control on a user's file is refused (rc=$?)" grep -q "exists and is not a socket" "$WORK/m2.log"
check "the user's file is as it was" content_is "$WORK/user-file" precious
check "and no dead mount is left" fails_with "" mountpoint -q "$WORK/m2"
lazyfs_mount "$M" "$S" || exit 1
"$LAZYFS" mount "$WORK/m2" --control "$S" >"$WORK/m2.log" 2>&1
check "--control on a live server's socket is refused" grep -q "another walseg_lazyfs answers on it" "$WORK/m2.log"
check "the live server still answers" lazyfs_ctl "$S" stats
lazyfs_umount "$M"

echo
echo "$PASS passed, $FAIL failed"
[[ $FAIL -eq 0 ]]
