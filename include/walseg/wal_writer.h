// WalWriter: appends records to the WAL and makes them durable, with group commit, through
// pwrite or io_uring (walseg.io_method), into segments handed out by a SegmentManager.
//
// append() encodes a record (wal_encoder.h) into an in-memory ring of walseg.wal_buffers bytes
// of pages, as PostgreSQL's XLogInsert copies into wal_buffers; when the ring is full the
// appender writes pages out (without syncing) before it takes more, so memory stays bounded.
// flush(lsn) returns once every byte up to lsn is durable: the first caller writes every page
// inserted so far and syncs each segment file written (walseg.sync_method), and everyone who
// waited behind it and is covered returns without another sync: group commit, as XLogFlush.
// Whole pages are written, with zeros after the insert position, so a recycled segment never
// shows stale bytes inside a page of this life (every page carries where it belongs); into a segment the
// manager zero-filled, a commit writes only its new bytes, to the next 4 kB boundary (with
// walseg.direct_io = on: O_DIRECT, whole sectors, as PostgreSQL 16's debug_io_direct = wal).
//
// Durability rules (case C14):
//   - an LSN is reported flushed only after a sync that was issued after every byte up to it
//     was written in full (short writes are completed first; on io_uring the sync is linked
//     behind the writes, and a cancelled or failed link is never taken as success);
//   - the first failed write or sync is final: the writer keeps that error, and every later
//     append, flush or truncate_before throws it; nothing is acknowledged after it;
//   - a segment file stays open from its first write until it has been synced.
// Segment switch takes the next segment from the manager (next_segment); in append mode
// (init_method none) the file grows with each write and the sync carries the size change:
// the same code path. truncate_before(lsn) is the checkpoint hook that retires old segments.
//
// Errors: walseg::Error (invalid arguments: EINVAL before anything is written; io_uring refused
// by the kernel: the errno and a message naming walseg.io_method; I/O: PostgreSQL's wording).
// Thread-safety: append, flush, and the accessors may be called from any number of threads.
// Lifetime: the SegmentManager must outlive the writer. The destructor does not flush.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "walseg/config.h"
#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/segment_manager.h"
#include "walseg/wal_encoder.h"

namespace walseg {

class WalIo;  // the pwrite or io_uring backend (src/wal/wal_io.h)
/// Write-side counters (kept under the writer's write lock).
struct WalIoCounters {
  std::uint64_t writes = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t short_writes = 0;
  std::uint64_t syncs = 0;
  std::uint64_t flushes = 0;
  std::uint64_t segment_switches = 0;
};

struct WalWriterOptions {
  std::uint64_t system_id = 0;  ///< written into every long page header
  std::uint32_t epoch = 0;      ///< written into every record's xl_xid (wal_format.h)
  /// Next insert position: wal_start_lsn() for a fresh WAL, or find_end_of_wal()'s end_lsn
  /// (then prev_record_lsn must be its last record's LSN). nullopt: a fresh WAL.
  std::optional<Lsn> resume_lsn;
  Lsn prev_record_lsn = 0;
};

/// Counters (monotonic since construction).
struct WalWriterStats {
  std::uint64_t records = 0;
  std::uint64_t bytes_inserted = 0;   ///< WAL bytes including headers and padding
  std::uint64_t writes = 0;           ///< write calls or write SQEs issued
  /// Bytes handed to those writes. A commit into a segment the manager zero-filled writes just
  /// its new bytes; elsewhere the last page is written whole (see ReadySegment::zeroed).
  std::uint64_t bytes_written = 0;
  std::uint64_t short_writes = 0;     ///< writes that transferred less than asked, completed
  std::uint64_t syncs = 0;            ///< syncs issued (one per segment file per flush)
  std::uint64_t flushes = 0;          ///< flush() calls that did the writing
  std::uint64_t flush_waits = 0;      ///< flush() calls covered by someone else's sync
  /// Syncs whose leader waited for its group to gather (walseg.commit_delay).
  std::uint64_t commit_delays = 0;
  std::uint64_t buffer_full_writes = 0;  ///< appenders that had to write pages out first
  /// Moves from one segment into the next (the segment the writer starts in is not one).
  std::uint64_t segment_switches = 0;
};

class WalWriter {
 public:
  /// The manager supplies segments, its Config supplies segment_size, block_size, wal_buffers,
  /// sync_method, commit_delay, io_method and direct_io; the timeline is the manager's current
  /// one. When resuming in the middle of a page, that page's written part is read back from
  /// its segment first.
  /// Throws walseg::Error (EINVAL for wal_buffers below 4 pages, an invalid resume position;
  /// io_uring set-up errors naming walseg.io_method; reading the resume page).
  WalWriter(SegmentManager& manager, WalWriterOptions opts);
  ~WalWriter();
  WalWriter(const WalWriter&) = delete;
  WalWriter& operator=(const WalWriter&) = delete;

