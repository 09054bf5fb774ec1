#!/usr/bin/env bash
# Installs what walseg needs from Debian 12's archive (only what is missing) and builds it
# into build/ (binaries in build/bin/). Run as root on a fresh machine; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config git
  libfmt-dev libcli11-dev nlohmann-json3-dev liburing-dev libisal-dev libboost-test-dev
  clang libclang-rt-14-dev                 # libFuzzer targets (tests/fuzz)
  e2fsprogs xfsprogs btrfs-progs util-linux strace   # loop-mounted filesystem tests
  libfuse3-dev fuse3                       # walseg_lazyfs: power-cut tests (tests/lazyfs, bench/powercut.sh)
  postgresql-15 postgresql-server-dev-15 passwd libpq-dev  # contrib/walseg extension, pg_regress, crash test
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "build.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# -Werror in every build here: the project targets Debian 12's compiler only.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWALSEG_WERROR=ON >/dev/null
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
