#!/usr/bin/env bash
# storage_faults_test.sh: walseg on walseg_lazyfs when the storage fails: ENOSPC at a set
# capacity for every init method, during segment creation (walseg create) and during appends
# (walseg write, pwrite and io_uring), EIO from the Nth fdatasync/fsync (fsyncgate: the dirty
# data is then lost, as Linux loses it), and O_DSYNC writers killed and cut (durable on return,
# with no fsync to count on). After each failure: an error exit naming the path and the
# reason, no segment-named file of the wrong size, and after a power cut every
# acknowledged record is still there and none is stale (walseg_powercut_check); a new writer
# works once space is back (the failed one is done: the first failed sync being final makes a writer's first write
# or sync failure final, so only a new process may go on, from what recovery finds).
# It also proves the checker: a disk that ignores flushes must show lost records, and a run
# that claims to have overwritten part of the WAL must show stale ones.
#
# Usage: storage_faults_test.sh BUILD_DIR   (ctest: lazyfs_faults; 77 = skipped)
set -u -o pipefail

BUILD=${1:?usage: storage_faults_test.sh BUILD_DIR}
WALSEG=$BUILD/bin/walseg
LAZYFS=$BUILD/bin/walseg_lazyfs
CHECK=$BUILD/bin/walseg_powercut_check
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lazyfs_lib.sh
source "$HERE/lazyfs_lib.sh"
reason=$(lazyfs_skip_reason "$LAZYFS")
[[ -z $reason ]] || { echo "SKIP: $reason"; exit 77; }

WORK=$(mktemp -d -t walseg_faults.XXXXXX) || exit 1
trap 'lazyfs_cleanup; rm -rf "$WORK"' EXIT
trap 'echo interrupted; exit 130' INT TERM
MiB=1048576
M=$WORK/mnt
S=$WORK/sock
D=$M/wal
ACK=$WORK/ack

