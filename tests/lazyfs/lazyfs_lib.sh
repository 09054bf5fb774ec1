# lazyfs_lib.sh: shell helpers for scripts that mount walseg_lazyfs (sourced, not run):
# tests/lazyfs/*_test.sh and bench/powercut.sh. Each mount is recorded so that one call of
# lazyfs_cleanup (put it in the caller's EXIT trap) unmounts everything, also after a failure.
#
#   lazyfs_skip_reason LAZYFS_BINARY   prints why FUSE tests cannot run here (nothing if they can)
#   lazyfs_mount MNT SOCK [OPTION...]  mounts (options as walseg_lazyfs mount takes them) and
#                                      waits for the control socket; LAZYFS_PID is the daemon
#   lazyfs_ctl SOCK COMMAND...         one control command; prints the answer, fails unless "ok"
#   lazyfs_cut MNT SOCK [SEED [KEEP]]  the power cut, once the requests a killed writer left
#                                      queued have been served (see below); prints the answer
#   lazyfs_umount MNT                  unmounts and waits for that daemon to exit
#   lazyfs_cleanup                     unmounts whatever is still mounted
# Needs LAZYFS set to the walseg_lazyfs binary.

LAZYFS_MOUNTS=()
declare -A LAZYFS_PIDS=()

lazyfs_skip_reason() {
  local bin=$1
  if [[ $(id -u) -ne 0 ]]; then echo "needs root (FUSE mounts with allow_other)"
  elif [[ ! -c /dev/fuse ]]; then echo "/dev/fuse is missing"
  elif [[ ! -x $bin ]]; then echo "walseg_lazyfs was not built (libfuse3-dev missing: pkg-config fuse3)"
  elif ! command -v fusermount3 >/dev/null; then echo "fusermount3 not found (Debian package fuse3)"
  fi
}

lazyfs_mount() {
  local mnt=$1 sock=$2 i
  shift 2
  mkdir -p "$mnt" || return 1
  rm -f "$sock"
  "$LAZYFS" mount "$mnt" --control "$sock" "$@" >"$sock.log" 2>&1 &
  LAZYFS_PID=$!
  LAZYFS_PIDS[$mnt]=$LAZYFS_PID
  LAZYFS_MOUNTS+=("$mnt")
  for ((i = 0; i < 200; i++)); do
    [[ -S $sock ]] && return 0
    kill -0 "$LAZYFS_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "walseg_lazyfs did not mount $mnt: $(cat "$sock.log" 2>/dev/null)" >&2
  return 1
}

lazyfs_ctl() {
  local sock=$1
  shift
  "$LAZYFS" ctl "$sock" "$@"
}

# A thread killed inside a FUSE call does not wait for its answer, so its request (a create,
# a rename) may still be served after the process has been reaped, and would then change the
# state after the cut. The daemon serves requests one at a time in the kernel's order, so once
# a request made now is answered, everything queued before it has been served: cut then.
lazyfs_cut() {
  local mnt=$1 sock=$2
  shift 2
  ls -a "$mnt" >/dev/null
  lazyfs_ctl "$sock" drop "$@"
}

lazyfs_umount() {
  local mnt=$1 pid=${LAZYFS_PIDS[$1]:-} i
  [[ -n $pid ]] || return 0
  fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null
  # The daemon leaves its loop once the kernel says the mount is gone.
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  unset "LAZYFS_PIDS[$mnt]"
  return 0
}

lazyfs_cleanup() {
  local i
  for ((i = ${#LAZYFS_MOUNTS[@]} - 1; i >= 0; i--)); do lazyfs_umount "${LAZYFS_MOUNTS[i]}"; done
  LAZYFS_MOUNTS=()
}
