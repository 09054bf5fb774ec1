#!/usr/bin/env bash
# tool_readonly_test.sh: `walseg recover` and `walseg dump` read a WAL on a read-only mount (a
# snapshot, a read-only copy) without a lock file to create or write: they find the same end of
# WAL and records as on the writable original, exit 0, and change nothing; also without
# walseg.lock in the copy.
#
# Usage: tool_readonly_test.sh /path/to/walseg      (ctest: add_test tool_readonly, SKIP_RETURN_CODE 77)
# Needs root for the mount; exits 77 (skip) without it. The EXIT trap unmounts.
set -u -o pipefail

WALSEG=${1:?usage: tool_readonly_test.sh WALSEG_BINARY}
[[ $(id -u) -eq 0 ]] || { echo "SKIP: tool_readonly needs root (a tmpfs mount)"; exit 77; }
[[ -x $WALSEG ]] || { echo "FAIL: walseg binary '$WALSEG' is not executable"; exit 1; }

WORK=$(mktemp -d /var/tmp/walseg_readonly.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
MNT=$WORK/mnt
cleanup() {
  mountpoint -q "$MNT" && { umount "$MNT" 2>/dev/null || umount -l "$MNT"; }
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP
mkdir "$MNT"
mount -t tmpfs -o size=32m tmpfs "$MNT" || { echo "SKIP: could not mount a tmpfs"; exit 77; }

source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

"$WALSEG" write --dir "$MNT/wal" --records 100 -c walseg.segment_size=1MB >/dev/null 2>&1 ||
  { echo "FAIL: walseg write"; exit 1; }
cp -a "$MNT/wal" "$MNT/snap" && rm -f "$MNT/snap/walseg.lock"
want=$("$WALSEG" recover --dir "$MNT/wal" 2>/dev/null)
before=$(ls -l --time-style=+%s.%N "$MNT/wal" "$MNT/snap")
mount -o remount,ro "$MNT" || { echo "SKIP: could not remount read-only"; exit 77; }

for d in wal snap; do
  out=$("$WALSEG" recover --dir "$MNT/$d" 2>/dev/null)
  status=$?
  check "$d: recover on a read-only mount exits 0 (got $status)" test "$status" -eq 0
  check "$d: it finds what it finds on the writable original" test "${out//$MNT\/$d/$MNT/wal}" == "$want"
  check "$d: 100 records" contains "$out" "records: 100"
  out=$("$WALSEG" dump --dir "$MNT/$d" --limit 1 2>&1)
  status=$?
  check "$d: dump on a read-only mount exits 0 (got $status)" test "$status" -eq 0
  check "$d: dump prints the first record" contains "$out" "rmgr: "
done
check "nothing changed" test "$(ls -l --time-style=+%s.%N "$MNT/wal" "$MNT/snap")" == "$before"

check_summary
