// Internal to src/wal: what WAL a directory already holds, checked before a writer is allowed
// to touch it, so that a changed setting or a file walseg did not make can never turn into
// overwritten acknowledged records (DESIGN.md invariant 6).
#pragma once

#include <string>

#include "walseg/config.h"

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

}  // namespace walseg
