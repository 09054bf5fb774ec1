// DirLock: one process manages one WAL directory. Opening takes an exclusive flock(2) on the
// lock file `walseg.lock` inside the directory and writes the holder's PID into it, so that a
// second opener is refused with a message naming the holder, as PostgreSQL's postmaster.pid
// refuses a second postmaster. The lock file is never opened through a symbolic link nor
// used when it has other names (it is written). Readers take a shared lock instead.
//
// flock locks die with the process, so a crashed holder never leaves the directory locked; the
// file itself stays (it is not a segment and the scan leaves it alone).
// Not for: locking between threads of one process (the segment manager's mutex does that).
// Thread-safety: a DirLock is owned by one SegmentManager; not shared.
#pragma once

#include <string>

#include "walseg/directory.h"
#include "walseg/file.h"

namespace walseg {

inline constexpr const char* kLockFileName = "walseg.lock";

class DirLock {
 public:
  /// Locks `dir`. Throws walseg::Error: EWOULDBLOCK with
  /// `could not lock directory "D": it is in use by process PID` when another process holds
  /// it, or the open/write error of the lock file.
  /// A lock counts only on the file the name still names when it is taken (an opener
  /// refused meanwhile may have unlinked the one opened): otherwise it is taken again.
  static DirLock acquire(Directory& dir);
  /// For readers (recover, dump): a shared flock on an existing lock file, so that a writer
  /// and a reader never overlap, but readers do not exclude each other and nothing is
  /// written. With no lock file (never opened by a writer) or one that cannot be opened
  /// (EACCES, EROFS: a read-only copy or snapshot; said once in the log) it returns an empty
  /// lock. Throws walseg::Error: EWOULDBLOCK naming the writer's PID, as acquire.
  static DirLock acquire_shared(const Directory& dir);

  DirLock() = default;
  DirLock(DirLock&&) noexcept = default;
  DirLock& operator=(DirLock&&) noexcept = default;
  /// Releases the lock (closing the descriptor releases the flock).
  ~DirLock() = default;

  /// For an open that is refused: when acquire created the lock file, removes it from `dir`
  /// (still locked, so no other opener took it meanwhile) and releases the lock, leaving the
  /// directory as it was; otherwise does nothing. Never throws: a removal that fails is
  /// logged (the file is walseg's, harmless, and reused by the next opener).
  void remove_if_made(Directory& dir) noexcept;

 private:
  static DirLock acquire_shared_once(const Directory& dir);

  File file_;
  bool made_ = false;  ///< acquire created the file
};

}  // namespace walseg
