# Shared by run_regress.sh and crash_test.sh (sourced, not run).
#
# walseg_ensure_installed BUILD_DIR PG_CONFIG
#   The server loads the installed walseg.so, control and SQL files, so they must be this
#   build's: as root they are installed (`cmake --install BUILD_DIR --component walseg_pg`)
#   when they differ; otherwise a difference is an error.
# walseg_as_user
#   Sets the array AS_USER to the command prefix that runs a program as the unprivileged
#   user walseg_test when we are root (initdb and postgres refuse root), creating the user
#   if missing; empty otherwise. WALSEG_RUN_USER names the user.

WALSEG_RUN_USER=walseg_test

walseg_ensure_installed() {
  local build_dir="$1" pg_config="$2" here stale=0 pair
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  local pairs=("$build_dir/lib/walseg.so:$("$pg_config" --pkglibdir)/walseg.so"
               "$here/../contrib/walseg/walseg.control:$("$pg_config" --sharedir)/extension/walseg.control"
               "$here/../contrib/walseg/walseg--1.0.sql:$("$pg_config" --sharedir)/extension/walseg--1.0.sql")
  [ -f "$build_dir/lib/walseg.so" ] || { echo "walseg.so is not built in $build_dir/lib" >&2; return 1; }
  for pair in "${pairs[@]}"; do
    cmp -s "${pair%%:*}" "${pair#*:}" || stale=1
  done
  ((stale)) || return 0
  if [ "$(id -u)" -eq 0 ]; then
    cmake --install "$build_dir" --component walseg_pg >/dev/null
  else
    echo "the installed walseg extension differs from $build_dir; run" \
         "'cmake --install $build_dir --component walseg_pg' as root" >&2
    return 1
  fi
}

walseg_as_user() {
  AS_USER=()
  if [ "$(id -u)" -eq 0 ]; then
    id "$WALSEG_RUN_USER" >/dev/null 2>&1 ||
      useradd --system --no-create-home --shell /usr/sbin/nologin "$WALSEG_RUN_USER"
    AS_USER=(runuser -u "$WALSEG_RUN_USER" --)
  fi
}
