// Wal: a WAL directory opened for writing: the segment manager, recovery of the end of WAL, and
// a writer resuming there. The one-call entry point for the tool and the PostgreSQL extension.
//
// Opening runs, in order: SegmentManager (lock, walseg.control, scan, the checks that refuse a
// WAL the settings or foreign files contradict), find_end_of_wal from the control file's
// oldest LSN with its sizes and system identifier (reader_options_for), through the locked
// directory's descriptor, and the refusal of a WAL whose acknowledged records cannot be read;
// only then SegmentManager::start() (removal of never-written short segments, the append mode
// in walseg.control, the preallocator), so that a refused opening leaves no segment made or
// removed and the control file as it was; then, after a crash, the WAL past the control file's
// durable LSN is rewritten and fdatasynced and the control file records it as durable (what
// recovery read may have come from the page cache only: a killed writer's, or one whose
// fdatasync failed); then a WalWriter resuming where recovery found the end of WAL: after the last valid record, or at
// the oldest LSN (after a leading continuation) when no record is left there, so LSNs never
// go back. A new directory gets its control file, with a new system identifier, from the
// manager; its WAL starts at wal_start_lsn(), the first byte of segment 1.
//
// While it is open, a background thread moves the control file's durable LSN up to the
// writer's flushed LSN every walseg.durable_lsn_interval (when it moved), off the commit path, as
// PostgreSQL's checkpointer moves pg_control forward. Why: recovery takes a stop after the
// durable LSN for a torn tail and the next writer writes over what follows it; a stop before
// it is corruption and refused. Without this, after a kill -9 one damaged byte in a record
// acknowledged hours earlier would be taken for a torn tail, and the acknowledged records
// after it overwritten (issue 19, break-it round 4 H3). What is left unprotected is the last
// interval's worth of acknowledged records (plus the time one control file replacement takes).
//
// Not for: reading WAL without locking the directory (use WalReader with reader_options_for
// and read_control directly).
// Thread-safety: as WalWriter for writer(); open/close from one thread.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "walseg/segment_manager.h"
#include "walseg/wal_reader.h"
#include "walseg/wal_writer.h"

namespace walseg {

class Wal {
 public:
  /// Opens (creating if needed) the WAL in `dir` with `config`; `timeline`: nullopt for the
  /// control file's, else it must be the control file's. Throws walseg::Error from the
  /// manager (EINVAL before anything is written when the directory's WAL was written with
  /// another segment size, block size or in append mode under a full-size init method, when
  /// its control file is damaged or missing beside segment files, or when a file walseg did
  /// not make has a segment name the WAL may need: changing a setting must never cost
  /// acknowledged records), recovery or writer set-up; ENOTRECOVERABLE when records before
  /// the control file's durable LSN cannot be read (a missing or damaged segment): writing
  /// after the last valid record would overwrite what follows. Every refusal leaves the
  /// directory's segments and walseg.control as they were (a new directory keeps the
  /// control file it got). A damaged tail after the durable LSN is not thrown: the writer
  /// resumes after the last valid record and recovery() says what was found (as PostgreSQL
  /// does after a crash).
  static std::unique_ptr<Wal> open(const std::string& dir, const Config& config,
                                   std::optional<TimeLineId> timeline = std::nullopt);
  /// The same in a directory already open (SegmentManager's Directory constructor): never
  /// re-resolved by path. Throws as above.
  static std::unique_ptr<Wal> open(Directory dir, const Config& config,
                                   std::optional<TimeLineId> timeline = std::nullopt);

  /// Records that everything flushed so far is durable (SegmentManager::mark_durable with the
  /// writer's flushed_lsn()), as a checkpoint or clean shutdown does; truncate_before does it
  /// too. Throws walseg::Error from the control file's replacement.
  void checkpoint() { manager_->mark_durable(writer_->flushed_lsn()); }

  /// Stops the durable-LSN thread; does not flush or checkpoint (a crash leaves the same).
  ~Wal();
  Wal(const Wal&) = delete;
  Wal& operator=(const Wal&) = delete;

  SegmentManager& manager() { return *manager_; }
  WalWriter& writer() { return *writer_; }
  const RecoveryResult& recovery() const { return recovery_; }
  std::uint64_t system_id() const { return system_id_; }

 private:
  Wal() = default;
  void mark_durable_loop();  // the durable-LSN thread (wal.cpp)

  std::unique_ptr<SegmentManager> manager_;
  std::unique_ptr<WalWriter> writer_;
  RecoveryResult recovery_;
  std::uint64_t system_id_ = 0;
  std::mutex marker_mu_;
  std::condition_variable marker_cv_;
  bool marker_stop_ = false;  ///< under marker_mu_
  std::thread marker_;        ///< started last in open() (unless the interval is 0), stopped first in ~Wal
};

}  // namespace walseg
