#!/usr/bin/env bash
# Runs every test of walseg: the Boost.Test units and the loop-mounted filesystem cases through
# ctest, then a bounded run of every libFuzzer target (tests/fuzz/run_fuzz.sh,
# WALSEG_FUZZ_SECONDS each, default 60). Expects scripts/build.sh to have run (README's test
# command does both). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

# --no-tests=error: a build/ made by `scripts/build.sh --tool` has no tests, and "No tests were
# found" must not pass (new-user trial 18).
ctest --test-dir build --output-on-failure --no-tests=error --timeout 900

if [ -x tests/fuzz/run_fuzz.sh ] || [ -f tests/fuzz/run_fuzz.sh ]; then
  bash tests/fuzz/run_fuzz.sh "${WALSEG_FUZZ_SECONDS:-60}"
fi
