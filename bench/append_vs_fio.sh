#!/usr/bin/env bash
# Single-writer commit rate of walseg's WAL writer against two references measured in the same
# run on the same filesystem: fio (ioengine io_uring, 8 kB writes, fdatasync after each, into a
# zero-filled file of one segment's size) and pg_test_fsync's "one 8kB write" fdatasync row.
#
# Usage: bench/append_vs_fio.sh [DIR] [SEGMENTS]   (DIR default: current directory)
# Needs fio and PostgreSQL's pg_test_fsync (apt-get install fio postgresql-15).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
walseg=${WALSEG:-$here/../build/bin/walseg}
dir=${1:-.}
segments=${2:-4}
pgbin=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
command -v fio >/dev/null || { echo "append_vs_fio.sh: fio missing (apt-get install fio)" >&2; exit 1; }
[ -x "$pgbin/pg_test_fsync" ] || { echo "append_vs_fio.sh: $pgbin/pg_test_fsync missing" >&2; exit 1; }
work=$(mktemp -d "$dir/append-vs-fio.XXXXXX")
trap 'rm -rf "$work"' EXIT

# walseg: one writer, 8 kB records each flushed, zero-filled 16 MB segments, both io methods.
"$walseg" bench --dir "$work" --phases append --methods zero_write --segments "$segments" \
  --json "$work/walseg.json" >"$work/walseg.txt"
# fio: the same size of file, laid out with zeros first (overwrite=1), so it compares with
# zero-filled segments; the same number of 8 kB commits as walseg's run.
bytes=$((segments * 4 * 1024 * 1024))
fio --name=wal --directory="$work" --ioengine=io_uring --rw=write --bs=8k --fdatasync=1 \
  --size=16M --io_size="$bytes" --overwrite=1 --fallocate=none --output-format=json >"$work/fio.json"
# pg_test_fsync: its fdatasync row of "Compare file sync methods using one 8kB write".
"$pgbin/pg_test_fsync" -f "$work/pg_test_fsync.out" -s 5 >"$work/pg_test_fsync.txt"

python3 - "$work" <<'PY'
import json, re, sys
work = sys.argv[1]
rows = json.load(open(f"{work}/walseg.json"))["rows"]
ops = {r["io"]: r["ops_per_s"] for r in rows if r["phase"] == "append"}
fio = json.load(open(f"{work}/fio.json"))["jobs"][0]["write"]["iops"]
text = open(f"{work}/pg_test_fsync.txt").read()
one = text.split("one 8kB write", 1)[1].split("Compare file sync methods using two", 1)[0]
pg = float(re.search(r"fdatasync\s+([\d.]+) ops/sec", one).group(1))
best = max(ops.values())
print(f"walseg append (zero_write, 8kB records flushed one by one): pwrite {ops['pwrite']:.0f}/s, io_uring {ops['io_uring']:.0f}/s")
print(f"fio io_uring 8kB write + fdatasync:                        {fio:.0f}/s")
print(f"pg_test_fsync fdatasync, one 8kB write:                    {pg:.0f}/s")
print(f"walseg io_uring / fio = {ops['io_uring'] / fio:.2f} (target >= 0.95)")
print(f"walseg best / pg_test_fsync = {best / pg:.2f} (target >= 0.95)")
PY
