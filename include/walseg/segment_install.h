// Durable installation of segment files: how a segment name comes to exist.
//
// create_segment is walseg's XLogFileInitInternal + InstallXLogFileSegment (PostgreSQL xlog.c):
//   1. open a temporary file (temp_file_name(): "xlogtemp.<pid>[.<n>]") with O_CREAT|O_EXCL;
//   2. fill it by the init method (allocator.h), then write the caller's stamp at offset 0
//      (the segment manager's ready stamp, wal_format.h: how it knows the file is its own);
//   3. fsync it;
//   4. rename it to the final name without replacing anything (Directory::rename_noreplace);
//   5. fsync the directory, so the name survives a power loss before anything is written into
//      the segment (case C13).
// A final name therefore only ever refers to a complete, fsynced file (DESIGN.md invariant 1).
// If any step fails the temporary file is removed, and if the directory fsync fails the new
// name is removed too, since its durability is unknown; the error is rethrown with the
// segment, the method and the size added. Step markers for crash tests are failpoints named
// "create.after_open", "create.after_fill", "create.after_fsync", "create.after_rename" and
// "create.after_dir_fsync".
//
// recycle_segment is the other way a name comes to exist: an old, complete segment renamed to a
// future name (PostgreSQL's RemoveXlogFile with wal_recycle), made durable the same way.
//
// Not for: deciding which segments to create or recycle (the segment manager does).
// Thread-safety: concurrent calls on one Directory are safe if they target different names;
// the no-replace rename makes a race for one name fail with EEXIST rather than clobber.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "walseg/allocator.h"
#include "walseg/directory.h"

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
};

/// A fill that replaces allocate_file, for the bench's PostgreSQL reference rows. It receives
/// the open temporary file and the size in bytes, and fills in what it can of the report.
using CustomFill = std::function<void(File& file, std::uint64_t size_bytes, AllocReport& r)>;

/// Creates `final_name` in `dir` as a complete segment of size_bytes by opts (see above).
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
