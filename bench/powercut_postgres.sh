# shellcheck shell=bash
# powercut_postgres.sh: the `postgres` target of bench/powercut.sh (sourced by it, not run):
# PostgreSQL 15 with the walseg extension, its pg_wal on walseg_lazyfs, power-cut in rounds.
#
# One configuration per WAL segment size (--pg-segsize, default 1 and 16 MB): a fresh mount,
# `initdb --waldir=MOUNT/pg_wal`, the preallocator on, max_wal_size of 6 segments and a client
# issuing CHECKPOINT every 0.2-0.8 s, so that checkpoints recycle and remove segments while the
# preallocator installs new ones and the cut lands among all of that. Per round (the server
# keeps its data directory from round to round):
#   1. settings of the round by reload: walseg.init_method (zero_write, posix_fallocate,
#      glibc_emulation, sparse, auto in turn), walseg.prealloc_segments 2..4, wal_recycle
#      on/off;
#   2. 8 psql clients commit numbered rows (BEGIN; INSERT; COMMIT; \echo ID), so an id is
#      logged, outside the mount, only after its COMMIT returned;
#   3. after --pg-min-ms..--pg-max-ms (every third round: then at the first preallocator
#      temporary file, + 0-30 ms), every server process is killed with SIGKILL at once (the
#      postmaster is stopped first so that it forks nothing more; its children call setsid, so
#      there is no process group to kill): a power cut stops all of them together, and a child
#      left running could change pg_wal after the cut. Then the cut: walseg_lazyfs drops what
#      was not durable (every second round keeping --tear % of the unsynced blocks, torn);
#   4. segment-named files of the wrong size are counted (torn); restart (crash recovery);
#      the preallocator must be back (walseg_status() shows its pid) and reach its target;
#      then no xlogtemp.* may be left (PostgreSQL removes them at start; torn otherwise);
#   5. every id ever acknowledged in this configuration must be present (lost), and no id that
#      was never issued (a client has one transaction in flight at most: above the last
#      acknowledged + 1) nor any id twice (stale: WAL replayed that should not have been);
#   6. pg_waldump from the oldest segment present (named: preallocated future segments have
#      zero headers) to pg_current_wal_flush_lsn() reports nothing; no PANIC in the log.
# Then, in the first configuration, the EIO case (powercut_postgres_eio.sh): the preallocator's
# fsync of its temporary file fails; it must log, remove the file, install nothing and retry,
# and PostgreSQL must go on committing, unrestarted.
#
# LIMITATION: only pg_wal is power-cut. The data directory stays on a real disk that is not
# cut, so it keeps everything the kernel had: pages the checkpointer wrote but had not fsynced
# survive. That is more than a real cut leaves, not less; pages are written only after the WAL
# that covers them was flushed (PostgreSQL's WAL-before-data rule), so they never refer to WAL
# the cut removed, and recovery replays from the last checkpoint. What is tested is what the
# WAL device holds after a cut: everything acknowledged, whole segments, no temporary files.
#
# Needs: root (runs the server as the unprivileged user of regress/pg_common.sh), PostgreSQL 15
# (pg_config, or --pg-config), walseg.so built in --build's lib/ (installed as the regress
# tests install it). Settings from powercut.sh: ROUNDS, TEAR, SEED, KEEP, WORK, BUILD and
# PG_* (its usage). Sets T_ROUNDS, T_ACKED, T_LOST, T_STALE, T_TORN like every target.

PG_ID_STRIDE=10000000  # ids: (round * 16 + client) * stride + n, so each says who issued it

# pg_skip_reason: why the postgres target cannot run here (nothing if it can).
pg_skip_reason() {
  if ! command -v "$PG_CONFIG_BIN" >/dev/null; then echo "PostgreSQL not found ($PG_CONFIG_BIN)"
  elif [[ ! -x $("$PG_CONFIG_BIN" --bindir)/initdb ]]; then echo "initdb not found (pg_config --bindir)"
  elif [[ ! -f $BUILD/lib/walseg.so ]]; then echo "walseg.so is not built in $BUILD/lib"
  fi
}

