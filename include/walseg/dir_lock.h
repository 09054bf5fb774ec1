// DirLock: one process manages one WAL directory. Opening takes an exclusive flock(2) on the
// WAL directory itself, through the lock's own open of it, so that a second opener is refused
// as PostgreSQL's postmaster.pid refuses a second postmaster. The directory cannot be
// unlinked away while it is in use, as a lock file could: a lock on `walseg.lock` alone let a
// second writer in once someone removed the file, and it overwrote the first one's records.
// The lock file `walseg.lock` still carries the holder's PID, for the refusal's message (and
// is flocked too, so that an older walseg that only locks the file is kept out as well).
// Readers take shared locks instead.
//
// walseg.lock is walseg's only if it is made as walseg makes its files (own_files.h) and holds
// what walseg writes there: nothing (a holder killed between creating and writing it), zeros
// (a power cut that kept its size, not its bytes), or its lock format:
//     walseg.lock
//     <PID>            the holder's, then up to kMaxLockFilePids - 1 earlier writers'
//     temp <NAME>      each temporary name a writer may have a file under (below)
//     end
// (no PID line at all once the last writer closed the directory cleanly: mark_clean_close),
// possibly followed by the tail of a longer list it replaced (the new list is written over
// the old one and the file then cut to its length, so a crash in between leaves a whole list
// first; reading stops at `end`). The earlier writers are those whose crash leftovers
// (xlogtemp.<pid>) may still be in the directory: the last writer always, the ones before it
// while temporary files named for them remain. A writer lists them until it has removed
// their leftovers (forget_earlier_writers), so that a second crash in between does not leave
// the first one's files for good (break-it round 18 F4b). Anything else is someone's file,
// bare PID lines included (another program's lock file, or an older walseg's, whose PID would
// name someone's files as leftovers: break-it round 25 H3): the lock refuses and changes
// nothing. The file is only rewritten once both locks are held, never through a symbolic link
// nor when it has other names (hard links).
//
// The temp lines are what makes a file under a temporary name (xlogtemp.<pid>[.<n>],
// walseg.control.tmp) a crash's leftover: a writer lists the name, durably, before it creates
// the file (will_create) and unlists it once the file is gone under that name and that is
// durable (gone). So a listed name's file is one a writer made, unless someone put it there in
// the moments between a writer's listing and its O_EXCL create; a file under a name not listed
// is someone's, whatever it holds and whoever the PIDs name (break-it round 35: files put
// there during a run, or before it under the PID of a writer to come, were removed as a
// killed writer's leftovers, because a name and a PID were all the next writer had to go by).
// The next opening removes only listed names' files (dir_scan.h), and keeps earlier writers'
// names listed as long as their files remain.
//
// flock locks die with the process, so a crashed holder never leaves the directory locked; the
// file itself stays (it is not a segment and the scan leaves it alone).
// Not for: locking between threads of one process (the segment manager's mutex does that).
// Thread-safety: a DirLock is owned by one SegmentManager; not shared. Lifetime: the
// Directory passed in need not outlive the lock (it keeps its own descriptors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "walseg/directory.h"
#include "walseg/file.h"
#include "walseg/owned_fd.h"

