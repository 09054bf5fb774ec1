#!/usr/bin/env bash
# pgbench (PostgreSQL 15's) against stock PostgreSQL and the walseg preallocator, the benchmark
# DBAs trust (issue 18). A benchmark, not a test: it asserts nothing and prints a table.
#
#   bench/pgbench/run.sh [--rounds 3] [--seconds 20] [--clients 4] [--workloads wal,tpcb]
#                        [--segsizes 16,1] [--recycle on,off] [--periods fresh,steady]
#                        [--prealloc 8] [--init-method M] [--out DIR] [--pg-config PG_CONFIG]
#                        [--port 55520]
#
# Workloads: `wal`, a WAL-heavy custom script (one 8 kB uncompressed row per transaction: a
# STORAGE EXTERNAL text column, so each commit writes about a page of WAL and segments turn
# over fast), and `tpcb`, the built-in TPC-B-like script with -N (segments rarely turn over:
# walseg should cost nothing there). Per workload, wal_segment_size (initdb --wal-segsize),
# wal_recycle on or off (off is the advice for copy-on-write filesystems) and two periods:
# `fresh`, right after initdb and the table's creation, with checkpoints held off, so no
# segment exists to recycle and stock PostgreSQL creates each one on the commit path; and
# `steady`, after a warm-up run of the same length and two CHECKPOINTs, so recycled segments
# are there (with wal_recycle = on).
#
# Configurations `stock` and `walseg` (shared_preload_libraries = 'walseg',
# walseg.prealloc_segments = --prealloc, walseg.init_method = --init-method if given, its pool
# full before the run) alternate within each
# round, and every round starts from a new initdb, as bench/append_vs_fio.sh alternates its
# programs, because a shared virtual disk drifts from minute to minute. Per run: TPS (pgbench's
# "without initial connection time"), latency p50/p99/p99.9/max from `pgbench --log` (nearest
# rank over every transaction), and the segments PostgreSQL created itself (its DEBUG2 "done
# creating and filling new WAL file", counted during the run; log_min_messages = debug2 in both
# configurations, so both pay the same). The summary gives the median over rounds of each,
# and then issue 18's targets as ratios of those medians where the run has both sides.
# With gnuplot installed, one plot per configuration of the last round: TPS per second
# (pgbench -P 1) with PostgreSQL's own segment creations marked.
#
# Output in --out (default: a new pgbench-XXXXXX in the current directory): runs.tsv (one line
# per run), summary.tsv (medians), and per run its pgbench output, server log and plot.
# Needs postgresql-15 (pgbench, initdb, pg_ctl) and, for walseg, the extension installed (as
# root, scripts/build.sh). As root the servers run as the user walseg_test (regress/).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
rounds=3 seconds=20 clients=4 workloads=wal,tpcb segsizes=16,1 recycles=on,off periods=fresh,steady
prealloc=8 init_method="" out="" pg_config=pg_config port=55520
while (($#)); do
  case "$1" in
    --rounds) rounds=$2 ;; --seconds) seconds=$2 ;; --clients) clients=$2 ;;
    --workloads) workloads=$2 ;; --segsizes) segsizes=$2 ;; --recycle) recycles=$2 ;;
    --periods) periods=$2 ;; --prealloc) prealloc=$2 ;; --init-method) init_method=$2 ;; --out) out=$2 ;;
    --pg-config) pg_config=$2 ;; --port) port=$2 ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift 2
done
for n in "$rounds" "$seconds" "$clients" "$prealloc"; do
  [[ "$n" =~ ^[1-9][0-9]{0,4}$ ]] || { echo "run.sh: counts are whole numbers from 1, not \"$n\"" >&2; exit 2; }
done
bindir="$("$pg_config" --bindir)"

# shellcheck source=../../regress/pg_common.sh
source "$here/../../regress/pg_common.sh"
walseg_as_user
[ -n "$out" ] || out="$(mktemp -d "$PWD/pgbench-XXXXXX")"
# Its data/ is made afresh each round (rm -rf): an --out that holds anything is refused.
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "run.sh: --out $out is not empty; give a new or empty directory" >&2
  exit 2
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [ "$(id -u)" -eq 0 ]; then chown "$WALSEG_RUN_USER" "$out"; fi
data="$out/data"