pg_run() { (cd / && "${AS_USER[@]}" "$@"); }  # from /: the user may not enter the caller's cwd
pg_psql() { pg_run "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$PGW" -p "$PG_PORT" -U postgres -d postgres "$@"; }
pg_status() { pg_psql -c "SELECT $1 FROM walseg_status()" 2>/dev/null; }
pg_segments() { find "$PG_WAL" -maxdepth 1 -regextype posix-extended -regex '.*/[0-9A-F]{24}' -printf '%f\n' | sort; }
pg_temps() { find "$PG_WAL" -maxdepth 1 -name 'xlogtemp.*' -printf '%f\n'; }
pg_log_since() { tail -c +$(($1 + 1)) "$PG_LOG"; }
pg_log_size() { stat -c %s "$PG_LOG" 2>/dev/null || echo 0; }

pg_start() {
  pg_run "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 120 start >/dev/null 2>&1
}
pg_stop() {
  [[ -f $PG_DATA/postmaster.pid ]] || return 0
  pg_run "$PG_BIN/pg_ctl" -D "$PG_DATA" -m "${1:-fast}" -w -t 60 stop >/dev/null 2>&1
}

# pg_kill_all: SIGKILL to the postmaster and all its children at once, then waits until none
# is left: children may stay zombies a moment (their files are closed), the postmaster must be
# reaped, or the next start takes its pid in postmaster.pid for a live server.
pg_kill_all() {
  local pm p kids i alive
  pm=$(head -1 "$PG_DATA/postmaster.pid" 2>/dev/null)
  [[ $pm =~ ^[0-9]+$ ]] || return 1
  kill -STOP "$pm" 2>/dev/null
  kids=$(ps -o pid= --ppid "$pm")
  # shellcheck disable=SC2086
  kill -KILL "$pm" $kids 2>/dev/null
  for ((i = 0; i < 400; i++)); do
    alive=0
    [[ -e /proc/$pm ]] && alive=1
    for p in $kids; do
      [[ -e /proc/$p && $(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null) != Z ]] && alive=1
    done
    ((alive)) || return 0
    sleep 0.05
  done
  return 1
}

# pg_wait COMMAND SECONDS: runs COMMAND every 0.1 s until it succeeds.
pg_wait() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    "$1" && return 0
    sleep 0.1
  done
  return 1
}
pg_worker_up() { [[ $(pg_status "worker_pid IS NOT NULL") == t ]]; }
pg_topped_up() { [[ $(pg_status "segments_ahead >= target_ahead") == t ]]; }
pg_settled() { pg_topped_up && [[ -z $(pg_temps) ]]; }

# pg_client KEY: commits rows KEY*stride+1, +2, ... until its connection breaks; prints each id
# once its COMMIT has returned (psql runs one command at a time and stops at an error). Ids
# pass 2^31: %.0f, as mawk's %d is 32-bit.
pg_client() {
  awk -v base=$(($1 * PG_ID_STRIDE)) -v reps=$((PG_PAD / 32)) 'BEGIN {
    for (i = 1; ; i++)
      printf "BEGIN;\nINSERT INTO t VALUES (%.0f, repeat(md5(%d::text), %d));\nCOMMIT;\n\\echo %.0f\n", base + i, i, reps, base + i
  }' | pg_psql
}
pg_checkpointer() {
  awk 'BEGIN { for (;;) print "SELECT pg_sleep(0.2 + random() * 0.6);\nCHECKPOINT;" }' | pg_psql >/dev/null
}

# pg_round_conf ROUND: the round's settings, applied by reload (all are sighup or user).
pg_round_conf() {
  local methods=(zero_write posix_fallocate glibc_emulation sparse auto)
  R_METHOD=${methods[$((($1 - 1) % 5))]}
  R_AHEAD=$((2 + $1 % 3))
  R_RECYCLE=$( (($1 % 2)) && echo on || echo off)
  printf "walseg.init_method = '%s'\nwalseg.prealloc_segments = %d\nwal_recycle = %s\n" \
    "$R_METHOD" "$R_AHEAD" "$R_RECYCLE" >"$PGW/round.conf"
  pg_run cp "$PGW/round.conf" "$PG_DATA/walseg_round.conf"
}