  /// The largest payload append() takes under `config`, in bytes: what fits in the ring's
  /// pages less two (the page the record starts in, part-used, and one to spare), each less
  /// a long page header, after the record's headers. Every page a record continues into
  /// carries a page header, so a ring less three whole pages was too much for large rings
  /// (break-it round 28 M1: 16 MB records in a 16 MB ring waited for space forever). For
  /// callers that refuse a size before they open anything.
  static std::uint64_t max_payload_bytes(const Config& config) {
    const std::uint64_t pages = config.wal_buffers_bytes / config.block_size_bytes;
    const std::uint64_t headers = kRecordHeaderBytes + kDataHeaderLongBytes;
    if (pages <= 2 || config.block_size_bytes <= kLongPageHeaderBytes) return 0;
    const std::uint64_t room = (pages - 2) * (config.block_size_bytes - kLongPageHeaderBytes);
    return room > headers ? room - headers : 0;
  }

  /// Appends one record with `payload` (at most max_payload_bytes()) and xl_info
  /// `info` (resource-manager bits only). Returns the record's end LSN: pass it to flush().
  /// May block while the ring is full and pages are written out.
  Lsn append(std::span<const std::byte> payload, std::uint8_t info = 0);

  /// Returns when every byte below `lsn` is durable. Group commit: one caller at a time leads
  /// (writes everything appended so far and syncs it), the others wait for its sync and return
  /// if it covered them. When the leader's previous sync covered more than one caller, the
  /// leader first waits up to walseg.commit_delay microseconds, and no longer than that sync
  /// took, for as many callers to be in flush() again, yielding the CPU meanwhile (as
  /// PostgreSQL's commit_delay with commit_siblings, but ending as soon as the group is in, as
  /// MySQL's binlog_group_commit_sync_no_delay_count). A lone committer never waits.
  /// Throws walseg::Error: EINVAL if `lsn` is beyond insert_lsn(); the writer's first error
  /// (case C14) once any write or sync failed.
  /// Thread-safe, as append().
  void flush(Lsn lsn);

  /// Retires segments wholly below `lsn` (at most flushed_lsn()) through the manager.
  void truncate_before(Lsn lsn);

  Lsn insert_lsn() const;
  Lsn flushed_lsn() const { return flushed_.load(); }
  WalWriterStats stats() const;

