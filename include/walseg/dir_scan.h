// The start-up scan of a WAL directory: what is there, and the clean-up the rules allow.
//
// Every entry is classified by name (segment_name.h) and size:
//   complete segment   a strict segment name, a regular file, exactly segment_size bytes (or,
//                      in append mode, at most segment_size bytes): kept and reported;
//   temp leftover      xlogtemp.<pid>[.<n>] (ours or PostgreSQL's, from a crash mid-creation):
//                      removed, with a LOG line (case C11);
//   wrong size         a segment name with any other size, e.g. a creation cut short by a full
//                      disk in a tool without walseg's protocol (case C10): never used or
//                      recycled; renamed to "<name>.broken" (".broken.N" if taken, as etcd
//                      moves damaged files aside) with a WARNING naming actual and expected size;
//   everything else    history, partial and backup files, symlinks, foreign names: left alone
//                      and reported once (case C20), except walseg's own lock file.
// Removals and renames are made durable with one directory fsync at the end.
//
// Not for: deciding what to recycle (the segment manager) or reading contents (wal layer).
// Thread-safety: call while holding the directory's DirLock, before other threads use it.
#pragma once

#include <string>
#include <vector>

#include "walseg/directory.h"
#include "walseg/segment_name.h"

namespace walseg {

inline constexpr const char* kBrokenSuffix = ".broken";

struct ScanReport {
  std::vector<SegmentName> segments;      ///< complete segments, sorted (timeline, segno)
  std::vector<std::string> removed_temps; ///< temp leftovers removed
  std::vector<std::string> moved_aside;   ///< "old -> new" names of wrong-size segments
  std::vector<std::string> left_alone;    ///< "name (what)" of everything reported and kept
};

/// Scans `dir` for segments of segment_size_bytes. append_mode: the init method grows segments
/// by appends (none, fallocate_keep_size), so shorter files are complete segments.
/// Throws walseg::Error for listing, unlink, rename or fsync failures (path and errno text).
ScanReport scan_wal_directory(Directory& dir, std::uint64_t segment_size_bytes, bool append_mode);

}  // namespace walseg