# pg_count_ids: compares the ids in t with every acknowledgement of this configuration; sets
# C_ACKED, C_LOST, C_STALE (details of the first few on stderr).
pg_count_ids() {
  local out
  pg_psql -c "COPY (SELECT id FROM t) TO STDOUT" >"$PGW/present" || return 1
  cat "$PGW"/ack.* >"$PGW/acked" 2>/dev/null
  out=$(awk -v m=$PG_ID_STRIDE '
    FILENAME == ARGV[1] { acked[$1] = 1; k = int($1 / m); if ($1 % m > top[k]) top[k] = $1 % m; na++; next }
    {
      if (seen[$1]++) { stale++; if (ns++ < 5) print "    stale: id " $1 " present twice" > "/dev/stderr" }
      else if ($1 % m > top[int($1 / m)] + 1) { stale++; if (ns++ < 5) print "    stale: id " $1 " was never issued" > "/dev/stderr" }
    }
    END {
      for (id in acked) if (!(id in seen)) { lost++; if (nl++ < 10) print "    lost: id " id > "/dev/stderr" }
      print na + 0, lost + 0, stale + 0
    }' "$PGW/acked" "$PGW/present")
  read -r C_ACKED C_LOST C_STALE <<<"$out"
}

# pg_count_torn WHEN: C_TORN += segment-named files of the wrong size.
pg_count_torn() {
  local f size
  for f in $(pg_segments); do
    size=$(stat -c %s "$PG_WAL/$f")
    ((size == PG_SEG_BYTES)) && continue
    C_TORN=$((C_TORN + 1))
    echo "    torn $1: $f is $size bytes, not $PG_SEG_BYTES"
  done
}

# pg_waldump_range LABEL: pg_waldump over the recovered range, nothing reported.
pg_waldump_range() {
  local tli first end last err
  tli=$(pg_psql -c "SELECT lpad(to_hex(timeline_id), 8, '0') FROM pg_control_checkpoint()" | tr a-f A-F)
  first=$(pg_segments | grep "^$tli" | head -1)
  end=$(pg_psql -c "SELECT pg_current_wal_flush_lsn()")
  last=$(pg_psql -c "SELECT pg_walfile_name('$end')")
  if ! err=$(pg_run "$PG_BIN/pg_waldump" -q -p "$PG_WAL" -e "$end" "$first" "$last" 2>&1) || [[ -n $err ]]; then
    finding "$1: pg_waldump $first..$end: $(head -3 <<<"$err")"
    return 1
  fi
  R_DUMPED="$first..$end"
}

# pg_keep_state N: copies what a finding needs before the mount goes away.
pg_keep_state() {
  cp -a "$PG_WAL" "$WORK/finding.$1.pg_wal" 2>/dev/null
  cp "$PG_LOG" "$WORK/finding.$1.server.log" 2>/dev/null
  cat "$PGW"/ack.* >"$WORK/finding.$1.acked" 2>/dev/null
  echo "    kept: $WORK/finding.$1.* (pg_wal, server log, acknowledged ids; the data directory is $PG_DATA)"
}

# pg_wait_fill: waits up to 2 s for a temporary file of the preallocator (xlogtemp.PID.N).
pg_wait_fill() {
  local i
  for ((i = 0; i < 200; i++)); do
    compgen -G "$PG_WAL/xlogtemp.*.*" >/dev/null && return 0
    sleep 0.01
  done
  return 1
}

# pg_round ROUND: one load, kill, cut, restart and check. Returns 1 on a finding.
pg_round() {
  local r=$1 ms keep=0 drop_seed label pids=() w made ckpts log0 f0=$FINDINGS aim extra
  ms=$((PG_MIN_MS + RANDOM % (PG_MAX_MS - PG_MIN_MS + 1)))
  ((TEAR > 0 && r % 2 == 0)) && keep=$TEAR
  drop_seed=$RANDOM extra=$((RANDOM % 31))  # drawn every round: the same seed, the same cuts
  pg_round_conf "$r"
  pg_psql -c "SELECT pg_reload_conf()" >/dev/null
  label="postgres ${PG_SEG_MB}MB round $r ($R_METHOD, ahead $R_AHEAD, recycle $R_RECYCLE, kill after $ms ms$( ((r % 3)) || echo ", aimed at a fill"), drop $drop_seed $keep)"
  log0=$(pg_log_size)
  for w in 1 2 3 4 5 6 7 8; do
    pg_client $((r * 16 + w)) >"$PGW/ack.r$r.w$w" 2>"$PGW/client.err.w$w" &
    pids+=($!)
  done
  pg_checkpointer 2>/dev/null &
  pids+=($!)
  sleep_ms "$ms"
  made=$(pg_status segments_created)
  aim=-
  if ((r % 3 == 0)); then
    # Every third cut is aimed at a preallocator fill: the first walseg temporary file
    # after the delay, then 0-30 ms more (fill, fsync, rename or directory fsync).
    aim=none
    pg_wait_fill && aim=fill && sleep_ms "$extra"
  fi
  pg_kill_all || { finding "$label: the server's processes did not die"; return 1; }
  wait "${pids[@]}" 2>/dev/null
  lazyfs_cut "$PG_MNT" "$PG_SOCK" "$drop_seed" "$keep" >"$PGW/drop.out" ||
    { finding "$label: drop failed: $(cat "$PGW/drop.out")"; return 1; }
  if ! grep -q . "$PGW"/ack.r"$r".w*; then
    finding "$label: no commit was acknowledged; a client said: $(grep -hv '^$' "$PGW"/client.err.w* | head -2)"
    pg_keep_state "$FINDINGS"
    return 1
  fi
  C_TORN=0
  pg_count_torn "after the cut"
  ckpts=$(pg_log_since "$log0" | grep -c "checkpoint complete")
  if ! pg_start; then
    finding "$label: the server did not restart: $(pg_log_since "$log0" | grep -E 'FATAL|PANIC' | head -3)"
    pg_keep_state $((FINDINGS)); return 1
  fi
  pg_wait pg_worker_up 30 || { finding "$label: the preallocator did not come back"; return 1; }
  # Settled: at its target with no fill under way, seen twice 0.5 s apart (its statistics
  # are those of its last finished round, 0/0 before the first). A temporary file the cut
  # left and the start-up did not remove never goes away: torn.
  if ! { pg_wait pg_settled 60 && sleep 0.5 && pg_wait pg_settled 30; }; then
    for w in $(pg_temps); do
      C_TORN=$((C_TORN + 1))
      echo "    torn: $w still in pg_wal 60 s after the restart (the preallocator is pid $(pg_status worker_pid))"
    done
    [[ -n $(pg_temps) ]] || finding "$label: the preallocator did not reach its target" \
      "($(pg_status "segments_ahead || '/' || target_ahead || ', last error: ' || coalesce(last_error, '-')"))"
  fi
  pg_count_torn "after the restart"
  pg_count_ids || { finding "$label: could not read the table back"; return 1; }
  pg_waldump_range "$label" || { pg_keep_state $((FINDINGS)); return 1; }
  if pg_log_since "$log0" | grep -q "PANIC\|walseg preallocator could not"; then
    finding "$label: the server log reports: $(pg_log_since "$log0" | grep "PANIC\|walseg preallocator could not" | head -2)"
    return 1
  fi
  # blocks: unsynced 4 kB blocks the cut dropped + kept (torn); names: directory changes undone
  printf "    %2sMB %2d %-15s ahead %d recycle %-3s| kill %4d ms %-4s cut %5d %2d%%: %s | %6d acked, %2d ckpt, %2s by walseg | pg_waldump %s ok\n" \
    "$PG_SEG_MB" "$r" "$R_METHOD" "$R_AHEAD" "$R_RECYCLE" "$ms" "$aim" "$drop_seed" "$keep" \
    "$(sed -n 's/.*: \([0-9]*\) dirty blocks dropped, \([0-9]*\) kept, \([0-9]*\) names undone.*/\1+\2 blocks, \3 names/p' "$PGW/drop.out")" \
    "$C_ACKED" "$ckpts" "$made" "$R_DUMPED"
  if ((C_LOST || C_STALE || C_TORN)); then
    finding "$label: $C_LOST lost, $C_STALE stale, $C_TORN torn; again: bench/powercut.sh --target postgres" \
      "--pg-segsize $PG_SEGSIZES --seed $SEED --rounds $ROUNDS --tear $TEAR --pg-min-ms $PG_MIN_MS --pg-max-ms $PG_MAX_MS" \
      "(same settings, delays and cuts; where the kill lands differs)"
    pg_keep_state $((FINDINGS))
    return 1
  fi
  ((FINDINGS == f0))
}

# shellcheck source=powercut_postgres_eio.sh
source "$HERE/powercut_postgres_eio.sh"  # pg_eio_case

# pg_configuration SEG_MB EIO: a fresh mount and cluster, ROUNDS rounds, then the EIO case if
# EIO is 1. Adds to the target's totals.
pg_configuration() {
  local r st t0=$SECONDS
  PG_SEG_MB=$1 PG_SEG_BYTES=$(($1 * 1024 * 1024))
  PGW=$WORK/pg$1 PG_MNT=$WORK/pg$1/mnt PG_SOCK=$WORK/pg$1.sock
  PG_DATA=$PGW/data PG_WAL=$PG_MNT/pg_wal PG_LOG=$PGW/server.log PG_PORT=$((PG_PORT0 + $1))
  PG_PAD=$((PG_SEG_MB > 1 ? 1500 : 400))  # bytes per row: the WAL rate crosses segments either way
  mkdir -p "$PGW" && chown "$WALSEG_RUN_USER" "$PGW" || return 1
  lazyfs_mount "$PG_MNT" "$PG_SOCK" || { finding "postgres: could not mount walseg_lazyfs"; return 1; }
  # The mount's root belongs to root: the server's user gets pg_wal itself, made durable.
  mkdir "$PG_WAL" && chown "$WALSEG_RUN_USER:" "$PG_WAL" || return 1
  pg_run "$PG_BIN/initdb" -D "$PG_DATA" --waldir="$PG_WAL" -A trust -U postgres --no-locale \
    --wal-segsize="$1" -N >"$PGW/initdb.out" 2>&1 || { finding "postgres: initdb failed: $(tail -3 "$PGW/initdb.out")"; return 1; }
  lazyfs_ctl "$PG_SOCK" persist >/dev/null || return 1  # initdb -N fsyncs nothing: a set-up step
  cat >>"$PG_DATA/postgresql.conf" <<EOF
shared_preload_libraries = 'walseg'
port = $PG_PORT
listen_addresses = ''
unix_socket_directories = '$PGW'
max_connections = 30
fsync = on
synchronous_commit = on
full_page_writes = on
max_wal_size = '$((6 * $1))MB'
min_wal_size = '$((2 * $1))MB'
wal_keep_size = '$((2 * $1))MB'
checkpoint_timeout = '30s'
log_checkpoints = on
include_if_exists = 'walseg_round.conf'
EOF
  pg_round_conf 1
  pg_start || { finding "postgres: the server did not start: $(tail -3 "$PG_LOG")"; return 1; }
  pg_psql -c "CREATE EXTENSION walseg" -c "CREATE TABLE t (id bigint PRIMARY KEY, pad text)" ||
    { finding "postgres: could not set up the database"; return 1; }
  C_ACKED=0 C_LOST=0 C_STALE=0
  for ((r = 1; r <= ROUNDS; r++)); do
    T_ROUNDS=$((T_ROUNDS + 1))
    pg_round "$r"
    st=$?
    T_TORN=$((T_TORN + C_TORN))
    ((st == 0)) || break
  done
  T_ACKED=$((T_ACKED + C_ACKED)) T_LOST=$((T_LOST + C_LOST)) T_STALE=$((T_STALE + C_STALE))
  echo "    postgres ${1}MB: $((r > ROUNDS ? ROUNDS : r)) rounds, $C_ACKED acknowledged ($((SECONDS - t0)) s)"
  ((st == 0 && $2)) && pg_eio_case
  pg_stop fast || pg_stop immediate
  lazyfs_umount "$PG_MNT"
  ((KEEP || FINDINGS)) || rm -rf "$PGW"
}

pg_cleanup() {
  [[ -n ${PG_DATA:-} ]] && pg_stop immediate
  return 0
}

target_postgres() {
  local seg first=1 reason
  T_ROUNDS=0 T_ACKED=0 T_LOST=0 T_STALE=0 T_TORN=0
  reason=$(pg_skip_reason)
  [[ -z $reason ]] || { finding "postgres: $reason"; return; }
  PG_BIN=$("$PG_CONFIG_BIN" --bindir)
  # shellcheck source=../regress/pg_common.sh
  source "$HERE/../regress/pg_common.sh"
  walseg_ensure_installed "$BUILD" "$PG_CONFIG_BIN" || { finding "postgres: walseg is not installed"; return; }
  walseg_as_user
  chmod 711 "$WORK"  # the server's user passes through to its own directories
  CLEANUP_HOOKS+=(pg_cleanup)
  for seg in ${PG_SEGSIZES//,/ }; do
    pg_configuration "$seg" $((first && PG_EIO))
    first=0
  done
}