 private:
  struct OpenSegment {
    SegNo segno;
    File file;
    bool synced = true;     ///< nothing written since its last sync
    bool announced = true;  ///< the manager was told the writer moved into it (next_segment)
    bool zeroed = false;    ///< reads as zeros past what this writer wrote (ReadySegment::zeroed)
    std::string name;       ///< its file name in the manager's directory
    struct stat identity{}; ///< the file's device and inode when opened (what `name` must still name)
    bool written = false;   ///< written since the last refuse_unless_still_named()
  };
  /// The page cache's unit: a buffered write covering only part of one that is not cached
  /// reads it first (wal_write_out.cpp).
  static constexpr std::uint64_t kMemoryPageBytes = 4096;
  /// The memory page, or the WAL page if smaller (walseg.block_size 1-2 kB): the unit a
  /// buffered write-out ends on, and every O_DIRECT unit open_segment accepts divides it.
  std::uint64_t memory_unit() const { return std::min<std::uint64_t>(kMemoryPageBytes, cfg_.block_size_bytes); }
  /// walseg.direct_io: the O_DIRECT unit of the segments opened so far; memory_unit() before
  /// the first. Caller holds write_mu_.
  std::uint64_t direct_unit() const { return direct_unit_ != 0 ? direct_unit_ : memory_unit(); }
  /// Opens and checks it is still the segment walseg made; *identity gets its stat.
  File open_segment(const ReadySegment& rs, struct stat* identity);
  File open_segment_file(const std::string& name);  // walseg.direct_io errors name the setting
  void open_next_early(SegNo segno);
  std::byte* slot(Lsn page_lsn);
  bool has_space_locked(Lsn end) const;
  void make_space_locked(std::unique_lock<std::mutex>& ilk);
  /// Writes everything inserted so far and, with sync, makes it durable (wal_write_out.cpp).
  /// Caller holds write_mu_.
  void write_out(bool sync);
  struct WriteOut;  // one write-out's plan (wal_write_out.cpp)
  WriteOut plan_write_out();
  void add_page_runs(WriteOut& w);
  std::size_t write_segment(WriteOut& w, std::size_t first_run, bool sync);
  std::size_t fill_tail(const WriteOut& w, const OpenSegment& s);
  void sync_earlier_segments();
  void refuse_unless_still_named();
  void after_flush(Lsn flushed);
  OpenSegment& segment_for(SegNo segno);
  void note_segment_entered();  // write_mu_ held
  void fail(const Error& e);
  void wake_flush_waiters();
  void gather_group();  // the flush leader, before its write
  void throw_if_failed() const;
  void load_resume_page(Lsn pos);

  SegmentManager& mgr_;
  Config cfg_;
  EncoderParams params_;
  std::size_t pages_;                 ///< ring size in pages
  std::byte* ring_ = nullptr;         ///< pages_ * block_size, page-aligned
  std::byte* tail_ = nullptr;         ///< a write's last memory page, copied (wal_write_out.cpp)
  /// walseg.direct_io: O_DIRECT's offset and length unit on the segments opened so far (0:
  /// none opened yet). Under write_mu_.
  std::uint32_t direct_unit_ = 0;
  std::unique_ptr<WalIo> io_;

  mutable std::mutex insert_mu_;      ///< guards insert_, prev_, stats_ (insert side)
  Lsn insert_;
  Lsn prev_;
  std::atomic<Lsn> written_;          ///< every page below is written (not necessarily synced)
  std::atomic<Lsn> flushed_;          ///< every byte below is durable

  mutable std::mutex write_mu_;       ///< one writer of pages at a time; guards segments_
  std::vector<std::unique_ptr<OpenSegment>> segments_;  ///< open, written since last sync
  bool entered_segment_ = false;       ///< under write_mu_: segment_switches counts from the second
  std::atomic<bool> flush_leader_{false};  ///< someone is writing and syncing for flush()
  /// Bumped when a leader finishes or the writer fails; flush() waiters sleep on it (a 32-bit
  /// atomic, so that std::atomic::wait is a bare futex).
  std::atomic<std::uint32_t> flush_epoch_{0};
  std::atomic<std::uint64_t> flush_waits_{0};
  /// flush() calls that found their LSN not yet durable, so far.
  std::atomic<std::uint64_t> arrivals_{0};
  // The flush leader's alone (flush_leader_ hands them from one leader to the next):
  std::uint64_t group_start_ = 0;     ///< arrivals_ when the last sync's write began
  std::uint64_t last_group_ = 0;      ///< arrivals between the last two writes' beginnings
  std::chrono::steady_clock::duration last_sync_{};  ///< the last syncing write_out's time
  std::atomic<std::uint64_t> commit_delays_{0};  ///< WalWriterStats::commit_delays
  mutable std::mutex error_mu_;
  std::optional<Error> error_;
  WalWriterStats stats_;              ///< insert-side counters under insert_mu_
  WalIoCounters io_counters_;         ///< write-side counters under write_mu_
};

}  // namespace walseg
