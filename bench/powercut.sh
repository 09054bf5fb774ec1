#!/usr/bin/env bash
# powercut.sh: power-cut rounds on walseg_lazyfs (tests/lazyfs): a writer works, is killed
# with SIGKILL at a random moment, the filesystem drops everything not durable (data written
# after the last fsync/fdatasync, names not covered by a directory fsync), and the WAL is recovered and compared with the writer's log of
# acknowledged commits. Prints, last, one line per target:
#   powercut TARGET: R rounds, A acknowledged, L lost, S stale, T torn
# and exits 1 if anything was lost, stale or torn (or a round could not run), 77 when FUSE
# cannot be used here (not root, no /dev/fuse, walseg_lazyfs not built) or when the only
# target asked for is postgres and PostgreSQL or walseg.so is missing.
#
# Usage: bench/powercut.sh [--rounds N] [--target T]... [--keep] [--build DIR] [--seed S]
#                          [--tear P] [--min-ms MS] [--max-ms MS] [--fresh-dir]
#                          [--init-method M] [--sync-method M] [--record-size S]
#                          [--pg-config PATH] [--pg-segsize MB[,MB]] [--pg-no-eio]
#                          [--pg-min-ms MS] [--pg-max-ms MS]
#   --rounds N    rounds per configuration (default 100; ctest runs 10, and 3 for postgres)
#   --target T    walseg-pwrite, walseg-io_uring, postgres (default: all three, postgres only
#                 where it can run); a target is a function target_<T with - as _> that runs
#                 its configurations (see walseg_target, and target_postgres in
#                 powercut_postgres.sh, whose header says what its rounds do)
#   --keep        keep the work directory (ack logs, outputs) instead of removing it
#   --build DIR   where bin/walseg, bin/walseg_lazyfs and bin/walseg_powercut_check are
#                 (default: build/ beside this folder)
#   --seed S      seeds the kill delays and the torn-block choice (default: random, printed)
#   --tear P      every second cut keeps each unsynced block inside a file's synced size with
#                 probability P% (torn writes); the others drop all (default 50; 0: never)
#   --min-ms/--max-ms  the writer is killed this long after it starts (default 100..700)
#   --fresh-dir   let `walseg write` create the WAL directory itself in each chain's first
#                 round (by default the script makes it and makes its name durable first);
#                 walseg fsyncs the parent of each directory it creates, and this option
#                 checks it: a directory name lost at a cut shows as lost records
#   --init-method M, --sync-method M  walseg.init_method and walseg.sync_method of the writer
#                 (default zero_write and fdatasync); with fallocate_keep_size and none the
#                 segments grow by appends, so their size is not checked
#   --record-size S  payload bytes per record (default 100); records of several 4 kB blocks
#                 leave more unsynced blocks at a kill, for torn cuts to choose from
#   --pg-config PATH  PostgreSQL 15's pg_config for the postgres target (default: from PATH)
#   --pg-segsize MB[,MB]  its WAL segment sizes, one configuration each (default 1,16)
#   --pg-no-eio   skip its EIO case (the preallocator's fsync failing, after the rounds)
#   --pg-min-ms/--pg-max-ms  its server is killed this long after the load starts
#                 (default 500..3000: the clients connect, checkpoints run, segments fill)
#
# A walseg configuration (io method x 1 or 8 clients) runs its rounds on one WAL directory,
# each round resuming where recovery found the end, with 1 MB segments so that rounds cross
# segment boundaries and the preallocator runs. After each cut:
#   torn    a segment-named file that is not exactly 1 MB, or a temporary file left by an
#           earlier cut that is still there after a later writer acknowledged commits;
#   lost, stale  as walseg_powercut_check counts them (its header), after `walseg recover`
#           (exit 0, or 2 when torn unsynced blocks look like corruption) and `walseg dump`,
#           whose LSNs must be exactly the checker's.
# The WAL only grows (`walseg write` retires nothing), so a configuration starts a new chain
# (fresh mount) once its WAL passes 32 MB, to keep each round's checks short.
# Targets are added as functions: target_NAME must set T_ROUNDS, T_ACKED, T_LOST, T_STALE
# and T_TORN, and may add a function to CLEANUP_HOOKS (run at exit, before the unmounts).
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROUNDS=100
TARGETS=()
KEEP=0
BUILD=$HERE/../build
SEED=$(( (RANDOM << 15) | RANDOM ))
TEAR=50
MIN_MS=100
MAX_MS=700
FRESH_DIR=0
INIT_METHOD=zero_write
SYNC_METHOD=fdatasync
RECORD_SIZE=100
SEG_BYTES=$((1024 * 1024))
CHAIN_BYTES=$((32 * 1024 * 1024))
PG_CONFIG_BIN=pg_config
PG_SEGSIZES=1,16
PG_EIO=1
PG_MIN_MS=500
PG_MAX_MS=3000
PG_PORT0=55600  # + segment size in MB; the sockets are in the work directory anyway

