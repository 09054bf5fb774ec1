#!/usr/bin/env bash
# ctest test `regress`: the walseg extension's pg_regress suite against the installed
# PostgreSQL (pg_config), in a temporary instance with shared_preload_libraries = 'walseg'.
#
#   bash regress/run_regress.sh BUILD_DIR [PG_CONFIG]
#
# 1. Makes sure the installed walseg.so, control and SQL files are the ones in BUILD_DIR (as
#    root it installs them with `cmake --install BUILD_DIR --component walseg_pg`; otherwise
#    a difference is an error, since the server loads the installed copy).
# 2. Checks with the walseg tool (BUILD_DIR/bin/walseg, when built) that
#    walseg_settings.conf is a valid walseg settings file: the server includes the same file.
# 3. Copies sql/, expected/ and the schedule into a fresh work directory and runs
#    pg_regress --temp-instance there. initdb refuses to run as root, so as root the suite
#    runs as the unprivileged user walseg_test (created if missing) that owns the work
#    directory.
#    Then checks that server's log for the preallocator's start line about the configuration,
#    one line of auto's decision, and no HINT inside DETAIL text.
# 4. Runs the fault-injection suite (failure_schedule) the same way in a second instance
#    whose environment has WALSEG_FAILPOINTS, and checks that server's log for the LOG
#    lines of the failures.
# 5. Runs nopreload_schedule in a third instance without shared_preload_libraries; no
#    server may log PANIC.
# Exit status is non-zero if anything failed; then regression.diffs and the end of the
# server log are printed and the work directory is kept.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build_dir="$(cd "${1:?usage: run_regress.sh BUILD_DIR [PG_CONFIG]}" && pwd)"
pg_config="${2:-pg_config}"
port="${WALSEG_REGRESS_PORT:-55432}"

bindir="$("$pg_config" --bindir)"
pg_regress="$("$pg_config" --pkglibdir)/pgxs/src/test/regress/pg_regress"
[ -x "$pg_regress" ] || { echo "run_regress: $pg_regress not found (postgresql-server-dev)" >&2; exit 1; }

# shellcheck source=pg_common.sh
source "$here/pg_common.sh"

# -- 1. the installed extension is this build's
walseg_ensure_installed "$build_dir" "$pg_config"

# -- 2. the included settings file is valid for the tool too
if [ -x "$build_dir/bin/walseg" ]; then
  "$build_dir/bin/walseg" check-config "$here/walseg_settings.conf"
fi

# -- 3. pg_regress in a work directory the server's user owns
work="$(mktemp -d /tmp/walseg_regress.XXXXXX)"
cp -r "$here/sql" "$here/expected" "$here/schedule" "$here/failure_schedule" \
      "$here/nopreload_schedule" "$here/walseg_nopreload.conf" "$here/walseg_settings.conf" "$work/"
mkdir -p "$work/results" "$work/failure/results" "$work/nopreload/results"
{ cat "$here/walseg_regress.conf"; echo "include '$work/walseg_settings.conf'"; } \
  > "$work/walseg_regress.conf"

walseg_as_user
if [ "$(id -u)" -eq 0 ]; then chown -R "$WALSEG_RUN_USER" "$work"; fi

# If we are interrupted, stop the temporary servers pg_regress may have left running.
cleanup() {
  local d
  for d in "$work/tmp_check/data" "$work/failure/tmp_check/data" "$work/nopreload/tmp_check/data"; do
    if [ -f "$d/postmaster.pid" ]; then
      "${AS_USER[@]}" "$bindir/pg_ctl" -D "$d" -m immediate stop >/dev/null 2>&1 || true
    fi
  done
}
trap cleanup EXIT

# run_suite OUTPUTDIR SCHEDULE CONFIG [VAR=VALUE...]: pg_regress in its own temporary
# instance, with the given variables in the server's environment. Prints the differences
# on failure.
run_suite() {
  local out="$1" schedule="$2" config="$3" status=0
  shift 3
  "${AS_USER[@]}" env "$@" "$pg_regress" \
    --bindir="$bindir" --inputdir="$work" --outputdir="$out" \
    --temp-instance="$out/tmp_check" --temp-config="$config" \
    --port="$port" --no-locale --schedule="$schedule" || status=$?
  if ((status != 0)); then
    [ -f "$out/regression.diffs" ] && cat "$out/regression.diffs"
    echo "---- end of the server log ($out/log/postmaster.log)"
    tail -n 40 "$out/log/postmaster.log" 2>/dev/null || true
  fi
  return "$status"
}

cd "$work"
status=0
run_suite "$work" "$work/schedule" "$work/walseg_regress.conf" || status=$?
# What the preallocator said at start about the configuration: the value PostgreSQL refused
# (walseg_regress.conf) with the default used instead, and the tool's settings it ignores
# (walseg_settings.conf).
mlog="$work/log/postmaster.log"
for expected in "walseg preallocator started: 3 segments ahead, segment size 16777216 bytes; invalid in the configuration, not applied: walseg.fill_io_class = 'sometimes' (using the default, best_effort)" \
                'walseg: the configuration sets 2 settings of the walseg tool, which PostgreSQL does not use: walseg.min_size, walseg.max_size'; do
  grep -qF "$expected" "$mlog" || { echo "run_regress: not in $mlog: $expected"; status=1; }
done
# Log hygiene: auto's decision (preallocator.sql) logged once, by the extension, and not by
# walseg_fs_info(), which only reports it; no "HINT:" line inside a DETAIL (errhint instead).
decisions="$(grep -c 'walseg.init_method = auto chose' "$mlog" || true)"
[ "$decisions" = 1 ] || { echo "run_regress: $decisions lines of auto's decision in $mlog, not 1"; status=1; }
if grep -nP '^\tHINT:' "$mlog"; then echo "run_regress: a HINT inside DETAIL text in $mlog"; status=1; fi
# -- 4. the fault-injection suite, and what its server logged
failpoints='fsync=EIO@1*2;fallocate=ENOSPC@1;dir_fsync=EIO@1'
run_suite "$work/failure" "$work/failure_schedule" "$work/walseg_regress.conf" \
  WALSEG_FAILPOINTS="$failpoints" || status=$?
flog="$work/failure/log/postmaster.log"
for expected in 'walseg preallocator could not create a WAL segment, retrying in 5 s' \
                'could not fsync file "pg_wal/xlogtemp.' \
                'but could not make its name durable'; do
  grep -qF "$expected" "$flog" || { echo "run_regress: not in $flog: $expected"; status=1; }
done
# -- 5. without shared_preload_libraries
run_suite "$work/nopreload" "$work/nopreload_schedule" "$work/walseg_nopreload.conf" || status=$?
if grep -n 'PANIC' "$work/log/postmaster.log" "$flog" "$work/nopreload/log/postmaster.log"; then
  echo "run_regress: a server logged PANIC"
  status=1
fi

if ((status != 0)); then
  echo "run_regress: FAILED; work directory kept: $work"
  exit "$status"
fi
rm -rf "$work"
