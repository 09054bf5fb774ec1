#!/usr/bin/env bash
# powercut_check_test.sh: walseg_powercut_check on WAL written to an ordinary directory, so
# that what the power-cut tests conclude rests on a checker that reads every WAL it is given:
#   - a WAL on timeline 2 (its walseg.control says so) reads in full: nothing lost (round 15
#     L1: the checker read timeline 1 and called every record lost);
#   - records too short to carry the whole tag (--record-size 8) are matched by their end LSN
#     and tag prefix: nothing lost or stale (round 15 L2: every one was "stale", every ack lost);
#   - a last ack line cut short (no newline) is no acknowledgement (round 24 L2), nor is one a
#     later run's start line was appended to (round 28 L2);
#   - the checker can fail: with a segment holding WAL removed, acknowledged records are lost;
#   - --lsns writes only a new file (an existing one, a segment among them, stays as it was).
#
# Usage: powercut_check_test.sh WALSEG WALSEG_POWERCUT_CHECK   (ctest: powercut_check)
set -u -o pipefail

WALSEG=${1:?usage: powercut_check_test.sh WALSEG CHECK}
CHECK=${2:?usage: powercut_check_test.sh WALSEG CHECK}
WORK=$(mktemp -d -t walseg_check.XXXXXX) || exit 1
trap 'rm -rf "$WORK"' EXIT
K1MB=(-c walseg.segment_size=1MB -c walseg.min_size=2MB)
FAIL=0
expect() {  # expect NAME STATUS SUMMARY_REGEX -- checker args
  local name=$1 want=$2 re=$3 out rc
  shift 4
  out=$("$CHECK" "$@" 2>&1)
  rc=$?
  if [[ $rc == "$want" ]] && grep -Eq "$re" <<<"$out"; then
    echo "ok: $name: $(tail -n 1 <<<"$out")"
  else
    echo "FAILED: $name: exit $rc (want $want), output:"
    tail -n 5 <<<"$out"
    FAIL=1
  fi
}

# Timeline 2: an empty directory's first `create --timeline 2` makes the WAL's timeline 2.
T2=$WORK/t2
"$WALSEG" create --dir "$T2" --timeline 2 --count 1 --start 1 --method zero_write "${K1MB[@]}" >/dev/null 2>&1 ||
  { echo "FAILED: create --timeline 2"; exit 1; }
"$WALSEG" write --dir "$T2" --records 300 --record-size 8kB --ack-log "$WORK/t2.ack" "${K1MB[@]}" >/dev/null 2>&1 ||
  { echo "FAILED: write on timeline 2"; exit 1; }
ls "$T2" | grep -q '^00000002' || { echo "FAILED: the WAL is not on timeline 2: $(ls "$T2")"; exit 1; }
expect "timeline 2" 0 '^records 300, acknowledged 300, lost 0, stale 0, end' -- --dir "$T2" --ack-log "$WORK/t2.ack"

# Short records: 8 bytes of tag (the run id) only, two runs and four clients.
SH=$WORK/short
for run in 1 2; do
  "$WALSEG" write --dir "$SH" --records 200 --clients 4 --record-size 8 --ack-log "$WORK/short.ack" "${K1MB[@]}" \
    >/dev/null 2>&1 || { echo "FAILED: write of 8-byte records (run $run)"; exit 1; }
done
expect "8-byte records" 0 '^records 400, acknowledged 400, lost 0, stale 0, end' -- --dir "$SH" --ack-log "$WORK/short.ack"

# A last ack line cut short (the ack log's filesystem full) is no acknowledgement (break-it
# round 24 L2: "ack RUN 0 10" of seq 109 was read as seq 10 acknowledged at 0/0: "stale 1").
cp "$WORK/t2.ack" "$WORK/torn.ack"
# The last ack line again, cut inside its sequence number: "ack RUN CLIENT 29" of seq 299.
grep '^ack ' "$WORK/t2.ack" | tail -n 1 | awk '{ printf "%s %s %s %s", $1, $2, $3, substr($4, 1, length($4) - 1) }' \
  >> "$WORK/torn.ack"
expect "a torn last ack line" 0 '^records 300, acknowledged 300, lost 0, stale 0, end' -- --dir "$T2" --ack-log "$WORK/torn.ack"

# A run that starts after such a line appends its start line to it (write accepts the log):
# the remains are no acknowledgement, the new run's are (break-it round 28 L2: "ack before its
# start line").
"$WALSEG" write --dir "$T2" --records 20 --record-size 8kB --ack-log "$WORK/torn.ack" "${K1MB[@]}" >/dev/null 2>&1 ||
  { echo "FAILED: write after a torn ack line"; exit 1; }
grep -q '[0-9]start ' "$WORK/torn.ack" || { echo "FAILED: no start line appended to the torn line"; FAIL=1; }
expect "a start line after a torn line" 0 '^records 320, acknowledged 320, lost 0, stale 0, end' -- --dir "$T2" \
  --ack-log "$WORK/torn.ack"

# The checker fails when acknowledged records are gone: segment 2 of the timeline-2 WAL
# (0/200000 to 0/300000, inside the 300 records' 2.4 MB from 0/100000) removed.
[[ -f $T2/000000020000000000000002 ]] || { echo "FAILED: no segment 2 in $(ls "$T2")"; exit 1; }
rm -f "$T2/000000020000000000000002"
expect "segment 2 removed" 1 'lost [1-9][0-9]*,' -- --dir "$T2" --ack-log "$WORK/t2.ack"

# --lsns makes only a new file (break-it round 18: --lsns on a segment truncated it, and with it
# acknowledged records): an existing name is refused and stays as it was.
cp "$T2/000000020000000000000001" "$WORK/seg.before"
expect "--lsns on an existing file" 2 'could not create --lsns file .*File exists' -- --dir "$T2" \
  --ack-log "$WORK/t2.ack" --lsns "$T2/000000020000000000000001"
cmp -s "$T2/000000020000000000000001" "$WORK/seg.before" || { echo "FAILED: --lsns changed the segment"; FAIL=1; }
expect "--lsns on a new file" 1 'lost [1-9][0-9]*,' -- --dir "$T2" --ack-log "$WORK/t2.ack" --lsns "$WORK/new.lsns"
[[ -s $WORK/new.lsns ]] || { echo "FAILED: --lsns wrote no LSN"; FAIL=1; }

exit $FAIL
