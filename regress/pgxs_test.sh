#!/usr/bin/env bash
# ctest test `pgxs`: contrib/walseg/Makefile, the PGXS build, as a DBA runs it.
#
#   bash regress/pgxs_test.sh BUILD_DIR [PG_CONFIG]
#
# In a scratch directory outside the source tree (make -f .../contrib/walseg/Makefile):
#   1. `make USE_PGXS=1` with WALSEG_CMAKE_BUILD=BUILD_DIR (so CMake only checks that this
#      build is up to date; a fresh CMake configure and build takes minutes) gives a walseg.so
#      identical to the CMake build's, and leaves nothing new in the source tree;
#   2. `make USE_PGXS=1 install DESTDIR=stage` puts walseg.so, walseg.control and
#      walseg--1.0.sql where pg_config says, under stage;
#   3. `make USE_PGXS=1 installcheck` runs the pg_regress suite against a running server that
#      preloads walseg, configured as README.md says (walseg_installcheck.conf appended to its
#      postgresql.conf), with the installed extension being this build's (as the other
#      PostgreSQL tests ensure).
# Exits 0 when all hold, 1 otherwise (the scratch directory is kept for inspection).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
top="$(cd "$here/.." && pwd)"
build_dir="$(cd "${1:?usage: pgxs_test.sh BUILD_DIR [PG_CONFIG]}" && pwd)"
pg_config="${2:-pg_config}"
bindir="$("$pg_config" --bindir)"
makefile="$top/contrib/walseg/Makefile"

# shellcheck source=pg_common.sh
source "$here/pg_common.sh"
walseg_ensure_installed "$build_dir" "$pg_config"
walseg_as_user

