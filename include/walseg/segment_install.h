// Durable installation of segment files: how a segment name comes to exist.
//
// Installing a new segment is walseg's XLogFileInitInternal + InstallXLogFileSegment
// (PostgreSQL xlog.c), in two phases so that a host can hold its own lock between them (the
// PostgreSQL extension holds ControlFileLock for the second, as InstallXLogFileSegment does):
//   prepare (PreparedSegment::prepare), with no lock held, as long as the fill takes:
//     1. open a temporary file (temp_file_name(): "xlogtemp.<pid>[.<n>]") with O_CREAT|O_EXCL;
//     2. fill it by the init method (allocator.h), then write the caller's stamp at offset 0
//        (the segment manager's ready stamp, wal_format.h: how it knows the file is its own);
//     3. fsync it;
//   install (PreparedSegment::install), short:
//     4. rename it to the final name without replacing anything (Directory::rename_noreplace);
//     5. fsync the directory, so the name survives a power loss before anything is written
//        into the segment (case C13).
// A final name therefore only ever refers to a complete, fsynced file.
// A prepared segment nobody installs is removed when its PreparedSegment goes (as etcd's file
// pipeline deletes a file nobody claimed). If a step fails the temporary file is removed and
// the error is rethrown with the segment, the method and the size added. create_segment is
// both phases at once.
//
// A failed directory fsync (step 5) has one rule with two outcomes, by who may already use the
// new name: the name's durability is unknown, so nothing written into it may be acknowledged
// as durable. Where the host's writers take a segment only from the installer (the segment
// manager: next_segment waits for an installation in progress), the new name is removed and
// nobody ever wrote into it (DirFsyncFailure::kRemoveNewName). Where writers open any file
// that has the name without asking (PostgreSQL's backends open pg_wal files with no lock),
// removing it could take their WAL with it, so it stays and the failure is reported
// (kKeepNewName); PostgreSQL's own next sync of pg_wal then meets the same device.
//
// Step markers for crash tests are failpoints named "create.after_open", "create.after_fill",
// "create.after_fsync", "create.after_rename" and "create.after_dir_fsync", in both hosts.
//
// recycle_segment is the other way a name comes to exist: an old, complete segment renamed to a
// future name (PostgreSQL's RemoveXlogFile with wal_recycle), made durable the same way.
//
// Not for: deciding which segments to create or recycle (the segment manager does).
// Thread-safety: concurrent calls on one Directory are safe if they target different names;
// the no-replace rename makes a race for one name fail with EEXIST rather than clobber. A
// PreparedSegment is used by one thread at a time. Lifetime: the Directory passed to prepare
// must outlive the PreparedSegment.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "walseg/allocator.h"
#include "walseg/directory.h"
#include "walseg/file_identity.h"

namespace walseg {

/// Wall time of each step of one installation, microseconds.
struct InstallTimes {
  std::uint64_t fill_us = 0;
  std::uint64_t fsync_us = 0;
  std::uint64_t rename_us = 0;
  std::uint64_t dir_fsync_us = 0;
  std::uint64_t total_us = 0;  ///< open to directory fsync, including all of the above
};

struct CreateReport {
  std::string name;    ///< final name installed
  AllocReport alloc;   ///< what the init method did (method used, allocation, syscalls)
  InstallTimes times;
  std::uint64_t syscalls = 0;  ///< all syscalls of the installation, fill included
  FileIdentity file;           ///< the file installed under `name`
};

/// A fill that replaces allocate_file, for the bench's PostgreSQL reference rows. It receives
/// the open temporary file and the size in bytes, and fills in what it can of the report.
using CustomFill = std::function<void(File& file, std::uint64_t size_bytes, AllocReport& r)>;

/// A new, empty temporary file of walseg's own pattern in `dir` (temp_file_name(pid, n)),
/// created with O_CREAT | O_EXCL, so never an entry that was there: a name taken by anything
/// (a user's file, a link, a directory) is skipped for the next n. Sets *name to its entry
/// name. Throws walseg::Error from open (after 64 names taken in a row: EEXIST).
File create_temp_file(Directory& dir, std::string* name);

/// What install() does when the directory fsync after the rename fails (see above).
enum class DirFsyncFailure { kRemoveNewName, kKeepNewName };

/// A segment file filled and fsynced under a temporary name, not yet installed (see above).
class PreparedSegment {
 public:
  /// Steps 1-3 in `dir` for the segment to be named `final_name` (an entry name, not a path;
  /// used by install() and in messages). size_bytes: > 0, multiple of 4096; custom_fill and
  /// stamp as for create_segment. Throws walseg::Error: EEXIST if final_name exists already
  /// (nothing is filled), or the failing step's errno with a message naming the temporary
  /// path, the step, the segment, the method, the size and errno's text; after a throw no
  /// temporary file remains.
  static PreparedSegment prepare(Directory& dir, const std::string& final_name, std::uint64_t size_bytes,
                                 const AllocOptions& opts, const CustomFill& custom_fill = {},
                                 std::span<const std::byte> stamp = {});

