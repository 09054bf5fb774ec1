#!/usr/bin/env bash
# pg_waldump_tool_test.sh: PostgreSQL 15's own pg_waldump reads what the walseg writer wrote
# (the external check nobody here wrote).
#
# For each case: `walseg write --dir D --records N --record-size S` (1 MB segments), the end of
# WAL from `walseg recover --dir D`, the first record from `walseg dump --limit 1`, then
# `pg_waldump -p D -s START -e END` must exit 0, print exactly N records, the same record
# LSNs as `walseg dump`, and the same record lines. Sizes: empty, small, one page, several pages; enough records that
# some cases span segments; pwrite and io_uring (the io_uring cases are skipped, not failed,
# where the kernel refuses io_uring).
#
# Preallocated segments: a future segment has no page header yet, only walseg's ready stamp
# (which carries the segment size where pg_waldump looks for it; PostgreSQL's own zero-filled
# future segments do not, and pg_waldump -p D without a start file then says "header specifies
# 0 bytes" when readdir returns one first). The -p/-s/-e form runs with
# walseg.prealloc_segments = 0 all the same, and the default pool is checked with the start
# segment file named on the command line (pg_waldump [option...] [startseg [endseg]]), as one
# does for pg_wal.
#
# Usage: pg_waldump_tool_test.sh /path/to/walseg  (ctest: pg_waldump_tool, SKIP_RETURN_CODE 77)
# Exits 77 (skip) only when pg_waldump is absent; PG_WALDUMP overrides its path.
set -u -o pipefail

WALSEG=${1:?usage: pg_waldump_tool_test.sh WALSEG_BINARY}
PG_WALDUMP=${PG_WALDUMP:-/usr/lib/postgresql/15/bin/pg_waldump}
[[ -x $PG_WALDUMP ]] || { echo "SKIP: $PG_WALDUMP not found"; exit 77; }
[[ -x $WALSEG ]] || { echo "FAIL: walseg binary '$WALSEG' is not executable"; exit 1; }

WORK=$(mktemp -d /var/tmp/walseg_waldump.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
trap 'rm -rf "$WORK"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

# Record LSNs of `rmgr:` lines, normalised to upper-case hex without leading zeros (X/Y).
lsns_of() {
  grep '^rmgr:' | sed -n 's/.*lsn: \([0-9A-Fa-f]*\)\/\([0-9A-Fa-f]*\),.*/\1 \2/p' |
    while read -r hi lo; do printf '%X/%X\n' $((16#$hi)) $((16#$lo)); done
}

# Name of the 1 MB segment (timeline 1) holding the byte just before LSN X/Y.
segment_of() {
  local lsn=$(( (16#${1%/*} << 32 | 16#${1#*/}) - 1 ))
  local segno=$((lsn / 1048576))
  printf '%08X%08X%08X\n' 1 $((segno / 4096)) $((segno % 4096))
}

# run_case NAME RECORDS SIZE STARTSEG_MODE WRITE_OPTIONS...
#   STARTSEG_MODE: "range" = -p D -s START -e END; "startseg" = the same plus the first and
#   last segment files (pg_waldump [option...] [startseg [endseg]]).
run_case() {
  local name=$1 n=$2 size=$3 mode=$4
  shift 4
  local d="$WORK/$name" out rc
  local settings=(-c walseg.segment_size=1MB "$@")
  if ! out=$("$WALSEG" write --dir "$d" --records "$n" --record-size "$size" "${settings[@]}" 2>&1); then
    if [[ $out == *"walseg.io_method"* ]]; then echo "skip - $name: $out"; return; fi
    not_ok "$name: walseg write failed: $out"
    return
  fi
  local end start first_seg
  end=$("$WALSEG" recover --dir "$d" | sed -n 's/^end of WAL: //p')
  start=$("$WALSEG" dump --dir "$d" --limit 1 | lsns_of)
  first_seg=$(cd "$d" && ls | grep -E '^[0-9A-F]{24}$' | sort | head -n 1)
  [[ -n $end && -n $start && -n $first_seg ]] || { not_ok "$name: no end ($end), start ($start) or segment"; return; }
  local args=(-p "$d" -s "$start" -e "$end")
  [[ $mode == startseg ]] && args+=("$first_seg" "$(segment_of "$end")")
  out=$("$PG_WALDUMP" "${args[@]}" 2>&1)
  rc=$?
  local count
  count=$(grep -c '^rmgr:' <<<"$out")
  if [[ $rc -ne 0 ]]; then
    not_ok "$name: pg_waldump ${args[*]} exited $rc: $(tail -n 2 <<<"$out")"
  elif [[ $count -ne $n ]]; then
    not_ok "$name: pg_waldump printed $count records, expected $n ($start .. $end)"
  elif ! diff <(lsns_of <<<"$out") <("$WALSEG" dump --dir "$d" | lsns_of) >/dev/null; then
    not_ok "$name: pg_waldump and walseg dump disagree on record LSNs"
  elif ! diff <(grep '^rmgr:' <<<"$out") <("$WALSEG" dump --dir "$d" | grep '^rmgr:') >/dev/null; then
    not_ok "$name: walseg dump does not print its records as pg_waldump does"
  else
    ok "$name: $n records of $size bytes, $start .. $end, $(ls "$d" | grep -cE '^[0-9A-F]{24}$') segment files"
  fi
}

run_case empty_pwrite 300 0 range -c walseg.prealloc_segments=0
run_case small_pwrite 500 100 range -c walseg.prealloc_segments=0
run_case one_page_pwrite 200 8192 range -c walseg.prealloc_segments=0
run_case pages_across_segments_pwrite 150 20000 range -c walseg.prealloc_segments=0
run_case pages_across_segments_pool 150 20000 startseg
run_case small_across_segments_pool_8_clients 6000 400 startseg --clients 8 -c walseg.prealloc_segments=2
run_case pages_across_segments_uring 150 20000 range -c walseg.prealloc_segments=0 -c walseg.io_method=io_uring
run_case small_uring_fsync 400 300 range -c walseg.prealloc_segments=0 -c walseg.io_method=io_uring \
  -c walseg.sync_method=fsync

check_summary