work="$(mktemp -d /tmp/walseg_pgxs.XXXXXX)"
data="$work/data"
log="$work/server.log"
port=55500
run() { (cd / && "${AS_USER[@]}" "$@"); }
fail() { echo "pgxs_test: FAILED: $*"; echo "scratch directory kept: $work"; exit 1; }
cleanup() {
  if [ -f "$data/postmaster.pid" ]; then run "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
source_files() { find "$top/contrib/walseg" "$top/regress" -newer "$work/.start" -print | sort; }
touch "$work/.start"
sleep 1   # so that anything made from here on is newer than the mark

# ---- 1. make USE_PGXS=1 ----------------------------------------------------------------------
mkdir "$work/build"
(cd "$work/build" && make -f "$makefile" USE_PGXS=1 PG_CONFIG="$pg_config" WALSEG_CMAKE_BUILD="$build_dir") \
  > "$work/make.log" 2>&1 || { tail -n 20 "$work/make.log"; fail "make USE_PGXS=1"; }
cmp -s "$work/build/walseg.so" "$build_dir/lib/walseg.so" || fail "walseg.so differs from the CMake build's"
[ -z "$(source_files)" ] || fail "the build wrote into the source tree: $(source_files | tr '\n' ' ')"
echo "make USE_PGXS=1: walseg.so built out of tree, as CMake's; nothing new in the source tree"

# ---- 2. make USE_PGXS=1 install ----------------------------------------------------------------
(cd "$work/build" && make -f "$makefile" USE_PGXS=1 PG_CONFIG="$pg_config" WALSEG_CMAKE_BUILD="$build_dir" \
   install DESTDIR="$work/stage") > "$work/install.log" 2>&1 || { tail -n 20 "$work/install.log"; fail "make install"; }
for f in "$("$pg_config" --pkglibdir)/walseg.so" "$("$pg_config" --sharedir)/extension/walseg.control" \
         "$("$pg_config" --sharedir)/extension/walseg--1.0.sql"; do
  [ -f "$work/stage$f" ] || fail "make install did not install $f"
done
echo "make USE_PGXS=1 install: walseg.so, walseg.control, walseg--1.0.sql under pg_config's directories"

# ---- 2b. the CMake build directory belongs to one server, and clean removes only its own --------
# A build configured for another pg_config was used as it was (a walseg.so for the wrong server),
# and `make clean` removed ./cmake-build even when WALSEG_CMAKE_BUILD named another directory.
mkdir -p "$work/other-pg" "$work/build/cmake-build"
printf '#!/bin/sh\nexec %q "$@"\n' "$(command -v "$pg_config")" > "$work/other-pg/pg_config"
chmod +x "$work/other-pg/pg_config"
touch "$work/build/cmake-build/mine"
if (cd "$work/build" && make -f "$makefile" USE_PGXS=1 PG_CONFIG="$work/other-pg/pg_config" \
      WALSEG_CMAKE_BUILD="$build_dir") > "$work/other.log" 2>&1; then
  fail "a build configured for another pg_config was used"
fi
grep -q "is configured for pg_config" "$work/other.log" || { cat "$work/other.log"; fail "no word of the other pg_config"; }
(cd "$work/build" && make -f "$makefile" USE_PGXS=1 PG_CONFIG="$pg_config" WALSEG_CMAKE_BUILD="$build_dir" clean) \
  >> "$work/make.log" 2>&1 || fail "make clean"
[ -f "$work/build/cmake-build/mine" ] || fail "make clean with WALSEG_CMAKE_BUILD removed ./cmake-build"
[ -f "$build_dir/CMakeCache.txt" ] || fail "make clean removed WALSEG_CMAKE_BUILD"
clean_plan="$(cd "$work/build" && make -n -f "$makefile" USE_PGXS=1 PG_CONFIG="$pg_config" clean)"
[[ "$clean_plan" == *"cmake-build"* ]] || fail "make clean would not remove its own ./cmake-build"
rm -rf "$work/build/cmake-build"
echo "make USE_PGXS=1: a build for another pg_config refused; clean removes only its own cmake-build"

# ---- 3. make USE_PGXS=1 installcheck against a running server ----------------------------------
(cd "$work/build" && make -f "$makefile" USE_PGXS=1 PG_CONFIG="$pg_config" walseg_installcheck.conf) \
  >> "$work/make.log" 2>&1 || fail "make walseg_installcheck.conf"
# The server's user reads every file the conf names; a private checkout (mode 0700) is not
# readable by it, so nothing the conf includes may lie in the source tree.
if grep -F "$top" "$work/build/walseg_installcheck.conf"; then
  fail "walseg_installcheck.conf includes a file in the source tree, which the server's user may not read"
fi
if [ "$(id -u)" -eq 0 ]; then chown -R "$WALSEG_RUN_USER" "$work"; fi
run "$bindir/initdb" -D "$data" -A trust -U postgres --no-locale -N >/dev/null
{ cat "$work/build/walseg_installcheck.conf"
  echo "port = $port"; echo "listen_addresses = ''"; echo "unix_socket_directories = '$work'"; } >> "$data/postgresql.conf"
run "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 start >/dev/null || fail "server did not start"
# make and pg_regress run as the caller, who owns the checkout (its Makefile and regress/
# files), not as the server's user: a private checkout (mode 0700) is readable by its owner
# only. The server is reached over its socket as the role postgres.
if ! (cd "$work/build" && env PGHOST="$work" PGPORT="$port" PGUSER=postgres \
        make -f "$makefile" USE_PGXS=1 PG_CONFIG="$pg_config" installcheck) > "$work/installcheck.log" 2>&1; then
  cat "$work/installcheck.log"
  [ -f "$work/build/regression.diffs" ] && head -n 60 "$work/build/regression.diffs"
  fail "make USE_PGXS=1 installcheck"
fi
grep -E '^(ok|not ok|test |#)|tests passed' "$work/installcheck.log" | tail -n 3
[ -z "$(source_files)" ] || fail "installcheck wrote into the source tree: $(source_files | tr '\n' ' ')"
run "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null || fail "fast shutdown"
echo "pgxs_test: passed"
rm -rf "$work"
