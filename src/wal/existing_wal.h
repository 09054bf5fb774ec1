// Internal to src/wal: what WAL a directory already holds, checked before a writer is allowed
// to touch it, so that a changed setting or a file walseg did not make can never turn into
// overwritten acknowledged records (DESIGN.md invariant 6).
#pragma once

#include <string>

#include "walseg/config.h"
#include "walseg/segment_name.h"

namespace walseg {

/// Reads the first page header of every segment-named regular file in dir_path and throws
/// walseg::Error (EINVAL), naming the file and the setting to change, when:
///  - a segment's long header gives another segment or block size than `cfg`;
///  - a segment holding WAL is shorter than the segment size (written in append mode) while
///    cfg's init method makes full-size segments (the scan would move it aside);
///  - a full-size segment's first page is neither zeros nor a walseg page header (foreign);
///  - segments carry more than one system identifier.
/// A missing directory or one without segments passes. Throws walseg::Error on read errors.
void check_existing_wal(const std::string& dir_path, const Config& cfg);

/// After a crash, the pages of an unfinished record: those after the page holding `end` (the
/// end of WAL that recovery found, where the writer resumes) up to and including `stop_page`
/// (where recovery found the record unreadable). A writer killed in the middle of a write
/// leaves the first pages of a record spanning several, with valid page headers; the resumed
/// writer rewrites only the page holding `end` before its next flush, so a later recovery
/// found them after its new end and reported corruption where there was none. Overwrites
/// them with zeros and fdatasyncs each file (nothing there was ever flushed: recovery stopped
/// before it). Returns the number of pages zeroed; segments that do not exist are skipped.
/// Throws walseg::Error on I/O errors.
std::uint64_t clear_unfinished_record(const std::string& dir_path, const Config& cfg, TimeLineId tli,
                                      Lsn end, Lsn stop_page);

}  // namespace walseg
