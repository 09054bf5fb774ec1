// walseg_lazyfs: a FUSE filesystem for walseg's power-cut tests, in the manner of LazyFS (used
// by etcd's robustness tests) and of LevelDB's fault_injection_test: it keeps in memory what
// a power cut could lose and throws it away on command, so that a test can kill a writer, cut
// the power, recover, and check that every acknowledged record survived.
//
//   walseg_lazyfs mount MOUNTPOINT --control SOCKET [--capacity BYTES] [--no-fallocate]
//                       [--passthrough BACKING_DIR] [--debug]
//   walseg_lazyfs ctl SOCKET COMMAND [ARG...]
//
// mount runs in the foreground until unmounted (fusermount3 -u MOUNTPOINT) or sent SIGTERM;
// the control socket appears once the mount is in place (a script waits for it). The default,
// in-memory mode holds the whole filesystem in memory with a visible and a durable copy of
// every file and directory (mem_fs.h states the model: what fsync, fdatasync, O_DSYNC, a
// directory fsync and a cut do). --passthrough serves BACKING_DIR instead, every call passed
// straight through, with no model (passthrough.cpp). --no-fallocate makes fallocate fail with
// EOPNOTSUPP in both modes, as on NFS before 4.2. --capacity limits file data (in-memory mode).
// The mount uses allow_other and default_permissions, so that users other than root (a
// PostgreSQL server) can work in it with the usual permission checks.
//
// Commands (ctl prints the one-line answer; exit 0 when it starts with "ok"):
//   drop [SEED [KEEP_PERCENT]]      power cut: everything not durable is lost; with KEEP_PERCENT,
//                                   each unsynced 4 kB block inside the durable size survives
//                                   with that probability (seeded): torn writes
//   persist                         make everything visible durable (set-up steps)
//   fail-fsync N [any|fsync|fdatasync [NAME_GLOB]]  the Nth next such call on a file fails
//                                   with EIO and loses the file's dirty blocks (Linux); with
//                                   NAME_GLOB (fnmatch, e.g. 'xlogtemp.*.*') only calls on files
//                                   whose name matches count; N = 0 disarms
//   capacity BYTES                  file data beyond BYTES gets ENOSPC; 0 = unlimited
//   lie-fsync on|off                fsync/fdatasync succeed and persist nothing (a disk that
//                                   ignores flushes: proves a checker notices lost data)
//   stats                           counters on one line (also in pass-through mode)
//
// Kernel side (ll_ops.cpp): no page cache (direct_io), no entry or attribute caching, locks kept
// by the kernel. FUSE passes O_DSYNC, O_SYNC and O_DIRECT to open: O_DSYNC/O_SYNC writes are
// durable on return, O_DIRECT writes are ordinary unsynced writes (durable at the next flush).
// The loop is single-threaded: requests are served in the order the kernel queued them.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "control.h"
#include "ll_ops.h"
#include "mem_fs.h"
#include "passthrough.h"

namespace lazyfs {
namespace {

struct MountArgs {
  std::string mountpoint, control, passthrough;
  std::uint64_t capacity = 0;
  bool no_fallocate = false, debug = false;
};

int usage() {
  std::fprintf(stderr,
               "usage: walseg_lazyfs mount MOUNTPOINT --control SOCKET [--capacity BYTES] [--no-fallocate]\n"
               "                           [--passthrough BACKING_DIR] [--debug]\n"
               "       walseg_lazyfs ctl SOCKET COMMAND [ARG...]\n"
               "commands: drop [SEED [KEEP_PERCENT]] | persist |\n"
               "          fail-fsync N [any|fsync|fdatasync [NAME_GLOB]] |\n"
               "          capacity BYTES | lie-fsync on|off | stats\n");
  return 2;
}

std::uint64_t number(const std::string& what, const std::string& s) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty() || s[0] == '-')
    throw std::invalid_argument("invalid " + what + " \"" + s + "\" (expected a decimal number)");
  return v;
}

