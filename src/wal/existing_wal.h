// Internal to src/wal: what a writer does to the WAL it resumes before it writes: clear the
// pages of a record a crash left unfinished. (Which WAL a directory holds and whose its files
// are is the control file's and the segment manager's business: wal_control.h, dir_scan.h.)
#pragma once

#include <string>

#include "walseg/config.h"
#include "walseg/directory.h"
#include "walseg/wal_format.h"
#include "walseg/segment_name.h"

namespace walseg {

/// After a crash, the pages of an unfinished record: those after the page holding `end` (the
/// end of WAL that recovery found, where the writer resumes) up to and including `stop_page`
/// (where recovery found the record unreadable). A writer killed in the middle of a write
/// leaves the first pages of a record spanning several, with valid page headers; the resumed
/// writer rewrites only the page holding `end` before its next flush, so a later recovery
/// found them after its new end and reported corruption where there was none. Overwrites
/// them with zeros (a segment's first page with the ready stamp it had before, wal_format.h)
/// and fdatasyncs each file (nothing there was ever flushed: recovery stopped before it).
/// dir, c: the WAL directory and its control file. Returns the number of pages cleared;
/// segments that do not exist are skipped. Throws walseg::Error on I/O errors.
std::uint64_t clear_unfinished_record(const Directory& dir, const WalControl& c, Lsn end, Lsn stop_page);

}  // namespace walseg
