#!/usr/bin/env bash
# The long mode of the power-loss crash test (tests/powerloss_test.cpp): runs it again and
# again with more random states per cut and longer workloads, a new seed each run, until at
# least --target distinct crash states (default 1,000,000) have been explored; then prints the
# states per workload, every kind of problem found (known findings included) and where each
# run's log is. Every run records its workloads afresh, so the states of different runs are
# different states.
#
# Usage: bench/crash_states.sh [--build DIR] [--target N] [--random R] [--scale S]
#                              [--seed FIRST] [--jobs J] [--keep DIR] [--work DIR]
#   --random R   random states per cut (WALSEG_POWERLOSS_RANDOM; default 40)
#   --scale S    workload length multiplier (WALSEG_POWERLOSS_SCALE; default 2)
#   --jobs J     runs at a time (default 1: the machine may be shared)
#   --keep DIR   keep every state with a problem under DIR (WALSEG_POWERLOSS_KEEP)
#   --work DIR   where the run logs go (default: a new directory under /var/tmp)
# Exit status: 0 when no run failed (known findings do not fail a run; set
# WALSEG_POWERLOSS_STRICT=1 to make them fail), 1 otherwise, 2 for a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build target=1000000 random=40 scale=2 seed=$(date +%s) jobs=1 keep="" work=""
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --random) random=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "crash_states.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$target" "$random" "$scale" "$seed" "$jobs"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "crash_states.sh: '$n' is not a number" >&2; exit 2; }
done
test_bin="$build/bin/powerloss_test"
[ -x "$test_bin" ] || { echo "crash_states.sh: $test_bin not built (cmake --build $build --target powerloss_test walseg)" >&2; exit 2; }
[ -n "$work" ] || work=$(mktemp -d /var/tmp/walseg-crash-states.XXXXXX)
mkdir -p "$work"
echo "crash_states.sh: target $target states, $random random states per cut, scale $scale, logs in $work"

# One run: its log holds the test's output; its exit status is the test's.
run_one() {
  local s=$1
  WALSEG_POWERLOSS_SEED=$s WALSEG_POWERLOSS_RANDOM=$random WALSEG_POWERLOSS_SCALE=$scale \
    WALSEG_POWERLOSS_KEEP=${keep:+$keep/seed$s} "$test_bin" --color_output=no >"$work/run-$s.log" 2>&1
}

states_in() { sed -n 's/.*crash states explored: \([0-9]*\).*/\1/p' "$@" | awk '{s += $1} END {print s + 0}'; }

# Only this invocation's logs count: a --work directory may hold the logs of earlier runs (of
# older builds), whose states and problems are not this build's.
total=0 failed=0 runs=0 started=$SECONDS logs=()
while ((total < target)); do
  pids=() seeds=()
  for ((j = 0; j < jobs; ++j)); do
    run_one "$seed" & pids+=($!) seeds+=("$seed") logs+=("$work/run-$seed.log")
    seed=$((seed + 1))
  done
  for i in "${!pids[@]}"; do
    if ! wait "${pids[$i]}"; then
      failed=$((failed + 1))
      echo "crash_states.sh: run with seed ${seeds[$i]} failed: $work/run-${seeds[$i]}.log"
    fi
    runs=$((runs + 1))
  done
  total=$(states_in "${logs[@]}")
  echo "crash_states.sh: $runs runs, $total crash states explored, $((SECONDS - started)) s"
done

echo
echo "crash states explored per workload (all runs):"
sed -n 's/^workload \([^:]*\): crash states explored: \([0-9]*\).*/\1 \2/p' "${logs[@]}" |
  awk '{s[$1] += $2} END {for (w in s) printf "  %-36s %d\n", w, s[w]}' | sort
echo "crash states explored: $total in $runs runs, $((SECONDS - started)) s"
echo
echo "problems (states, summed over runs):"
grep -h -E '^(KNOWN FINDING|.*error: in )' "${logs[@]}" |
  sed -E 's/^KNOWN FINDING ([^ ]*) in workload ([^:]*): ([0-9]*) states: (.*)/\3 known \1, \2: \4/; s/.*error: in "[^"]*": (.*)/1 failing: \1/' |
  awk '{n = $1; $1 = ""; s[$0] += n} END {for (k in s) printf "  %8d %s\n", s[k], k}' | sort -k2 || true
((failed == 0))
