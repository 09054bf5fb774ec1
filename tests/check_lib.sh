# check_lib.sh: the assertion helpers the shell tests share (sourced, never run).
# ok/not_ok count and print one TAP-like line; check DESCRIPTION COMMAND... is one assertion;
# the script ends with `check_summary`, which prints the counts and returns 1 on any failure.
PASS=0
FAIL=0
ok() { PASS=$((PASS + 1)); echo "ok   - $*"; }
not_ok() { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
contains() { [[ $1 == *"$2"* ]]; }
lacks() { [[ $1 != *"$2"* ]]; }
check_summary() {
  echo "$PASS passed, $FAIL failed"
  [[ $FAIL -eq 0 ]]
}