  /// Steps 4-5. Returns the report of both phases. Throws walseg::Error: EEXIST when the
  /// temporary name no longer names the file prepare() made (something was moved onto it:
  /// that file is left where it is, neither renamed into place nor removed), or when
  /// final_name exists (the prepared file stays until this object goes, so a caller that
  /// lost a race simply drops it); the rename's errno (likewise); the directory fsync's errno,
  /// after which `on_failure` decides whether the new name is removed or stays (see above).
  /// Call at most once; afterwards the object owns nothing.
  CreateReport install(DirFsyncFailure on_failure = DirFsyncFailure::kRemoveNewName);

  const std::string& temp_name() const { return temp_; }
  const AllocReport& alloc() const { return report_.alloc; }
  /// Times of the steps done so far (fill_us includes the stamp, fsync_us step 3).
  const InstallTimes& times() const { return report_.times; }

  PreparedSegment(PreparedSegment&& o) noexcept;
  PreparedSegment& operator=(PreparedSegment&& o) noexcept;
  /// Removes the temporary file unless install() renamed it (errors are logged, not thrown).
  ~PreparedSegment();

 private:
  PreparedSegment() = default;
  void drop_temp() noexcept;
  Directory* dir_ = nullptr;
  std::string temp_, final_, method_;
  struct stat temp_stat_{};  ///< the temporary file's identity (device, inode) when made
  std::uint64_t size_ = 0;
  CreateReport report_;
  std::uint64_t started_us_ = 0;  ///< steady clock at step 1, microseconds
  std::uint64_t syscalls_before_ = 0;
  bool custom_ = false;
};

/// Creates `final_name` in `dir` as a complete segment of size_bytes by opts (see above):
/// PreparedSegment::prepare then install with DirFsyncFailure::kRemoveNewName.
/// dir: the WAL directory; final_name: an entry name (not a path); size_bytes: > 0, multiple of
/// 4096; custom_fill: optional replacement for the init method; stamp: bytes written at offset
/// 0 after the fill and before the fsync (empty: none), so they are durable with the fill.
/// Throws walseg::Error: EEXIST if final_name exists (nothing is replaced), or the failing
/// step's errno with a message naming the path, the step, the method, the size and errno's
/// text. After a throw, neither the temporary file nor (unless it existed before) final_name
/// exists.
CreateReport create_segment(Directory& dir, const std::string& final_name,
                            std::uint64_t size_bytes, const AllocOptions& opts,
                            const CustomFill& custom_fill = {},
                            std::span<const std::byte> stamp = {});

/// Renames the complete segment `old_name` to `new_name` without replacing anything, then
/// fsyncs the directory. Returns the times (fill and fsync are 0). Throws walseg::Error
/// (EEXIST if new_name exists; the rename's or the directory fsync's errno otherwise). If the
/// directory fsync fails the rename is reported as failed, though the new name may persist.
InstallTimes recycle_segment(Directory& dir, const std::string& old_name,
                             const std::string& new_name);

}  // namespace walseg
