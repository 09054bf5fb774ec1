#!/usr/bin/env bash
# Installs what walseg needs from Debian 12's archive (only what is missing) and builds it
# into build/ (binaries in build/bin/). Run as root on a fresh machine; safe to run again.
#   scripts/build.sh          everything: the tool, the tests, the PostgreSQL extension
#   scripts/build.sh --tool   the walseg tool alone (README's main job), with only the packages
#                             it needs: a few minutes where everything takes up to 20 (new-user
#                             trial 17: the main job's command built every test first)
set -euo pipefail
cd "$(dirname "$0")/.."
tool_only=false
case "${1:-}" in
  --tool) tool_only=true ;;
  "") ;;
  *) echo "build.sh: unknown option $1 (give --tool, or nothing)" >&2; exit 2 ;;
esac

tool_packages=(build-essential cmake pkg-config libfmt-dev libcli11-dev nlohmann-json3-dev liburing-dev libisal-dev)
packages=(
  "${tool_packages[@]}" git libboost-test-dev
  clang libclang-rt-14-dev                 # libFuzzer targets (tests/fuzz)
  e2fsprogs xfsprogs btrfs-progs util-linux strace   # loop-mounted filesystem tests
  libfuse3-dev fuse3                       # walseg_lazyfs: power-cut tests (tests/lazyfs, bench/powercut.sh)
  postgresql-15 postgresql-server-dev-15 passwd libpq-dev  # contrib/walseg extension, pg_regress, crash test
)
missing=()
$tool_only && packages=("${tool_packages[@]}")
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "build.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# -Werror in every build here: the project targets Debian 12's compiler only. The tests are
# named ON or OFF each time: a build/ configured by --tool builds them again when asked.
if $tool_only; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWALSEG_WERROR=ON -DWALSEG_TESTS=OFF >/dev/null
  cmake --build build -j"$(nproc)" --target walseg
  exit 0
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWALSEG_WERROR=ON -DWALSEG_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)"

# The PostgreSQL extension goes where the server loads it from (pg_config --pkglibdir and
# --sharedir/extension); its tests (ctest regress, pg_crash) use the installed copy.
if [ -f build/lib/walseg.so ]; then
  if [ "$(id -u)" -eq 0 ]; then
    cmake --install build --component walseg_pg
  else
    echo "build.sh: not root, so the PostgreSQL extension is not installed;" \
         "run 'cmake --install build --component walseg_pg' as root"
  fi
fi
