# shellcheck shell=bash
# powercut_postgres_eio.sh: the EIO case of bench/powercut.sh's postgres target (sourced by
# powercut_postgres.sh, whose helpers and PG_* variables it uses).
#
# With no load, `fail-fsync 1 any xlogtemp.*.*` fails the next fsync of a file named like the
# preallocator's temporary files (xlogtemp.<pid>.<n>); the pattern spares PostgreSQL's own
# xlogtemp.<pid> and its WAL segments, whose failed fsync PANICs the server (correctly, and not
# what is tested). Segment switches then give the preallocator a segment to make. Expected:
# the walseg LOG line with a DETAIL naming "Input/output error", no temporary file left,
# nothing installed by that attempt, walseg_status().failures one higher, commits going on
# meanwhile, and the retry (5 s later, WALSEG_RETRY_MS) making the segment whole, with the
# segments ahead back at the target; the postmaster the same process, no PANIC.

# pg_eio_case: EIO on the preallocator's fsync of its temporary file (see the header). Run with
# no load, on a server whose rounds passed. Each failed expectation is a finding.
pg_eio_case() {
  local f0 c0 pm names0 log0 t0 waited i
  E_OK=1
  echo "    EIO on the preallocator's fsync of its temporary file:"
  printf "walseg.init_method = 'zero_write'\nwalseg.prealloc_segments = 2\nwal_recycle = off\n" >"$PGW/round.conf"
  pg_run cp "$PGW/round.conf" "$PG_DATA/walseg_round.conf"
  # No recycling, and a checkpoint first: the segment a switch calls for is then the
  # preallocator's to make, and the horizon (redo + max_wal_size) leaves room for it.
  pg_psql -c "SELECT pg_reload_conf()" -c "CHECKPOINT" >/dev/null
  sleep 0.3
  pg_wait pg_topped_up 30 || { finding "EIO case: the preallocator is not at its target before the fault"; return 1; }
  f0=$(pg_status failures) c0=$(pg_status segments_created) pm=$(head -1 "$PG_DATA/postmaster.pid")
  names0=$(pg_segments) log0=$(pg_log_size) E_FAILED0=$(pg_fs_counter failed_fsyncs)
  lazyfs_ctl "$PG_SOCK" fail-fsync 1 any 'xlogtemp.*.*' >/dev/null || { finding "EIO case: could not arm fail-fsync"; return 1; }
  # Switch segments until the preallocator has one to make (the future segments present
  # may be PostgreSQL's recycled ones); a checkpoint after each switch keeps the horizon
  # ahead and, at the start of a segment, makes PostgreSQL preallocate nothing itself. The
  # next switch waits until the preallocator failed or settled: switching on while its
  # (paced) fill runs would make PostgreSQL create the segment itself, as it must when one
  # is missing, and then that name is PostgreSQL's, not the attempt's.
  E_F0=$f0 E_C0=$c0
  for ((i = 1; i <= 24; i++)); do
    pg_psql -c "INSERT INTO t VALUES (-$i, 'eio')" -c "SELECT pg_switch_wal()" -c "CHECKPOINT" >/dev/null
    sleep 0.3  # its statistics are those of its last finished round: let it see the switch
    pg_wait pg_eio_reacted 20
    [[ $(pg_status "failures > $f0") == t ]] && break
  done
  t0=$SECONDS
  if [[ $(pg_status "failures > $f0") != t ]]; then
    finding "EIO case: no failure counted after $((i - 1)) segment switches" \
      "(failed fsyncs: $(($(pg_fs_counter failed_fsyncs) - E_FAILED0)), segments created: $(pg_status "segments_created - $c0"))"
    lazyfs_ctl "$PG_SOCK" fail-fsync 0 >/dev/null
    return 1
  fi
  # The segment the attempt was for, as the DETAIL names it.
  E_EXPECT=$(pg_log_since "$log0" | sed -n 's/.*DETAIL: .*creating segment "pg_wal\/\([0-9A-F]\{24\}\)".*/\1/p' | head -1)
  E_EXPECT=${E_EXPECT:-"(no segment named in the DETAIL)"}
  # Checked at once: the retry comes 5 s (WALSEG_RETRY_MS) after the failure.
  pg_expect "the failure is the injected one (one failed fsync, nothing armed any more)" \
    test $(($(pg_fs_counter failed_fsyncs) - E_FAILED0)) = 1 -a "$(pg_fs_counter fail_armed)" = 0
  pg_expect "LOG: walseg preallocator could not create a WAL segment, DETAIL: ... Input/output error" \
    grep -A1 -q 'LOG:  walseg preallocator could not create a WAL segment' <(pg_log_since "$log0")
  pg_expect "  ... the DETAIL names the temporary file and Input/output error" \
    grep -q 'DETAIL: .*xlogtemp\..*Input/output error' <(pg_log_since "$log0")
  pg_expect "walseg_status(): one more failure, last_error says Input/output error" \
    test "$(pg_status "failures - $f0 || ' ' || (last_error LIKE '%Input/output error%')::int")" = "1 1"
  pg_expect "no temporary file left in pg_wal" test -z "$(pg_temps)"
  pg_expect "nothing installed: $E_EXPECT absent" test ! -e "$PG_WAL/$E_EXPECT"
  pg_expect "  ... and no segment name that was not there before" \
    test -z "$(comm -13 <(echo "$names0") <(pg_segments))"
  pg_expect "PostgreSQL commits meanwhile (200 transactions, all present)" pg_eio_commits
  pg_expect "the retry installs the segment, ahead back to target (within 30 s: the retry comes after 5 s, then a paced fill)" \
    pg_wait pg_eio_retried 30
  waited=$((SECONDS - t0))
  pg_expect "the retried segment is whole" test "$(stat -c %s "$PG_WAL/$E_EXPECT" 2>/dev/null)" = "$PG_SEG_BYTES"
  pg_expect "  ... no temporary file left, and the retry did not fail" \
    test -z "$(pg_temps)" -a "$(pg_status "failures - $f0")" = 1
  pg_expect "the server was not restarted and logged no PANIC" \
    test "$(head -1 "$PG_DATA/postmaster.pid")" = "$pm" -a -z "$(pg_log_since "$log0" | grep PANIC)"
  pg_psql -c "DELETE FROM t WHERE id < 0" >/dev/null
  if ((E_OK)); then
    echo "      EIO case passed (from the failure to a whole segment again: ${waited} s)"
  else
    finding "EIO case: see the FAIL lines above"
    pg_keep_state "$FINDINGS"
  fi
}
pg_eio_reacted() { (($(pg_status failures) > E_F0)) || pg_settled; }
pg_eio_retried() {
  [[ $(pg_status "segments_created > $E_C0 AND segments_ahead >= target_ahead") == t && -e $PG_WAL/$E_EXPECT ]]
}
pg_fs_counter() { lazyfs_ctl "$PG_SOCK" stats | grep -o " $1=[0-9]*" | cut -d= -f2; }
pg_expect() {
  local what=$1
  shift
  if "$@"; then echo "      ok   - $what"; else echo "      FAIL - $what"; E_OK=0; fi
}
pg_eio_commits() {
  awk 'BEGIN { for (i = 1; i <= 200; i++) print "INSERT INTO t VALUES (-1000 - " i ", 1);" }' | pg_psql &&
    [[ $(pg_psql -c "SELECT count(*) FROM t WHERE id <= -1001") == 200 ]]
}
