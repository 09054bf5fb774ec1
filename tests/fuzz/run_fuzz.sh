#!/bin/sh
# Builds and runs the settings-file fuzzer for SECONDS (default 60).
#   tests/fuzz/run_fuzz.sh SECONDS
# Configures a separate build directory (build-fuzz) with clang and -DWALSEG_FUZZ=ON, runs
# guc_file_fuzz on a copy of the seed corpus (the seeds in git stay as they are), and exits
# non-zero if libFuzzer reports a finding; crash inputs are left in build-fuzz/findings/.
set -eu
seconds=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build-fuzz"

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DWALSEG_FUZZ=ON -DWALSEG_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target guc_file_fuzz

corpus="$build/corpus/guc_file"
findings="$build/findings"
mkdir -p "$corpus" "$findings"
cp -n "$root"/tests/fuzz/corpus/guc_file/* "$corpus"/ 2>/dev/null || true

# ASan's default 256 MB quarantine alone brings a long run near the 512 MB RSS limit, which
# would then report a false out-of-memory finding; a smaller one keeps the limit meaningful.
# Options already in ASAN_OPTIONS come later and win.
export ASAN_OPTIONS="quarantine_size_mb=32${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

# libFuzzer exits non-zero on a crash, leak, timeout or out-of-memory; set -e passes it on.
"$build/bin/guc_file_fuzz" -max_total_time="$seconds" -rss_limit_mb=512 -timeout=5 \
  -artifact_prefix="$findings/" -print_final_stats=1 "$corpus"
echo "guc_file_fuzz: no findings in ${seconds}s"