PASS=0
FAIL=0
check() {
  local d=$1
  shift
  if "$@"; then PASS=$((PASS + 1)); echo "ok   - $d"; else FAIL=$((FAIL + 1)); echo "FAIL - $d"; fi
}
ctl() { lazyfs_ctl "$S" "$@" >/dev/null; }
contains() { [[ $1 == *"$2"* ]]; }
# fresh [MOUNT OPTION...]: a new filesystem with a durable, empty WAL directory and ack log.
fresh() {
  lazyfs_umount "$M"
  lazyfs_mount "$M" "$S" "$@" && mkdir "$D" && ctl persist
  rm -f "$ACK"
}
# run ARGS...: walseg, with RC, OUT, ERR.
run() {
  OUT=$(timeout 60 "$WALSEG" "$@" 2>"$WORK/stderr")
  RC=$?
  ERR=$(cat "$WORK/stderr")
}
# killed_after SECONDS ARGS...: runs walseg in the background and kills it with SIGKILL then.
killed_after() {
  local t=$1 pid
  shift
  "$WALSEG" "$@" >/dev/null 2>&1 &
  pid=$!
  sleep "$t"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
segnames() { ls -1 "$D" 2>/dev/null | grep -E '^[0-9A-F]{24}$'; }
# sizes_ok EXPECTED: every segment-named file has that size (full-size methods: 1 MB).
sizes_ok() {
  local f
  for f in $(segnames); do
    [[ $(stat -c %s "$D/$f") -eq $1 ]] || { echo "    $f is $(stat -c %s "$D/$f") bytes"; return 1; }
  done
}
no_temps() { ! ls -1 "$D" | grep -q '^xlogtemp\.'; }
# verified: after a cut, nothing acknowledged is lost and nothing is stale.
verified() {
  lazyfs_cut "$M" "$S" >/dev/null
  "$CHECK" --dir "$D" --ack-log "$ACK" >"$WORK/check.out" 2>&1 || { head -5 "$WORK/check.out"; return 1; }
  echo "    $(tail -1 "$WORK/check.out")"
}
full_size() { [[ $1 == zero_write || $1 == posix_fallocate || $1 == glibc_emulation || $1 == sparse ]]; }
SEG=(-c walseg.segment_size=1MB)

echo "== ENOSPC during creation: capacity 2.5 MB, walseg create --count 4 of 1 MB"
for m in zero_write posix_fallocate glibc_emulation fallocate_keep_size sparse none; do
  fresh --capacity $((5 * MiB / 2)) || exit 1
  run create --dir "$D" --method "$m" --count 4 --segment-size 1MB
  if [[ $m == sparse || $m == none ]]; then
    # They reserve no space, so creation fits; appends fail instead (next section).
    check "$m: creation reserves nothing and succeeds (rc=$RC)" test "$RC" -eq 0
    continue
  fi
  echo "    $m: rc=$RC: ${ERR##*$'\n'}"
  check "$m: an error exit, not a signal" test "$RC" -ne 0 -a "$RC" -lt 128
  check "$m: says No space left on device" contains "$ERR" "No space left on device"
  check "$m: names the path" contains "$ERR" "\"$D/"
  if [[ $m == fallocate_keep_size ]]; then
    # Blocks reserved beyond the end; the file holds only the 44-byte ready stamp.
    check "$m: segment-named files are 44 bytes (blocks kept, the ready stamp only)" sizes_ok 44
  else
    check "$m: no segment-named file of the wrong size" sizes_ok "$MiB"
  fi
  check "$m: no temporary file left" no_temps
  check "$m: two segments made before the space ran out" test "$(segnames | wc -l)" -eq 2
  ctl capacity 0
  run create --dir "$D" --method "$m" --count 2 --segment-size 1MB --start 3
  check "$m: with space freed, creation works again (rc=$RC)" test "$RC" -eq 0 -a "$(segnames | wc -l)" -eq 4
done

echo "== ENOSPC during appends: capacity 4 MB, walseg write with 8 clients"
for io in pwrite io_uring; do
  for m in zero_write posix_fallocate glibc_emulation fallocate_keep_size sparse none; do
    fresh --capacity $((4 * MiB)) || exit 1
    run write --dir "$D" --seconds 30 --clients 8 --ack-log "$ACK" "${SEG[@]}" -c walseg.init_method="$m" \
      -c walseg.io_method="$io"
    echo "    $m/$io: rc=$RC: ${ERR##*$'\n'}"
    check "$m/$io: the writer stops with an error exit" test "$RC" -ne 0 -a "$RC" -lt 128
    check "$m/$io: says No space left on device" contains "${ERR##*$'\n'}" "No space left on device"
    check "$m/$io: names a file of the WAL directory" contains "${ERR##*$'\n'}" "\"$D/"
    full_size "$m" && check "$m/$io: no segment-named file of the wrong size" sizes_ok "$MiB"
    check "$m/$io: after a cut, nothing acknowledged is lost, nothing stale" verified
    ctl capacity 0
    run write --dir "$D" --records 500 --clients 2 --ack-log "$ACK" "${SEG[@]}" -c walseg.init_method="$m" \
      -c walseg.io_method="$io"
    check "$m/$io: with space freed, a new writer resumes (rc=$RC)" test "$RC" -eq 0
    check "$m/$io: and after another cut everything acknowledged is there" verified
  done
done

echo "== EIO from the 200th sync call of the writer's kind (fail-fsync)"
for io in pwrite io_uring; do
  for sm in fdatasync fsync; do
    fresh || exit 1
    ctl fail-fsync 200 "$sm"
    run write --dir "$D" --seconds 30 --clients 8 --ack-log "$ACK" "${SEG[@]}" -c walseg.sync_method="$sm" \
      -c walseg.io_method="$io"
    echo "    $sm/$io: rc=$RC: ${ERR##*$'\n'}"
    check "$sm/$io: the writer stops with an error exit" test "$RC" -ne 0 -a "$RC" -lt 128
    check "$sm/$io: could not $sm file ...: Input/output error" \
      grep -Eq "could not $sm file \"$D/[^\"]+\": Input/output error" <<<"${ERR##*$'\n'}"
    check "$sm/$io: exactly one sync failed" grep -q "failed_fsyncs=1 " <(lazyfs_ctl "$S" stats)
    check "$sm/$io: after a cut nothing acknowledged is lost (none was acked past the failure)" verified
    run write --dir "$D" --records 500 --clients 2 --ack-log "$ACK" "${SEG[@]}" -c walseg.sync_method="$sm" \
      -c walseg.io_method="$io"
    check "$sm/$io: a new writer resumes from what survived (rc=$RC)" test "$RC" -eq 0
    check "$sm/$io: and after another cut everything acknowledged is there" verified
  done
done

echo "== a new writer after a failed or unfinished sync, with no power cut in between, then a cut"
# Recovery reads what the last writer left in the page cache. After its fdatasync failed (EIO:
# Linux marks the pages clean though the disk never got them) or before it ran (the writer
# killed), nothing says those records reached the disk: a writer that resumed after them and
# acknowledged new ones lost those to the next power cut, behind a hole (break-it round 2).
for io in pwrite io_uring; do
  fresh || exit 1
  run write --dir "$D" --records 20 --record-size 20000 --ack-log "$ACK" "${SEG[@]}" -c walseg.io_method="$io"
  ctl fail-fsync 3 fdatasync
  run write --dir "$D" --records 20 --record-size 20000 --ack-log "$ACK" "${SEG[@]}" -c walseg.io_method="$io"
  check "eio/$io: the second writer fails its fdatasync (rc=$RC)" contains "$ERR" "Input/output error"
  run write --dir "$D" --records 20 --record-size 20000 --ack-log "$ACK" "${SEG[@]}" -c walseg.io_method="$io"
  check "eio/$io: a third writer resumes after the failed one (rc=$RC)" test "$RC" -eq 0
  check "eio/$io: after a cut every record the third one acknowledged is there" verified
done
# Record 5682 of 152 bytes ends exactly at segment 1's end (its sync is the 5683rd: walseg.lock's
# PID is synced first): the next writer starts segment 2 and never writes (so never syncs)
# segment 1, whose last block only the killed writer wrote.
fresh || exit 1
WALSEG_FAILPOINTS="fdatasync=crash@5683" run write --dir "$D" --records 30000 --record-size 152 --ack-log "$ACK" \
  "${SEG[@]}"
"$CHECK" --dir "$D" --ack-log "$ACK" >"$WORK/boundary.out" 2>&1
check "boundary: the writer was killed in the sync of a record ending at a segment's end" \
  grep -q "end 0/00200000" <(tail -1 "$WORK/boundary.out")
run write --dir "$D" --records 100 --record-size 152 --ack-log "$ACK" "${SEG[@]}"
check "boundary: a new writer resumes in the next segment (rc=$RC)" test "$RC" -eq 0
check "boundary: after a cut every record it acknowledged is there" verified

echo "== O_DSYNC writers (no fsync call at all): kill after 0.4 s, cut"
for io in pwrite io_uring; do
  for sm in open_datasync open_sync; do
    fresh || exit 1
    killed_after 0.4 write --dir "$D" --seconds 30 --clients 8 --ack-log "$ACK" "${SEG[@]}" \
      -c walseg.sync_method="$sm" -c walseg.io_method="$io"
    check "$sm/$io: some commits were acknowledged" grep -q '^ack ' "$ACK"
    check "$sm/$io: after the cut nothing acknowledged is lost, nothing stale" verified
  done
done

echo "== a WAL directory under new parents: its whole path is made durable"
# mkdir -p made x and y too: x's entry in the mount's root was never synced, and a cut took
# the whole WAL with it, acknowledged records and all (break-it round 3). A run killed right
# after its own first mkdir leaves the same state for the next one. walseg syncs every
# ancestor up to the mount point before it makes its first walseg.control.
D=$M/wal
fresh || exit 1
D=$M/x/y/w
mkdir -p "$D"
run write --dir "$D" --records 200 --ack-log "$ACK" "${SEG[@]}"
check "mkdir -p: the writer ran (rc=$RC)" test "$RC" -eq 0
check "mkdir -p: after a cut every acknowledged record is there" verified
D=$M/wal
fresh || exit 1
D=$M/a/b/w
WALSEG_FAILPOINTS="open=crash@1" run write --dir "$D" --records 1 --ack-log "$ACK" "${SEG[@]}"
check "killed right after its first mkdir (rc=$RC)" test -d "$M/a" -a ! -e "$M/a/b"
run write --dir "$D" --records 200 --ack-log "$ACK" "${SEG[@]}"
check "after the killed run: the next writer ran (rc=$RC)" test "$RC" -eq 0
check "after the killed run: after a cut every acknowledged record is there" verified
D=$M/wal

echo "== the checker itself"
fresh || exit 1
ctl lie-fsync on
killed_after 0.5 write --dir "$D" --seconds 30 --clients 4 --ack-log "$ACK" "${SEG[@]}"
ctl lie-fsync off
lazyfs_cut "$M" "$S" >/dev/null
"$CHECK" --dir "$D" --ack-log "$ACK" >"$WORK/lie.out"
check "a disk that ignores flushes: after the cut the checker reports lost records" \
  grep -Eq 'lost [1-9]' <(tail -1 "$WORK/lie.out")
fresh || exit 1
run write --dir "$D" --records 2000 --clients 2 --ack-log "$ACK" "${SEG[@]}"
end=$(sed -n 's/^WAL now ends at \([0-9A-F]*\)\/\([0-9A-F]*\)$/\1 \2/p' <<<"$OUT")
read -r hi lo <<<"$end"
echo "start 42 $(((16#$hi << 32) + 16#$lo - 1000)) 1" >>"$ACK"
"$CHECK" --dir "$D" --ack-log "$ACK" >"$WORK/stale.out"
check "a later run that started before the end: the records past its start are stale" \
  grep -Eq 'stale [1-9]' <(tail -1 "$WORK/stale.out")
lazyfs_umount "$M"

echo
echo "$PASS passed, $FAIL failed"
[[ $FAIL -eq 0 ]]