namespace walseg {

inline constexpr const char* kLockFileName = "walseg.lock";
/// At most this many PID lines: the holder and the writers before it still listed. Past it the
/// oldest is dropped and its leftovers stay for good (named in a LOG line, `ls` says why): as
/// many writers killed in a row, each before it removed the ones before's, as in auto's probe
/// (break-it round 34 M1 killed ten there with a limit of 8).
inline constexpr std::size_t kMaxLockFilePids = 32;
/// At most this many temporary names listed (`temp NAME` lines, below): a writer has a few at
/// once (a fill, auto's probe files, walseg.control.tmp). will_create refuses a name past it.
inline constexpr std::size_t kMaxListedTemps = 64;

class DirLock {
 public:
  /// Locks `dir` for a writer: an exclusive flock on the directory and on walseg.lock
  /// (created if missing), then writes this PID into walseg.lock, followed by the PIDs it
  /// held that may still have leftovers (earlier_writer_pids: the first always, the others
  /// while temporary files are named for them, the oldest dropped past kMaxLockFilePids), and
  /// fdatasyncs it. Throws walseg::Error:
  /// EWOULDBLOCK with `could not lock directory "D": it is in use by process PID` when
  /// another process (or another DirLock of this one) holds it, without creating or writing
  /// anything; EEXIST (ELOOP for a symbolic link), changing nothing, when walseg.lock has other hard
  /// links, is not a regular file, is not made as walseg makes its files or holds anything but
  /// the lock format above (bare PID lines included, with their own advice); EEXIST, changing
  /// nothing, when a temporary file is named for this process's PID and no earlier writer listed
  /// had that PID (someone's, which this writer's crash would make the next one remove); the
  /// open, flock or write error otherwise.
  static DirLock acquire(Directory& dir);
  /// For readers (recover, dump): a shared flock on the directory (and on an existing lock
  /// file), so that a writer and a reader never overlap, but readers do not exclude each
  /// other and nothing is written. A lock file that cannot be opened (EACCES, EROFS: a
  /// read-only copy or snapshot; said once in the log) is skipped. Throws walseg::Error:
  /// EWOULDBLOCK naming the writer's PID, as acquire; the open or flock error of the
  /// directory.
  static DirLock acquire_shared(const Directory& dir);

  /// The PIDs walseg.lock held when acquire() took it, before this process wrote its own: the
  /// last writer first, then the earlier ones it still listed; their crashes are what leave
  /// temporary files behind (dir_scan.h removes only those processes'). Empty for a new or
  /// empty lock file, and for shared locks.
  const std::vector<std::uint32_t>& earlier_writer_pids() const { return previous_pids_; }
  /// The opener removed every leftover of earlier_writer_pids(): walseg.lock names this
  /// process alone from now on (rewritten and fdatasynced, through the descriptor this lock
  /// holds). Nothing when it named no earlier writer. Throws walseg::Error from the write or
  /// the sync (walseg.lock then still lists them, which only keeps their leftovers removable).
  void forget_earlier_writers();
  /// For a writer that ends without crashing (SegmentManager's destructor, once its
  /// preallocator has stopped and removed its temporary file durably): rewrites walseg.lock to
  /// list only the temporary names whose files are still in `dir`, and to name only the
  /// writers those may be the leftovers of: this process while a name it listed (will_create)
  /// still holds a file (an unlink that failed), an earlier writer while a listed
  /// xlogtemp.<pid>[.<n>] of its PID does. Then fdatasyncs it. A lock file that names no
  /// writer says the last one closed the directory cleanly, as PostgreSQL's pg_control says
  /// "shut down": no crash left anything, so the next opening takes no temporary file for a
  /// leftover (break-it round 33: a walseg.control.tmp put there during a run was removed by
  /// the next writer as its crash's). Call only after every control-file update and directory
  /// fsync. Never throws: a failure is logged and leaves the PIDs, which only keeps listed
  /// leftovers removable.
  void mark_clean_close() noexcept;
  /// The temporary names walseg.lock listed when acquire() took it: the only names whose files
  /// a crash can have left (dir_scan.h removes no other). Empty for shared locks.
  const std::vector<std::string>& earlier_listed_temps() const { return previous_temps_; }

