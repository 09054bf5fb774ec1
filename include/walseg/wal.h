// Wal: a WAL directory opened for writing: the segment manager, recovery of the end of WAL, and
// a writer resuming there. The one-call entry point for the tool and the PostgreSQL extension.
//
// Opening runs, in order: SegmentManager (lock, scan, preallocator), find_end_of_wal on the
// manager's timeline, then a WalWriter resuming where recovery found the end of WAL (after
// the last valid record; after a leading continuation or at the first page when every record
// start was retired by truncate_before, so LSNs never go back) with the system identifier
// found in the WAL, or, for a directory with no segment, a fresh WAL from wal_start_lsn() with
// a new system identifier (as initdb makes one: seconds, microseconds and PID of the creating
// process; also used when no long header is readable).
//
// Not for: reading WAL without locking the directory (use WalReader directly).
// Thread-safety: as WalWriter for writer(); open/close from one thread.
#pragma once

#include <memory>
#include <string>

#include "walseg/segment_manager.h"
#include "walseg/wal_reader.h"
#include "walseg/wal_writer.h"

namespace walseg {

class Wal {
 public:
  /// Opens (creating if needed) the WAL in `dir` with `config`. Throws walseg::Error from the
  /// manager, recovery or writer set-up, and (EINVAL) before touching anything when the
  /// directory's WAL was written with another segment size, block size or in append mode
  /// under a full-size init method, or holds a full-size segment-named file walseg did not
  /// make (invariant 6): changing a setting must never cost acknowledged records. Corruption before the end is not thrown: the writer
  /// resumes after the last valid record and recovery() says what was found (as PostgreSQL
  /// does after a crash), so check recovery().corruption where that matters.
  static std::unique_ptr<Wal> open(const std::string& dir, const Config& config, TimeLineId timeline = 1);

  SegmentManager& manager() { return *manager_; }
  WalWriter& writer() { return *writer_; }
  const RecoveryResult& recovery() const { return recovery_; }
  std::uint64_t system_id() const { return system_id_; }

 private:
  Wal() = default;
  std::unique_ptr<SegmentManager> manager_;
  std::unique_ptr<WalWriter> writer_;
  RecoveryResult recovery_;
  std::uint64_t system_id_ = 0;
};

}  // namespace walseg