usage() { sed -n '/^# Usage:/,/^# A walseg/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
while (($#)); do
  case $1 in
    --rounds) ROUNDS=${2:?}; shift ;;
    --target) TARGETS+=("${2:?}"); shift ;;
    --keep) KEEP=1 ;;
    --build) BUILD=${2:?}; shift ;;
    --seed) SEED=${2:?}; shift ;;
    --tear) TEAR=${2:?}; shift ;;
    --min-ms) MIN_MS=${2:?}; shift ;;
    --max-ms) MAX_MS=${2:?}; shift ;;
    --fresh-dir) FRESH_DIR=1 ;;
    --init-method) INIT_METHOD=${2:?}; shift ;;
    --sync-method) SYNC_METHOD=${2:?}; shift ;;
    --record-size) RECORD_SIZE=${2:?}; shift ;;
    --pg-config) PG_CONFIG_BIN=${2:?}; shift ;;
    --pg-segsize) PG_SEGSIZES=${2:?}; shift ;;
    --pg-no-eio) PG_EIO=0 ;;
    --pg-min-ms) PG_MIN_MS=${2:?}; shift ;;
    --pg-max-ms) PG_MAX_MS=${2:?}; shift ;;
    *) usage ;;
  esac
  shift
done
for v in ROUNDS SEED TEAR MIN_MS MAX_MS PG_MIN_MS PG_MAX_MS; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "powercut.sh: $v must be a number, not '${!v}'" >&2; exit 2; }
done
[[ $PG_SEGSIZES =~ ^(1|2|4|8|16|32|64)(,(1|2|4|8|16|32|64))*$ ]] ||
  { echo "powercut.sh: --pg-segsize takes sizes in MB, powers of two up to 64, comma-separated" >&2; exit 2; }
((MAX_MS >= MIN_MS && PG_MAX_MS >= PG_MIN_MS && TEAR <= 100 && ROUNDS > 0)) || usage