  /// Lists `name` (a temporary name: xlogtemp.<pid>[.<n>] or walseg.control.tmp) in the
  /// walseg.lock of the writer that holds `dir` in this process, durably (rewritten and
  /// fdatasynced), before the caller creates a file under it with O_CREAT | O_EXCL. Nothing
  /// when no DirLock of this process holds `dir` (the PostgreSQL extension's pg_wal, a bench
  /// scratch directory) or the name is listed already. Throws walseg::Error: the write's or
  /// sync's error (the name is then not listed, and the caller must not create the file);
  /// ENOSPC, naming the limit, past kMaxListedTemps names. Thread-safe.
  static void will_create(const Directory& dir, const std::string& name);
  /// Unlists `name` once no file of this writer's is under it: its O_EXCL create failed, or
  /// the file was renamed or unlinked. Makes that durable first (a directory fsync), so that a
  /// power cut cannot bring back a file whose name is no longer listed. Never throws: a
  /// failure is logged and leaves the name listed, which only keeps a file there removable
  /// after a crash. Thread-safe.
  static void gone(const Directory& dir, const std::string& name) noexcept;
  /// As gone(), for a caller that has just fsynced `dir` after the rename or unlink (segment
  /// installation): only the rewrite, not a second directory fsync. Never throws.
  static void gone_after_dir_fsync(const Directory& dir, const std::string& name) noexcept;

  /// Whether walseg.lock was there before acquire() (a walseg opener used the directory before,
  /// even if a power cut lost the PID it wrote); false for a lock file this lock made.
  bool lock_file_existed() const { return !made_ && (file_.is_open() || listing_ != nullptr); }

  DirLock() = default;
  DirLock(DirLock&&) noexcept = default;
  DirLock& operator=(DirLock&&) noexcept = default;
  /// Releases the lock (closing the descriptors releases the flocks); will_create no longer
  /// lists names for its directory.
  ~DirLock();
  /// For an opener that refuses the directory after locking it: removes walseg.lock if this
  /// lock created it, else puts back what it held before (the last writer's PID, which says
  /// whose crash left the temporary files: break-it round 17 M4 kept them for good after one
  /// refused open), so that a refusal leaves the directory as it was. The directory stays
  /// locked until the DirLock is destroyed. Never throws (a failure is logged).
  void remove_if_made(Directory& dir) noexcept;

 private:
  struct Listing;  // what walseg.lock lists now, shared with will_create and gone
  class Listings;  // every exclusive DirLock's Listing in this process, by directory
  static Listings& listings();
  static void unlist(const Directory& dir, const std::string& name, bool dir_synced) noexcept;

  OwnedFd dir_fd_;  ///< the lock's own open of the directory, which holds its flock
  File file_;  ///< shared locks' walseg.lock; an exclusive lock's is in listing_
  bool made_ = false;  ///< acquire created walseg.lock
  std::vector<std::uint32_t> previous_pids_;
  std::vector<std::string> previous_temps_;
  std::string previous_text_;  ///< walseg.lock's bytes before this lock rewrote them
  std::shared_ptr<Listing> listing_;  ///< exclusive locks only
};

/// The PIDs in `dir`'s walseg.lock as walseg writes them (the lock format above), read without locking
/// or changing anything: the holder if one runs, else the last writer, then the earlier
/// writers still listed. Empty when there is no such file or it holds anything else (or
/// zeros). Never throws.
std::vector<std::uint32_t> lock_file_pids(const Directory& dir);
/// Why `dir`'s walseg.lock is not walseg's, in the words acquire() refuses it with (its mode or
/// owner, bare PID lines, other content), with what to do; nullopt when it is walseg's, is
/// missing, is not a regular file or cannot be read. Reads without locking. Never throws.
std::optional<std::string> lock_file_not_walsegs(const Directory& dir);
/// The bytes walseg writes into walseg.lock for these PIDs and temporary names (the lock format
/// above, holder first), for tools and tests that make or check one. Never throws (beyond
/// std::bad_alloc).
std::string lock_file_text(const std::vector<std::uint32_t>& pids, const std::vector<std::string>& temps = {});
/// The temporary names `dir`'s walseg.lock lists (the lock format above), read without locking
/// or changing anything; empty when there is none or it is not walseg's. Never throws.
std::vector<std::string> lock_file_temps(const Directory& dir);
/// lock_file_pids(dir)'s first: the holder, or the last writer. Never throws.
std::optional<std::uint32_t> lock_file_pid(const Directory& dir);

}  // namespace walseg