run() { (cd / && "${AS_USER[@]}" "$@"); }
psql_() { run "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$out" -p "$port" -U postgres -d postgres "$@"; }
stop() { [ -f "$data/postmaster.pid" ] && run "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null 2>&1 || true; }
trap stop EXIT

# The WAL-heavy script: one row of 8 kB that TOAST stores uncompressed, out of line.
cat > "$out/wal.sql" <<'EOF'
INSERT INTO walheavy (pad) VALUES (repeat(md5(random()::text), 256));
EOF

# setup WORKLOAD SEGSIZE RECYCLE CONFIG: a new cluster, started, with the workload's tables.
setup() {
  stop
  rm -rf "$data"
  run "$bindir/initdb" -D "$data" -A trust -U postgres --no-locale -N --wal-segsize="$2" >/dev/null
  {
    echo "port = $port"; echo "listen_addresses = ''"; echo "unix_socket_directories = '$out'"
    echo "wal_recycle = $3"; echo "log_min_messages = debug2"
    # Checkpoints only where this script asks for them (the fresh period holds them off).
    echo "checkpoint_timeout = '1h'"; echo "max_wal_size = '8GB'"
    if [ "$4" = walseg ]; then
      echo "shared_preload_libraries = 'walseg'"; echo "walseg.prealloc_segments = $prealloc"
      [ -z "$init_method" ] || echo "walseg.init_method = '$init_method'"
    fi
  } >> "$data/postgresql.conf"
  run "$bindir/pg_ctl" -D "$data" -l "$out/server.log" -w -t 60 start >/dev/null
  if [ "$1" = wal ]; then
    psql_ -c "CREATE TABLE walheavy (id bigserial PRIMARY KEY, pad text)" \
          -c "ALTER TABLE walheavy ALTER COLUMN pad SET STORAGE EXTERNAL"
  else
    run "$bindir/pgbench" -i -q -s 10 -h "$out" -p "$port" -U postgres postgres >/dev/null 2>&1
  fi
  if [ "$4" = walseg ]; then
    psql_ -c "CREATE EXTENSION walseg"
  fi
}

# Waits (up to 60 s) until walseg's pool is full.
wait_pool() {
  for _ in $(seq 1 600); do
    [ "$(psql_ -c "SELECT segments_ahead >= target_ahead FROM walseg_status()")" = t ] && return 0
    sleep 0.1
  done
}

# bench WORKLOAD TAG: one pgbench run; prints "tps p50 p99 p999 max created" (latencies in ms).
bench() {
  local args=(-n -c "$clients" -j "$clients" -T "$seconds" -P 1 --log --log-prefix="$out/$2.log")
  [ "$1" = wal ] && args+=(-f "$out/wal.sql") || args+=(-N)
  local mark tps
  mark="$(wc -l < "$out/server.log")"
  run "$bindir/pgbench" "${args[@]}" -h "$out" -p "$port" -U postgres postgres > "$out/$2.out" 2>&1
  tail -n +"$((mark + 1))" "$out/server.log" > "$out/$2.server.log"
  tps="$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$out/$2.out")"
  # Column 3 of pgbench's per-transaction log is the latency in microseconds.
  cat "$out/$2.log".* | awk '{print $3}' | sort -n | awk -v tps="$tps" '
    { v[NR] = $1 }
    function rank(p) { i = int(p * NR); if (i < p * NR) i++; if (i < 1) i = 1; return v[i] / 1000 }
    END { printf "%s %.3f %.3f %.3f %.3f", tps, rank(0.5), rank(0.99), rank(0.999), v[NR] / 1000 }'
  rm -f "$out/$2.log".*
  echo " $(grep -c 'done creating and filling new WAL file' "$out/$2.server.log" || true)"
}

