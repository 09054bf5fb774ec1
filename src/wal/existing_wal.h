// Internal to src/wal: what a writer does to the WAL it resumes before it writes: clear the
// pages of a record a crash left unfinished, and make what recovery read durable. (Which WAL a directory holds and whose its files
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

/// After a crash, recovery reads WAL past the control file's durable LSN from the page cache,
/// where nothing says it ever reached the disk: the last writer was killed before its
/// fdatasync, or its fdatasync failed (EIO), after which Linux marks the pages clean though
/// the disk never got them. A writer that resumed after them and acknowledged new records
/// would lose those to a power cut behind a hole. So the pages of [from, end) are read and
/// written back, which makes them dirty whatever the kernel thought of them, and each segment
/// is fdatasynced (PostgreSQL fsyncs the data directory after a crash, SyncDataDirectory, for
/// the first half of this; the rewrite covers the second). dir, c: the WAL directory and its
/// control file; from, end: LSNs, end being where the writer resumes. Segments that do not
/// exist are skipped. Returns the number of bytes rewritten. Throws walseg::Error on I/O
/// errors: then nothing may be acknowledged after them.
std::uint64_t make_recovered_wal_durable(const Directory& dir, const WalControl& c, Lsn from, Lsn end);

}  // namespace walseg
