#!/usr/bin/env bash
# The scripts a user is told to run are runnable as written: README.md gave
# `bench/pgbench/run.sh --rounds 3 ...` and `bench/powercut.sh`, and both said "Permission
# denied" (mode 0644 in git). Every shell script with a #! line is a program and executable;
# the ones without (fs_lib.sh, pg_common.sh ...) are sourced. Every script path the READMEs
# name exists.
#   bash tests/scripts_runnable_test.sh SOURCE_DIR
set -uo pipefail
src="$(cd "${1:?usage: scripts_runnable_test.sh SOURCE_DIR}" && pwd)"
# shellcheck source=check_lib.sh
source "$src/tests/check_lib.sh"
cd "$src" || exit 1

seen=0
while IFS= read -r f; do
  seen=$((seen + 1))
  if [[ "$(head -c 2 "$f")" == '#!' ]]; then
    check "$f has a #! line and is executable" test -x "$f"
  else
    check "$f has no #! line (sourced) and says so in its first line" grep -q -m1 -i 'sourced\|shellcheck shell=' "$f"
  fi
done < <(find .ci bench regress scripts tests -name '*.sh' -o -path .ci/run -type f | sort)
check "found the project's scripts ($seen)" test "$seen" -ge 10

named=0
while IFS= read -r f; do
  named=$((named + 1))
  check "README names $f, which exists" test -f "$f"
done < <(grep -oh '`\(bench\|regress\|scripts\|tests\)/[A-Za-z0-9_./-]*\.sh' README.md contrib/walseg/README.md | tr -d '`' | sort -u)
check "the READMEs name scripts ($named)" test "$named" -ge 3

# Named as a command (a code span that starts with the path and goes on with arguments).
while IFS= read -r f; do
  check "README runs $f as a command, so it is executable" test -x "$f"
done < <(grep -oh '`\(bench\|regress\|scripts\|tests\)/[A-Za-z0-9_./-]*\.sh ' README.md contrib/walseg/README.md | tr -d '` ' | sort -u)
check_summary
