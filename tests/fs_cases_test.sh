#!/usr/bin/env bash
# fs_cases_test.sh: cases C01, C02, C04, C05 and C10 on real filesystems, driving the walseg tool.
#
# The unit tests reach these paths through failpoints; this script makes the kernel itself give
# the answers: an ext4 without extents (fallocate says EOPNOTSUPP: C02), a tiny ext4 with about
# 5 MB free (real ENOSPC with a real short write: C10), a tmpfs of size=64m like Docker's
# /dev/shm (C05), strace counting glibc_emulation's writes (C04, in place of an NFS mount) and
# strace injecting EINTR into fallocate (C01).
#
# Usage: fs_cases_test.sh /path/to/walseg      (ctest: add_test fs_cases, SKIP_RETURN_CODE 77)
# Needs root and loop devices; exits 77 (skip) without them. Every mount and loop device made
# here is removed by the EXIT trap, also after a failure or an interrupt.
set -u -o pipefail

WALSEG=${1:?usage: fs_cases_test.sh WALSEG_BINARY}
SKIP=77
MiB=1048576
SEG16=$((16 * MiB))
GiB=$((1024 * MiB))

skip() { echo "SKIP: $*"; exit "$SKIP"; }
[[ $(id -u) -eq 0 ]] || skip "fs_cases needs root (loop-mounted filesystems, tmpfs mounts)"
command -v losetup >/dev/null || skip "losetup not found: loop devices unavailable"
[[ -x $WALSEG ]] || { echo "FAIL: walseg binary '$WALSEG' is not executable"; exit 1; }
for t in mkfs.ext4 mount umount stat df; do
  command -v "$t" >/dev/null || { echo "FAIL: $t not found"; exit 1; }
done

