#!/bin/sh
# Builds every libFuzzer target and runs each for SECONDS (default 60), one after another.
#   tests/fuzz/run_fuzz.sh SECONDS
# Configures a separate build directory (build-fuzz) with clang and -DWALSEG_FUZZ=ON, builds
# all targets in one cmake invocation (target fuzz_targets), replays each target's saved
# regressions (tests/fuzz/regressions/<target>/, inputs that once failed), then fuzzes a copy
# of its seed corpus (tests/fuzz/corpus/<target>/; the seeds in git stay as they are).
# Exits non-zero if any target reports a finding; the inputs are left in
# build-fuzz/findings/<target>/. The other targets still run, so one report shows them all.
set -eu
seconds=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build-fuzz"

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DWALSEG_FUZZ=ON -DWALSEG_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target fuzz_targets

# ASan's default 256 MB quarantine alone brings a long run near the 512 MB RSS limit, which
# would then report a false out-of-memory finding; a smaller one keeps the limit meaningful.
# Options already in ASAN_OPTIONS come later and win.
export ASAN_OPTIONS="quarantine_size_mb=32${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

# target:max_len. An input longer than max_len is never tried: the WAL reader's inputs are a
# description plus up to 24 mutations, control_fuzz's a mode byte and a 512-byte file; 0
# leaves libFuzzer's default.
targets="guc_file_fuzz:0 wal_reader_fuzz:512 segment_name_fuzz:0 control_fuzz:600"
failed=""
for spec in $targets; do
  target=${spec%%:*}
  max_len=${spec#*:}
  name=${target%_fuzz}
  corpus="$build/corpus/$name"
  findings="$build/findings/$target"
  mkdir -p "$corpus" "$findings"
  cp -n "$root/tests/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null || true
  len_opt=""
  [ "$max_len" -gt 0 ] && len_opt="-max_len=$max_len"

  regressions="$root/tests/fuzz/regressions/$target"
  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    if ! "$build/bin/$target" -rss_limit_mb=512 -timeout=5 "$regressions"/*; then
      failed="$failed $target(regression)"
      continue
    fi
  fi
  # libFuzzer exits non-zero on a crash, leak, timeout or out-of-memory.
  if "$build/bin/$target" -max_total_time="$seconds" -rss_limit_mb=512 -timeout=5 $len_opt \
      -artifact_prefix="$findings/" -print_final_stats=1 "$corpus"; then
    echo "$target: no findings in ${seconds}s"
  else
    failed="$failed $target"
  fi
done
if [ -n "$failed" ]; then
  echo "run_fuzz.sh: findings in:$failed (inputs in $build/findings/)" >&2
  exit 1
fi
echo "run_fuzz.sh: no findings in any target"