WALSEG=$BUILD/bin/walseg
LAZYFS=$BUILD/bin/walseg_lazyfs
CHECK=$BUILD/bin/walseg_powercut_check
# shellcheck source=../tests/lazyfs/lazyfs_lib.sh
source "$HERE/../tests/lazyfs/lazyfs_lib.sh"
# shellcheck source=powercut_postgres.sh
source "$HERE/powercut_postgres.sh"
reason=$(lazyfs_skip_reason "$LAZYFS")
[[ -z $reason ]] || { echo "SKIP: $reason"; exit 77; }
if ((${#TARGETS[@]} == 0)); then
  TARGETS=(walseg-pwrite walseg-io_uring)
  reason=$(pg_skip_reason)
  if [[ -z $reason ]]; then TARGETS+=(postgres); else echo "powercut.sh: no postgres target: $reason"; fi
elif [[ ${TARGETS[*]} == postgres ]]; then
  reason=$(pg_skip_reason)
  [[ -z $reason ]] || { echo "SKIP: $reason"; exit 77; }
fi
for b in "$WALSEG" "$CHECK"; do [[ -x $b ]] || { echo "powercut.sh: $b is not built" >&2; exit 1; }; done

WORK=$(mktemp -d -t walseg_powercut.XXXXXX) || exit 1
FINDINGS=0
CLEANUP_HOOKS=()
on_exit() {
  local h
  for h in "${CLEANUP_HOOKS[@]}"; do "$h"; done
  lazyfs_cleanup
  if ((KEEP || FINDINGS)); then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap on_exit EXIT
trap 'echo "powercut.sh: interrupted"; exit 130' INT TERM HUP
RANDOM=$SEED
about="seed $SEED, $ROUNDS rounds per configuration, tear $TEAR%"
[[ " ${TARGETS[*]} " == *" walseg-"* ]] && about+="; walseg: kill after ${MIN_MS}..${MAX_MS} ms,
  walseg.init_method $INIT_METHOD, walseg.sync_method $SYNC_METHOD, records of $RECORD_SIZE bytes"
[[ " ${TARGETS[*]} " == *" postgres "* ]] && about+="; postgres: ${PG_SEGSIZES//,/ and } MB segments,
  kill after ${PG_MIN_MS}..${PG_MAX_MS} ms"
echo "powercut.sh: ${about//$'\n'  / }"

sleep_ms() { sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"; }

# finding TEXT: a lost, stale or torn result, or a round that could not run as planned.
finding() {
  FINDINGS=$((FINDINGS + 1))
  echo "FINDING: $*"
}

# new_chain NAME: a fresh mount with an empty WAL directory (durably named unless --fresh-dir);
# sets MNT, SOCK, D, ACK, LEFTOVERS.
new_chain() {
  [[ -n ${MNT:-} ]] && lazyfs_umount "$MNT"
  CHAIN=$((CHAIN + 1))
  MNT=$WORK/mnt
  SOCK=$WORK/lazyfs.sock
  D=$MNT/wal
  ACK=$WORK/$1.chain$CHAIN.ack
  LEFTOVERS=()
  lazyfs_mount "$MNT" "$SOCK" || return 1
  if ((!FRESH_DIR)); then
    mkdir "$D" && lazyfs_ctl "$SOCK" persist >/dev/null || return 1
  fi
}

# count_torn ACKED: sets C_TORN to the segment-named files of the wrong size, plus temporary
# files left by an earlier cut that are still there although a writer (ACKED > 0 commits) has
# started since, and notes this cut's temporary files for the next call.
count_torn() {
  local f name size
  C_TORN=0
  for f in "$D"/*; do
    name=${f##*/}
    [[ $name =~ ^[0-9A-F]{24}$ ]] || continue
    size=$(stat -c %s "$f")
    ((size == SEG_BYTES)) && continue
    [[ $INIT_METHOD == fallocate_keep_size || $INIT_METHOD == none ]] && ((size < SEG_BYTES)) && continue
    C_TORN=$((C_TORN + 1))
    echo "    torn: $name is $size bytes, not $SEG_BYTES"
  done
  if (($1 > 0)); then
    for name in "${LEFTOVERS[@]}"; do
      [[ -e $D/$name ]] || continue
      C_TORN=$((C_TORN + 1))
      echo "    torn: temporary file $name survived a writer that went on to commit"
    done
  fi
  LEFTOVERS=()
  for f in "$D"/xlogtemp.*; do [[ -e $f ]] && LEFTOVERS+=("${f##*/}"); done
}

# read_back LABEL: walseg recover and walseg dump, the LSNs dumped into dump.lsns.
read_back() {
  local rc
  "$WALSEG" recover --dir "$D" >"$WORK/recover.out" 2>&1
  rc=$?
  # A cut before the first walseg.control was durable: no WAL, so no record (the check then
  # counts every acknowledged one as lost).
  if ((rc == 1)) && grep -q '^walseg: no WAL in ' "$WORK/recover.out"; then
    : >"$WORK/dump.lsns"
    return 0
  fi
  if ((rc == 2)); then
    CORRUPTION_REPORTS=$((CORRUPTION_REPORTS + 1))  # torn unsynced blocks after a hole look so
  elif ((rc != 0)); then
    finding "$1: walseg recover failed (exit $rc): $(tail -2 "$WORK/recover.out")"
    return 1
  fi
  if ! "$WALSEG" dump --dir "$D" >"$WORK/dump.out" 2>&1; then
    finding "$1: walseg dump failed: $(tail -2 "$WORK/dump.out")"
    return 1
  fi
  awk '/^rmgr:/ { s = substr($0, index($0, " lsn: ") + 6); print substr(s, 1, index(s, ",") - 1) }' \
    "$WORK/dump.out" >"$WORK/dump.lsns"
}

# check_after_cut LABEL ACKED: recover, dump, check; sets C_TORN, and C_ACKED, C_LOST, C_STALE
# for the chain so far. Returns 1 when the round could not be checked.
check_after_cut() {
  local label=$1 rc summary
  count_torn "$2"
  : >"$WORK/dump.lsns"
  if [[ ! -d $D ]]; then
    echo "    $label: the WAL directory itself is gone"  # the checker counts the loss
  else
    read_back "$label" || return 1
  fi
  # A kill before `write` opened its ack log (it does so before the WAL) acknowledged nothing:
  # an empty log says so, where a missing one was reported as a finding (break-it round 17 L4).
  [[ -e $ACK ]] || : >"$ACK"
  rm -f "$WORK/check.lsns"  # the checker makes only a new file
  "$CHECK" --dir "$D" --ack-log "$ACK" --lsns "$WORK/check.lsns" >"$WORK/check.out" 2>&1
  rc=$?
  if ((rc > 1)); then
    finding "$label: walseg_powercut_check failed: $(tail -2 "$WORK/check.out")"
    return 1
  fi
  if ! cmp -s "$WORK/dump.lsns" "$WORK/check.lsns"; then
    finding "$label: walseg dump and walseg_powercut_check read different records"
    return 1
  fi
  summary=$(tail -1 "$WORK/check.out")
  [[ $summary =~ acknowledged\ ([0-9]+),\ lost\ ([0-9]+),\ stale\ ([0-9]+) ]] || {
    finding "$label: unexpected checker output: $summary"
    return 1
  }
  C_ACKED=${BASH_REMATCH[1]} C_LOST=${BASH_REMATCH[2]} C_STALE=${BASH_REMATCH[3]}
}

# walseg_round IO CLIENTS ROUND: one write, kill, cut and check. Returns 1 on a finding.
walseg_round() {
  local io=$1 k=$2 r=$3 ms pid st keep=0 drop_seed acks label
  ms=$((MIN_MS + RANDOM % (MAX_MS - MIN_MS + 1)))
  ((TEAR > 0 && r % 2 == 0)) && keep=$TEAR
  drop_seed=$RANDOM
  label="walseg-$io, $k client(s), chain $CHAIN round $r (kill after $ms ms, drop $drop_seed $keep)"
  acks=$(grep -c '^ack ' "$ACK" 2>/dev/null)
  "$WALSEG" write --dir "$D" --seconds 3600 --clients "$k" --record-size "$RECORD_SIZE" --ack-log "$ACK" \
    -c walseg.segment_size=1MB -c walseg.io_method="$io" -c walseg.init_method="$INIT_METHOD" \
    -c walseg.sync_method="$SYNC_METHOD" >"$WORK/write.out" 2>"$WORK/write.err" &
  pid=$!
  sleep_ms "$ms"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  st=$?
  if ((st != 137)); then
    finding "$label: walseg write ended by itself (exit $st) before the kill: $(tail -2 "$WORK/write.err")"
    return 1
  fi
  lazyfs_cut "$MNT" "$SOCK" "$drop_seed" "$keep" >"$WORK/drop.out" || {
    finding "$label: drop failed: $(cat "$WORK/drop.out")"
    return 1
  }
  acks=$(($(grep -c '^ack ' "$ACK" 2>/dev/null) - ${acks:-0}))
  check_after_cut "$label" "$acks" || return 1
  if ((C_LOST || C_STALE || C_TORN)); then
    local n=$((FINDINGS + 1)) again="--target walseg-$io --seed $SEED --rounds $ROUNDS --tear $TEAR"
    again+=" --min-ms $MIN_MS --max-ms $MAX_MS --init-method $INIT_METHOD --sync-method $SYNC_METHOD"
    again+=" --record-size $RECORD_SIZE"
    ((FRESH_DIR)) && again+=" --fresh-dir"
    finding "$label: $C_LOST lost, $C_STALE stale, $C_TORN torn; again: bench/powercut.sh $again" \
      "(same delays and cuts; where the kill lands inside the writer differs);" \
      "the WAL and the ack log are kept in $WORK/finding.$n"
    head -25 "$WORK/check.out"
    cp -a "$D" "$WORK/finding.$n" 2>/dev/null
    cp "$ACK" "$WORK/finding.$n.ack" 2>/dev/null
    return 1
  fi
}

wal_bytes() { du -sb "$D" 2>/dev/null | cut -f1 | grep . || echo 0; }

# end_chain: adds the chain's last check to the target's totals.
end_chain() {
  T_ACKED=$((T_ACKED + C_ACKED)) T_LOST=$((T_LOST + C_LOST)) T_STALE=$((T_STALE + C_STALE))
  C_ACKED=0 C_LOST=0 C_STALE=0
}

# walseg_target IO: 1 and 8 clients, ROUNDS rounds each; stops a configuration at its first
# finding (the state is kept for a look).
walseg_target() {
  local io=$1 k r t0=$SECONDS
  T_ROUNDS=0 T_ACKED=0 T_LOST=0 T_STALE=0 T_TORN=0
  for k in 1 8; do
    CHAIN=0 C_ACKED=0 C_LOST=0 C_STALE=0
    new_chain "walseg-$io-$k" || { finding "walseg-$io: could not mount walseg_lazyfs"; return; }
    for ((r = 1; r <= ROUNDS; r++)); do
      if ((r > 1 && $(wal_bytes) > CHAIN_BYTES)); then
        end_chain
        new_chain "walseg-$io-$k" || { finding "walseg-$io: could not mount walseg_lazyfs"; return; }
      fi
      T_ROUNDS=$((T_ROUNDS + 1))
      C_TORN=0  # a round that fails before its check counts no torn file (break-it round 18: unbound)
      walseg_round "$io" "$k" "$r"
      st=$?
      T_TORN=$((T_TORN + C_TORN))
      ((st == 0)) || break
    done
    end_chain
    lazyfs_umount "$MNT"
    MNT=
    echo "    walseg-$io, $k client(s): $((r > ROUNDS ? ROUNDS : r)) rounds, $CHAIN chain(s);" \
      "$T_ACKED acknowledged so far ($((SECONDS - t0)) s)"
  done
}

target_walseg_pwrite() { walseg_target pwrite; }
target_walseg_io_uring() { walseg_target io_uring; }

for t in "${TARGETS[@]}"; do
  declare -F "target_${t//-/_}" >/dev/null && continue
  echo "powercut.sh: unknown target '$t' (known: walseg-pwrite, walseg-io_uring, postgres)" >&2
  exit 2
done
CORRUPTION_REPORTS=0
RESULTS=()
for t in "${TARGETS[@]}"; do
  echo "== $t"
  "target_${t//-/_}"
  RESULTS+=("powercut $t: $T_ROUNDS rounds, $T_ACKED acknowledged, $T_LOST lost, $T_STALE stale, $T_TORN torn")
done
if [[ " ${TARGETS[*]} " == *" walseg-"* ]]; then
  # Said as a count, first (new-user trial 6: "reported corruption ... after 0 cuts" read as
  # a failure).
  echo "cuts after which walseg recover reported corruption (torn unsynced blocks past a hole; lost and stale" \
    "acknowledged records are counted below): $CORRUPTION_REPORTS; $SECONDS s in all"
else
  echo "$SECONDS s in all"
fi
((FINDINGS)) && echo "$FINDINGS finding(s), see FINDING lines above"
printf '%s\n' "${RESULTS[@]}"
((FINDINGS == 0))