WORK=$(mktemp -d /var/tmp/walseg_fs_cases.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
MOUNTS=()
LOOPS=()
cleanup() {
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
    umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null ||
      echo "warning: could not unmount ${MOUNTS[i]}"
  done
  for i in "${LOOPS[@]}"; do losetup -d "$i" 2>/dev/null || echo "warning: losetup -d $i failed"; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP

# Loop devices may be missing in a container even for root: probe once.
truncate -s 1M "$WORK/probe.img"
if ! probe=$(losetup -f --show "$WORK/probe.img" 2>/dev/null); then
  skip "loop devices unavailable (losetup -f failed)"
fi
losetup -d "$probe"
rm -f "$WORK/probe.img"

source "$(dirname "${BASH_SOURCE[0]}")/check_lib.sh"

# make_ext4 NAME SIZE_MB [mkfs options]: image, loop device, mount; sets MNT (no subshell, so the
# trap's lists stay complete).
make_ext4() {
  local name=$1 size=$2 img dev
  shift 2
  img=$WORK/$name.img
  MNT=$WORK/$name
  truncate -s "${size}M" "$img" && mkfs.ext4 -q -F -b 4096 -m 0 "$@" "$img" >/dev/null || return 1
  dev=$(losetup -f --show "$img") || return 1
  LOOPS+=("$dev")
  mkdir -p "$MNT" && mount "$dev" "$MNT" || return 1
  MOUNTS+=("$MNT")
}

# run ARGS...: runs walseg, setting RC, OUT (stdout) and ERR (stderr).
run() {
  OUT=$("$WALSEG" "$@" 2>"$WORK/stderr")
  RC=$?
  ERR=$(cat "$WORK/stderr")
}
segnames() { ls -1 "$1" 2>/dev/null | grep -E '^[0-9A-F]{24}$'; }
count_segnames() { segnames "$1" | wc -l; }
count_temps() { ls -1 "$1" 2>/dev/null | grep -c '^xlogtemp\.'; }
size_of() { stat -c %s "$1"; }
alloc_of() { echo $(($(stat -c %b "$1") * $(stat -c %B "$1"))); }
avail_of() { df -B1 --output=avail "$1" | tail -1 | tr -d ' '; }
used_method() { awk -v n="$2" '$1 == n { print $2 }' <<<"$1"; }
# Every segment name in DIR is exactly SIZE bytes and fully allocated.
all_complete() {
  local d=$1 size=$2 f
  for f in $(segnames "$d"); do
    [[ $(size_of "$d/$f") -eq $size && $(alloc_of "$d/$f") -ge $size ]] || {
      echo "    incomplete: $f size $(size_of "$d/$f") allocated $(alloc_of "$d/$f")"
      return 1
    }
  done
}
not_signalled() { [[ $RC -ne 0 && $RC -lt 128 ]]; }

echo "== C02: ext4 without extents refuses fallocate (EOPNOTSUPP); fallback to zero_write"
if make_ext4 noext 160 -O ^extents,^64bit; then
  if command -v fallocate >/dev/null; then
    check "C02 the filesystem itself refuses fallocate (util-linux fallocate fails)" \
      bash -c "! fallocate -l 1M '$MNT/probe' 2>/dev/null"
    rm -f "$MNT/probe"
  fi
  d=$MNT/wal
  run create --dir "$d" --method posix_fallocate --count 3 --segment-size 16MB
  check "C02 posix_fallocate on ^extents succeeds by fallback (rc=$RC)" test "$RC" -eq 0
  check "C02 three segments exist" test "$(count_segnames "$d")" -eq 3
  check "C02 each segment is 16MB and fully allocated" all_complete "$d" "$SEG16"
  check "C02 method used is zero_write" test "$(used_method "$OUT" 000000010000000000000002)" = zero_write
  check "C02 fallback logged once per directory, not per segment" \
    test "$(grep -c 'not supported' <<<"$ERR")" -eq 1
  check "C02 log names the errno and the filesystem type" \
    contains "$ERR" "fallocate: Operation not supported (ext4)); using zero_write instead"
  check "C02 no temporary file left" test "$(count_temps "$d")" -eq 0
  run create --dir "$MNT/ks" --method fallocate_keep_size --segment-size 16MB
  # An empty file but for the 44-byte ready stamp walseg gives every segment it makes.
  check "C02 fallocate_keep_size falls back to none (size 44: the ready stamp)" \
    test "$RC" -eq 0 -a "$(used_method "$OUT" 000000010000000000000001)" = none \
    -a "$(size_of "$MNT/ks/000000010000000000000001")" -eq 44
else
  not_ok "C02 could not build an ext4 image without extents"
fi

echo "== C10: ext4 with about 5 MB free, 16MB segments"
if make_ext4 small 72; then
  d=$MNT/wal
  mkdir -p "$d"
  filler=$(($(avail_of "$MNT") - 5 * MiB))
  dd if=/dev/zero of="$MNT/filler" bs=1M count=$((filler / MiB)) status=none 2>/dev/null
  sync
  before=$(avail_of "$MNT")
  echo "    free before creation: $before bytes"
  check "C10 about 5 MB free (between 3 and 8 MiB)" test "$before" -ge $((3 * MiB)) -a "$before" -le $((8 * MiB))
  for m in zero_write posix_fallocate glibc_emulation; do
    run create --dir "$d" --method "$m" --segment-size 16MB
    echo "    $m: rc=$RC: $ERR"
    check "C10 $m fails with an error, not a signal" not_signalled
    check "C10 $m says No space left on device" contains "$ERR" "No space left on device"
    check "C10 $m names the size wanted" contains "$ERR" "$SEG16 bytes"
    check "C10 $m names the path" contains "$ERR" "$d/"
    check "C10 $m leaves no segment name" test "$(count_segnames "$d")" -eq 0
    check "C10 $m leaves no xlogtemp file" test "$(count_temps "$d")" -eq 0
    sync
    check "C10 $m gave the space back (temp unlinked)" test "$(avail_of "$MNT")" -ge $((before - MiB))
    if [[ $m == zero_write ]]; then
      check "C10 zero_write reports bytes written of bytes wanted" \
        grep -Eq "wrote [0-9]+ of $SEG16 bytes" <<<"$ERR"
    fi
  done
  rm -f "$MNT/filler"
  sync
  i=1
  for m in zero_write posix_fallocate glibc_emulation; do
    run create --dir "$d" --method "$m" --segment-size 16MB --start "$i"
    check "C10 after freeing space $m succeeds (rc=$RC)" test "$RC" -eq 0
    i=$((i + 1))
  done
  check "C10 retried segments are complete" all_complete "$d" "$SEG16"
  check "C10 three segments after the retries" test "$(count_segnames "$d")" -eq 3
else
  not_ok "C10 could not build the small ext4 image"
fi

echo "== C05: tmpfs size=64m, 16MB segments: ENOSPC at creation, never SIGBUS"
MNT=$WORK/shm64
mkdir -p "$MNT"
if mount -t tmpfs -o size=64m tmpfs "$MNT"; then
  MOUNTS+=("$MNT")
  for m in posix_fallocate zero_write glibc_emulation sparse; do
    d=$MNT/$m
    first_fail=0
    for i in 1 2 3 4 5; do
      run create --dir "$d" --method "$m" --segment-size 16MB --start "$i"
      if [[ $RC -ne 0 ]]; then first_fail=$i; break; fi
    done
    if [[ $m == sparse ]]; then
      check "C05 sparse: all five creations succeed on a 64m tmpfs" test "$first_fail" -eq 0
      check "C05 sparse: five segments of exactly 16MB" \
        test "$(count_segnames "$d")" -eq 5 -a "$(size_of "$d/000000010000000000000005")" -eq "$SEG16"
    else
      echo "    $m: creation $first_fail failed, rc=$RC: $ERR"
      check "C05 $m: the 4th or 5th creation fails" test "$first_fail" -eq 4 -o "$first_fail" -eq 5
      check "C05 $m: an error exit, not SIGBUS or another signal (rc=$RC)" not_signalled
      check "C05 $m: No space left on device" contains "$ERR" "No space left on device"
      check "C05 $m: segments that exist are complete" all_complete "$d" "$SEG16"
      check "C05 $m: no xlogtemp left" test "$(count_temps "$d")" -eq 0
    fi
    rm -rf "$d"
  done
else
  not_ok "C05 could not mount a tmpfs"
fi

echo "== C04 analogue: glibc_emulation writes one byte per 4096-byte block"
if command -v strace >/dev/null; then
  d=$WORK/c04
  start=$(date +%s%N)
  # File::pwrite_all issues pwritev(2) with one iovec, so count every positioned-write syscall.
  strace -c -f -e trace=pwrite64,pwritev,pwritev2 -o "$WORK/c04.strace" \
    "$WALSEG" create --dir "$d" --method glibc_emulation --segment-size 16MB >/dev/null 2>&1
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  calls=$(awk '$NF ~ /^pwrite/ { n += $4 } END { print n + 0 }' "$WORK/c04.strace")
  echo "    glibc_emulation 16MB: $calls positioned writes in ${ms} ms (under strace)"
  check "C04 glibc_emulation under strace succeeds" test "$rc" -eq 0
  check "C04 about size/4096 = 4096 write calls (got ${calls:-none})" \
    test "${calls:-0}" -ge 4096 -a "${calls:-0}" -le 4112
  check "C04 no holes after glibc_emulation" all_complete "$d" "$SEG16"
else
  echo "SKIP part: strace not installed, C04 write count not measured"
fi

echo "== C01: EINTR injected into fallocate by strace, 1GB segment"
if command -v strace >/dev/null; then
  d=$WORK/c01
  OUT=$(strace -f -o "$WORK/c01a.strace" -e trace=fallocate,pwrite64,pwritev \
    -e inject=fallocate:error=EINTR:when=1..20 \
    "$WALSEG" create --dir "$d" --method posix_fallocate --segment-size 1GB 2>"$WORK/stderr")
  RC=$?
  ERR=$(cat "$WORK/stderr")
  seg=$d/000000010000000000000001
  check "C01 twenty EINTR: creation succeeds (rc=$RC) $ERR" test "$RC" -eq 0
  check "C01 twenty EINTR were injected" test "$(grep -c 'EINTR.*INJECTED' "$WORK/c01a.strace")" -eq 20
  check "C01 twenty EINTR: exactly 1GB" test "$(size_of "$seg" 2>/dev/null || echo 0)" -eq "$GiB"
  check "C01 twenty EINTR: all blocks allocated (stat %b * 512 >= size)" \
    test $(($(stat -c %b "$seg" 2>/dev/null || echo 0) * 512)) -ge "$GiB"
  check "C01 twenty EINTR: no fallback (method used posix_fallocate)" \
    test "$(used_method "$OUT" 000000010000000000000001)" = posix_fallocate
  d=$WORK/c01b
  OUT=$(strace -f -o "$WORK/c01b.strace" -e trace=fallocate,pwrite64,pwritev \
    -e inject=fallocate:error=EINTR:when=1+ \
    "$WALSEG" create --dir "$d" --method posix_fallocate --segment-size 1GB 2>"$WORK/stderr")
  RC=$?
  ERR=$(cat "$WORK/stderr")
  attempts=$(grep -c 'EINTR.*INJECTED' "$WORK/c01b.strace")
  echo "    endless EINTR: rc=$RC after $attempts attempts: $ERR"
  check "C01 endless EINTR: gives up with an error (rc=$RC)" not_signalled
  check "C01 endless EINTR: Interrupted system call" contains "$ERR" "Interrupted system call"
  check "C01 endless EINTR: names method and size" contains "$ERR" "$GiB bytes for file"
  check "C01 endless EINTR: names the method" contains "$ERR" "by posix_fallocate"
  check "C01 endless EINTR: says how many attempts ($attempts)" \
    contains "$ERR" "gave up after $attempts interrupted attempts"
  # The only writes allowed are the PID into the directory's lock file (walseg.lock) and the
  # new directory's control file (walseg.control, magic "WSCT").
  check "C01 endless EINTR: no silent fallback (no writes)" \
    test "$(grep -E '^[0-9]+ +pwrite' "$WORK/c01b.strace" | grep -vE '(pwrite64\([0-9]+, |iov_base=)"WSCT' |
      grep -cvE '(pwrite64\([0-9]+, |iov_base=)"walseg.lock\\n[0-9]+\\n')" -eq 0
  check "C01 endless EINTR: no final name" test "$(count_segnames "$d")" -eq 0
  check "C01 endless EINTR: no xlogtemp left" test "$(count_temps "$d")" -eq 0
else
  echo "SKIP part: strace not installed, C01 EINTR injection not run"
fi

echo
check_summary