# plot TAG: TPS per second with PostgreSQL's own segment creations marked.
plot() {
  command -v gnuplot >/dev/null || return 0
  local start
  sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\1 \2/p' "$out/$1.out" > "$out/$1.tps"
  start="$(head -n 1 "$out/$1.server.log" | awk '{print $2}')"
  # Seconds since the run's first log line: an approximation of pgbench's clock.
  { grep 'done creating and filling new WAL file' "$out/$1.server.log" || true; } | awk -v s="$start" '
    function sec(t) { split(t, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
    { print sec($2) - sec(s), 0 }' > "$out/$1.created"
  gnuplot -e "set terminal png size 1000,400 noenhanced; set output '$out/$1.png'; set xlabel 's'; set ylabel 'TPS';
              set title '$1'; plot '$out/$1.tps' with lines title 'TPS (pgbench -P 1)',
              '$out/$1.created' with points pt 2 title 'segment PostgreSQL created'" 2>/dev/null || true
}

printf 'workload\tsegsize_mb\twal_recycle\tperiod\tconfig\tround\ttps\tp50_ms\tp99_ms\tp999_ms\tmax_ms\tcreated\n' > "$out/runs.tsv"
IFS=, read -r -a wl <<< "$workloads"; IFS=, read -r -a ss <<< "$segsizes"
IFS=, read -r -a rc <<< "$recycles"; IFS=, read -r -a pe <<< "$periods"
for w in "${wl[@]}"; do for s in "${ss[@]}"; do for r in "${rc[@]}"; do for p in "${pe[@]}"; do
  for round in $(seq 1 "$rounds"); do
    # Alternate which configuration goes first, so neither always meets the disk first.
    configs=(stock walseg); ((round % 2 == 0)) && configs=(walseg stock)
    for c in "${configs[@]}"; do
      tag="$w-${s}MB-recycle_$r-$p-$c-$round"
      setup "$w" "$s" "$r" "$c"
      if [ "$p" = steady ]; then
        [ "$c" = walseg ] && wait_pool
        bench "$w" "$tag-warmup" > /dev/null
        psql_ -c CHECKPOINT -c CHECKPOINT
      fi
      [ "$c" = walseg ] && wait_pool
      read -r tps p50 p99 p999 max created <<< "$(bench "$w" "$tag")"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$w" "$s" "$r" "$p" "$c" "$round" \
        "$tps" "$p50" "$p99" "$p999" "$max" "$created" >> "$out/runs.tsv"
      echo "$tag: tps $tps, p50 $p50 ms, p99 $p99 ms, p99.9 $p999 ms, max $max ms, created by PostgreSQL $created"
      [ "$round" = "$rounds" ] && plot "$tag"
    done
  done
done; done; done; done
stop

# Medians over rounds, per configuration.
awk -F'\t' 'NR > 1 { k = $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5; n[k]++; for (i = 7; i <= 12; i++) v[k, i, n[k]] = $i }
  function median(k, i,   m, a, j, l, t) { m = n[k]  # insertion sort: mawk has no asort
    for (j = 1; j <= m; j++) { t = v[k, i, j] + 0; for (l = j - 1; l >= 1 && a[l] > t; l--) a[l + 1] = a[l]; a[l + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
  END { print "workload\tsegsize_mb\twal_recycle\tperiod\tconfig\trounds\ttps\tp50_ms\tp99_ms\tp999_ms\tmax_ms\tcreated";
        for (k in n) { printf "%s\t%d", k, n[k]; for (i = 7; i <= 12; i++) printf "\t%s", median(k, i); print "" } }' \
  "$out/runs.tsv" | { read -r h; echo "$h"; sort; } > "$out/summary.tsv"
column -t -s $'\t' "$out/summary.tsv"

# The issue's targets, as ratios within this run (medians over rounds), where the summary has both
# sides: with wal_recycle = on, walseg right after initdb against stock's steady state (TPS) and
# against stock in the same period (p99.9); with wal_recycle = off, walseg against stock in each
# period. A benchmark's evidence, not a test: it prints, and asserts nothing.
awk -F'\t' 'NR > 1 { k = $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5; tps[k] = $7; p999[k] = $10; ws[$1 "\t" $2] = 1 }
  function have(a, b) { return (a in tps) && (b in tps) && tps[b] > 0 && p999[b] > 0 }
  function row(what, a, b, tpsgoal, latgoal) {
    printf "%-62s TPS %.2fx (goal >= %.2fx)   p99.9 %.2fx (goal <= %.2fx)\n", what, tps[a] / tps[b], tpsgoal,
           p999[a] / p999[b], latgoal }
  END {
    for (x in ws) {
      split(x, f, "\t"); w = f[1]; s = f[2]
      a = x "\ton\tfresh\twalseg"; b = x "\ton\tsteady\tstock"; c = x "\ton\tfresh\tstock"
      if (have(a, b) && have(a, c))
        printf "%-62s TPS %.2fx (goal >= 0.95x)   p99.9 %.2fx against stock after initdb (goal <= 0.50x)\n",
               w " " s "MB recycle on: walseg after initdb vs stock steady", tps[a] / tps[b], p999[a] / p999[c]
      for (p = 1; p <= 2; p++) {
        per = p == 1 ? "fresh" : "steady"
        a = x "\toff\t" per "\twalseg"; b = x "\toff\t" per "\tstock"
        if (have(a, b)) row(w " " s "MB recycle off, " per ": walseg vs stock", a, b, 1.0, 0.5)
      }
    } }' "$out/summary.tsv" | sort
echo "results in $out (runs.tsv, summary.tsv, per run .out, .server.log, and .png with gnuplot)"