std::string mem_command(MemFs& fs, const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string t; in >> t;) w.push_back(t);
  if (w.empty()) return "error empty command";
  const std::string& c = w[0];
  if (c == "drop" && w.size() <= 3) {
    unsigned keep = w.size() > 2 ? static_cast<unsigned>(number("KEEP_PERCENT", w[2])) : 0;
    if (keep > 100) return "error KEEP_PERCENT must be 0..100";
    return fs.drop(w.size() > 1 ? number("SEED", w[1]) : 0, keep);
  }
  if (c == "persist" && w.size() == 1) return fs.persist_all();
  if (c == "fail-fsync" && w.size() >= 2 && w.size() <= 4) {
    std::string kind = w.size() >= 3 ? w[2] : "any";
    SyncKind k = kind == "fsync" ? SyncKind::kFsync : kind == "fdatasync" ? SyncKind::kFdatasync : SyncKind::kAny;
    if (kind != "any" && kind != "fsync" && kind != "fdatasync") return "error kind must be any, fsync or fdatasync";
    return fs.fail_fsync(number("N", w[1]), k, w.size() == 4 ? w[3] : std::string());
  }
  if (c == "capacity" && w.size() == 2) return fs.set_capacity(number("BYTES", w[1]));
  if (c == "lie-fsync" && w.size() == 2 && (w[1] == "on" || w[1] == "off")) return fs.lie_fsync(w[1] == "on");
  if ((c == "stats" || c == "ping") && w.size() == 1) return fs.stats();
  return "error unknown command or wrong arguments: \"" + line + "\"";
}

int run_memory(fuse_args* args, const MountArgs& a) {
  MemFs fs(a.no_fallocate, a.capacity);
  fuse_lowlevel_ops ops = mem_fs_ops();
  fuse_session* se = fuse_session_new(args, &ops, sizeof ops, &fs);
  if (se == nullptr) return 1;
  int rc = 1;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, a.mountpoint.c_str()) == 0) {
      // A control path refused (someone's file) unmounts again: no dead mount left behind.
      if (auto ctl = start_control(a.control, [&fs](const std::string& line) { return mem_command(fs, line); }))
        rc = fuse_session_loop(se) == 0 ? 0 : 1;
      fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  return rc;
}

bool parse_mount(int argc, char** argv, MountArgs* a) {
  if (argc < 3) return false;
  a->mountpoint = argv[2];
  for (int i = 3; i < argc; ++i) {
    std::string o = argv[i];
    bool has_value = i + 1 < argc;
    if (o == "--control" && has_value) a->control = argv[++i];
    else if (o == "--capacity" && has_value) a->capacity = number("--capacity", argv[++i]);
    else if (o == "--passthrough" && has_value) a->passthrough = argv[++i];
    else if (o == "--no-fallocate") a->no_fallocate = true;
    else if (o == "--debug") a->debug = true;
    else return false;
  }
  return !a->control.empty();
}

int mount_main(int argc, char** argv) {
  MountArgs a;
  if (!parse_mount(argc, argv, &a)) return usage();
  fuse_args args = FUSE_ARGS_INIT(0, nullptr);
  fuse_opt_add_arg(&args, "walseg_lazyfs");
  fuse_opt_add_arg(&args, "-o");
  fuse_opt_add_arg(&args, "allow_other,default_permissions,fsname=walseg_lazyfs,subtype=walseg_lazyfs");
  if (a.debug) fuse_opt_add_arg(&args, "-d");
  int rc = a.passthrough.empty() ? run_memory(&args, a)
                                 : run_passthrough(&args, a.mountpoint, a.passthrough, a.no_fallocate, a.control);
  fuse_opt_free_args(&args);
  return rc;
}

}  // namespace
}  // namespace lazyfs

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::strcmp(argv[1], "mount") == 0) return lazyfs::mount_main(argc, argv);
    if (argc >= 4 && std::strcmp(argv[1], "ctl") == 0) {
      std::string line = argv[3];
      for (int i = 4; i < argc; ++i) line += std::string(" ") + argv[i];
      return lazyfs::control_client(argv[2], line);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "walseg_lazyfs: %s\n", e.what());
    return 1;
  }
  return lazyfs::usage();
}
