// Named failpoints: tests make any syscall of the io layer fail at the Nth call.
//
// Every syscall the library makes goes through src/io, and each wrapper first asks
// failpoint::hit("<name>") whether it should pretend to fail. Names are the syscall names
// ("open", "pwrite", "pwritev", "pread", "fsync", "fdatasync", "sync_file_range", "fallocate",
// "ftruncate", "rename", "link", "unlink", "dir_fsync", "fstat", "close") plus step markers placed by higher
// layers ("create.after_open", "alloc.half_fill", "create.after_fill", "create.after_fsync",
// "create.after_rename", "create.after_dir_fsync") where only `crash` makes sense.
// io_uring requests go through the same names (IoRing, io_ring.h): each write SQE asks "pwrite"
// (one iovec) or "pwritev", each sync SQE "fdatasync" / "fsync", when it is queued. short:N
// asks the kernel for at most N bytes; an errno puts a NOP in the SQE's place whose completion
// reports -errno, and the SQEs linked behind it -ECANCELED, as when a request fails in a chain
// (the WAL writer's io_uring backend resubmits after EAGAIN, EINTR, ECANCELED; others are final).
//
// Arming: in code with arm(), or for a whole process with the environment variable
// WALSEG_FAILPOINTS="name=SPEC[;name=SPEC...]", SPEC being one of
//   EIO | ENOSPC | ... (an errno name)   fail with that errno
//   short:N                              transfer at most N bytes (write-like calls)
//   crash                                _exit(86) on the spot, as a kill -9 would leave things
// or, from code only, a call (Spec::call): a test's action run at that point (RocksDB's
// SyncPoint), e.g. renaming a directory between two steps of an open; the call then proceeds.
// optionally followed by @N (first affected call, 1-based, default 1) and *K (number of
// affected calls, default 1; *0 means every call from the Nth on).
//
// Thread-safety: all functions are safe to call from any thread. When nothing is armed the cost
// of hit() is one relaxed atomic load.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace walseg::failpoint {

enum class Kind { kErrno, kShort, kCrash, kCall };

struct Spec {
  Kind kind = Kind::kErrno;
  int errnum = 0;                ///< for kErrno
  std::uint64_t short_bytes = 0; ///< for kShort: at most this many bytes are transferred
  std::uint64_t nth = 1;         ///< first affected call, counting from 1 since arming
  std::uint64_t times = 1;       ///< affected calls; 0 = unbounded
  std::function<void()> call;    ///< for kCall: run outside any lock, then hit() returns nullopt
};

/// Exit status of a process stopped by a `crash` failpoint.
inline constexpr int kCrashExitStatus = 86;

/// Arms (or re-arms, resetting its call count) the failpoint `name`.
void arm(std::string_view name, const Spec& spec);
/// Disarms one failpoint; unknown names are ignored.
void disarm(std::string_view name);
/// Disarms every failpoint and forgets all counts.
void disarm_all();
/// Parses WALSEG_FAILPOINTS-style text and arms each entry. Throws walseg::Error (EINVAL) on a
/// malformed spec, naming the offending entry.
void arm_from_string(std::string_view text);
/// Arms from the WALSEG_FAILPOINTS environment variable if set (called once by the tool).
void arm_from_environment();

/// Called by io wrappers: counts a call of `name` and returns the spec to apply to it, if any.
/// A kCrash spec never returns: the process exits with kCrashExitStatus. A kCall spec runs its
/// call and returns nullopt.
std::optional<Spec> hit(std::string_view name);

/// While alive, hit(name) on this thread looks up `prefix` + name instead: the calls of one piece
/// of bookkeeping (walseg.lock's rewrites: "lock.pwrite", "lock.fdatasync", "lock.dir_fsync")
/// are armed and counted apart from the ones a test aims at, which they would otherwise shift
/// (they come from any thread, at times no test controls). `prefix` must outlive the scope.
class Prefix {
 public:
  explicit Prefix(std::string_view prefix) noexcept;
  ~Prefix();
  Prefix(const Prefix&) = delete;
  Prefix& operator=(const Prefix&) = delete;

 private:
  std::string_view saved_;
};

/// Number of calls of `name` seen since it was armed (0 if never armed).
std::uint64_t calls(std::string_view name);

}  // namespace walseg::failpoint
