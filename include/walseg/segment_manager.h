// SegmentManager: owns one WAL directory the way PostgreSQL's checkpointer and XLogFileInit own
// pg_wal, but keeps segment creation off the commit path.
//
// Opening locks the directory (DirLock), reads its walseg.control (wal_control.h; a directory
// without one gets one, unless it already holds segment-named files), checks the settings
// against it, scans the directory (dir_scan.h), resolves walseg.init_method =
// auto (auto_method.h), and starts a background preallocator that keeps
// walseg.prealloc_segments complete segments ready beyond the write position, created by the
// init method with the durable install protocol (segment_install.h), paced against the rate the
// writer consumes segments so that the fill's I/O disturbs commits as little as possible.
//
// The writer asks next_segment(segno) when it moves into a segment: a ready segment is returned
// at once; otherwise one is created synchronously and a *stall* is counted with its duration.
// retire(segno) is the checkpoint hook: every segment below segno is no longer needed; with
// walseg.recycle = on and within the recycle horizon (recycle_horizon.h, as XLOGfileslop) it is
// renamed to the lowest free future name and counts as ready; otherwise it is removed durably.
// Only segments of this WAL are ever used, recycled or removed: files
// whose first bytes carry the control file's system identifier (a long page header, or the
// ready stamp every segment this manager creates gets before its fsync). Everything else is
// left alone and reported; one with a name the WAL may still need (its timeline, at or above
// the oldest segment) makes opening fail, because the writer would have to use or replace it.
// Before retire() recycles or removes anything, the control file's oldest LSN is moved past
// it, durably, so that after a crash readers never start below a segment that may be gone.
//
// Errors: public calls throw walseg::Error. The preallocator keeps its first error and stops;
// the next next_segment() of a segment not ready, or retire(), throws it, after which the preallocator tries again
// (the condition, e.g. a full disk, may have been cleared).
// Thread-safety: all public methods may be called from any thread; one writer is expected to
// call next_segment with non-decreasing segment numbers.
// Lifetime: the manager must outlive every ReadySegment path it handed out that is in use.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "walseg/config.h"
#include "walseg/dir_lock.h"
#include "walseg/dir_scan.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/latency_stats.h"
#include "walseg/fill_pacer.h"
#include "walseg/preallocator.h"
#include "walseg/recycle_horizon.h"
#include "walseg/segment_book.h"
#include "walseg/segment_install.h"
#include "walseg/segment_name.h"
#include "walseg/wal_control.h"

namespace walseg {

/// Bytes per write of the manager's zero fills (see preallocator.cpp for why it is small:
/// chunks let a fill be paced and cancelled between them, and keep each one's time in the
/// device queue, which a concurrent commit's flush may wait behind, short).
inline constexpr std::uint64_t kBackgroundFillChunkBytes = 16 * 1024;
/// Bytes per write of create_now's fill (walseg create), which nothing paces. Bounded (case
/// C26): one request of a whole 16 MiB segment, as allocate_file's default makes, holds the
/// device queue for its whole transfer while a commit's flush waits behind it (ScyllaDB's
/// 32 MB zeroing write stalled other I/O the same way). Two buffer-sized iovecs per call.
inline constexpr std::uint64_t kForegroundFillChunkBytes = 2 * kMiB;

/// A segment handed to the writer: complete, exactly segment_size bytes (or empty in append
/// mode), under a durable final name.
struct ReadySegment {
  TimeLineId timeline = 0;
  SegNo segno = 0;
  std::string name;
  std::string path;
  bool recycled = false;       ///< renamed from an old segment: holds stale bytes, never read as records
  /// Made by this manager with a method that leaves a full-size file reading as zeros
  /// (zero_write, posix_fallocate, glibc_emulation, sparse) and never written since: a writer
  /// may write just its new bytes, relying on zeros after them. False for recycled segments
  /// and for those found at open, which may hold bytes of an earlier life.
  bool zeroed = false;
  /// The file the manager made, recycled or found under `name`: the writer writes into no other
  /// (unknown where the manager's books lost it; the writer then checks the content alone).
  FileIdentity file;
  bool stalled = false;        ///< the pool did not have it ready
  std::uint64_t wait_us = 0;   ///< time next_segment spent waiting or creating
};

/// Counters and latency summaries (microseconds).
struct ManagerStats {
  InitMethod method = InitMethod::kZeroWrite;            ///< method in use (auto resolved)
  std::map<std::string, std::uint64_t> created_by_method; ///< by method actually used
  std::uint64_t recycled = 0;
  std::uint64_t removed = 0;
  std::uint64_t stalls = 0;
  LatencySummary stall;       ///< time next_segment waited when the pool was empty
  LatencySummary create;      ///< whole durable creation
  LatencySummary fill, fsync, rename, dir_fsync;  ///< creation steps
  LatencySummary recycle;     ///< rename + directory fsync of a recycled segment
  std::size_t ready_ahead = 0;  ///< complete segments beyond the write position now
};

class SegmentManager {
 public:
  struct Options {
    Config config;
    /// nullopt: the control file's (1 for a new directory). A value the control file
    /// contradicts is refused (EINVAL): the timeline changes only by switch_timeline().
    std::optional<TimeLineId> timeline;
    /// A new directory's first timeline when `timeline` is nullopt.
    TimeLineId new_timeline = 1;
    bool background = true;  ///< false: no preallocator (every next_segment creates: "unpooled")
    /// The caller's own refusals, run on this manager (control(), directory(), scan_report())
    /// after its checks and before it changes anything in the directory: a new WAL's control
    /// file, the removal of leftovers, the append-mode flag, the preallocator. Whatever it
    /// throws leaves the directory as it was (but for init_method = auto's probe) and is
    /// thrown by the constructor. Called on the constructing thread.
    std::function<void(SegmentManager&)> before_changes;
    /// How the opening's advice names the init method to set: "walseg.init_method = sparse";
    /// walseg create gives "--method" ("--method sparse"), its user's way to choose it.
    std::string init_method_option = "walseg.init_method";
  };

  /// Opens (creating if missing) the WAL directory `dir`. Throws walseg::Error: the lock is held
  /// by another process (naming its PID); the segment size is invalid; EINVAL, before
  /// anything in the directory is changed, when the control file is damaged, when it is
  /// missing while segment-named files exist, when config's segment size, block size or a
  /// full-size init method contradicts the WAL there (the message names the setting to
  /// change), or when files walseg did not make have names the WAL may still need (all of
  /// them named in one message); what before_changes throws; the scan's or the control
  /// file's I/O errors. A refused open removes the lock file if it made it.
  SegmentManager(const std::string& dir, Options opts);
  /// The same, in a directory already open: the manager works in that very directory whatever
  /// its path names meanwhile (a caller that made and checked it, as bench's scratch does,
  /// must not have the path re-resolved into a directory someone swapped in).
  SegmentManager(Directory dir, Options opts);
  /// Stops the preallocator (cancelling a fill in progress, whose temp file is removed).
  ~SegmentManager();
  SegmentManager(const SegmentManager&) = delete;
  SegmentManager& operator=(const SegmentManager&) = delete;

  /// Returns segment `segno` of the current timeline, ready to be written. A ready one is
  /// handed out even after the preallocator failed, so that a writer goes on while it has
  /// segments. Throws walseg::Error from a synchronous creation, or, when `segno` is not
  /// ready, the preallocator's stored first error.
  ReadySegment next_segment(SegNo segno);

  /// Creates segment (tli, segno) now, on the calling thread, as the pool would (init method,
  /// ready stamp, durable install) and adds it to the books: for `walseg create`, which
  /// checks first that it lies ahead of the WAL. Throws walseg::Error: EEXIST when any entry
  /// has its name (nothing is replaced), or the creation's error.
  CreateReport create_now(TimeLineId tli, SegNo segno);

  /// For a command whose first creation failed (walseg create on a full disk): when this
  /// opening made a new WAL (open wrote its walseg.control) and nothing has been created since,
  /// removes that control file (only if the name still holds the file open wrote) and the
  /// walseg.lock this opening made, then fsyncs the directory, so that the failed command
  /// leaves the directory as it found it. Returns whether it did. Call with no preallocator
  /// running (background = false). Never throws: a failure is logged and the WAL stays.
  bool abandon_new_wal() noexcept;

  /// Segment `segno` if it is already complete and ready (made by the pool or recycled),
  /// without creating it, waiting, or moving the write position: for a writer that opens its
  /// next segment early. Never throws for an absent segment (nullopt).
  std::optional<ReadySegment> peek_ready(SegNo segno) const;

  /// Segments below first_needed are no longer needed: recycle or remove them (see above).
  /// First the control file's oldest LSN becomes first_needed's first byte and its durable
  /// LSN at least durable_lsn (an LSN below which every record was acknowledged; 0: none
  /// known), durably. Throws walseg::Error from the control file's replacement (then nothing
  /// is retired), a rename, unlink or directory fsync (already-done work stays).
  void retire(SegNo first_needed, Lsn durable_lsn = 0);

  /// New segments and recycled names use `tli` from now on (case C20), for this manager's
  /// life: the control file keeps its timeline (switch_timeline changes both). Segments named
  /// for the old timeline become retire candidates.
  void set_timeline(TimeLineId tli);

  /// Switches to timeline new_tli at switch_lsn, as PostgreSQL's XLogInitNewTimeline: the
  /// segment containing switch_lsn is installed on new_tli as a copy of the current timeline's
  /// segment up to switch_lsn and zeros after it, so that a restart right after the switch
  /// finds the valid part instead of a zero-filled file ("invalid magic number 0000", case
  /// C20; the copied page headers carry new_tli, so readers of the new timeline read them);
  /// then the control file's timeline becomes new_tli and its oldest LSN at least that
  /// segment's first byte, durably; then set_timeline(new_tli). Returns that segment. Throws
  /// walseg::Error if the old segment is missing or any step of the durable installation or
  /// of the control file's replacement fails (nothing is switched).
  ReadySegment switch_timeline(TimeLineId new_tli, Lsn switch_lsn);

  /// Records in the control file, durably, that every record ending at or below durable_lsn
  /// was acknowledged (its durable LSN only moves forward), so that recovery reports a stop
  /// before it as corruption, not as the end of WAL: as a checkpoint or a clean shutdown
  /// does in PostgreSQL. Throws walseg::Error from the control file's replacement.
  void mark_durable(Lsn durable_lsn);

  /// Takes the next writer epoch (wal_format.h: every record's xl_xid), above both the
  /// control file's and at_least (the last epoch recovery read), and makes it durable in the
  /// control file before returning it, so that no two lives of the WAL ever share one.
  /// Throws walseg::Error from the control file's replacement.
  std::uint32_t next_epoch(std::uint32_t at_least);

  /// The timeline new segments are named for.
  TimeLineId timeline() const {
    std::lock_guard lk(mu_);
    return book_.timeline();
  }
  ManagerStats stats() const;
  const ScanReport& scan_report() const { return scan_; }
  /// The control file as it is now (it changes at retire and switch_timeline).
  WalControl control() const {
    std::lock_guard lk(control_mu_);
    return control_;
  }
  const Config& config() const { return cfg_; }
  Directory& directory() { return dir_; }

  /// Waits until n segments are ready ahead (or the preallocator failed, or timeout).
  /// Returns the number ready. For tests and the bench.
  std::size_t wait_ready(std::size_t n, std::chrono::milliseconds timeout);
  /// Throws the preallocator's stored first error (walseg::Error, naming the path and the
  /// failed step), if there is one, and takes it (the preallocator then tries again), as
  /// retire() does, and next_segment() for a segment that is not ready: for a caller whose wait_ready() returned short, to tell a
  /// failure from a timeout. Returns normally when nothing failed.
  void throw_if_failed();

 private:
  struct Job {
    TimeLineId timeline;
    SegNo segno;
    std::optional<SegNo> pace_until = std::nullopt;  // a background fill's (PoolJob)
  };
  void preallocator_loop();                      // the background thread (preallocator.cpp)
  PoolView pool_view_locked() const;             // what the step sees of the pool
  void observe_position_locked(SegNo segno);     // the writer moved into segno: the pacer's sample
  FillHooks fill_hooks();                        // the pacer's position, the stop-aware wait
  CreateReport create(const Job& job, bool background, std::uint64_t chunk_bytes = kBackgroundFillChunkBytes);
  void record_created_locked(const Job& job, const CreateReport& r);
  void throw_stored_error_locked();
  void start_preallocator();
  void stop_preallocator();
  std::size_t ready_ahead_locked() const { return book_.ready_after(position_); }
  bool remove_or_recycle(const SegmentName& old, SegNo horizon);
  // Opening (segment_open.cpp): the control file, the checks, the changes, the books.
  void open(const Options& opts);
  bool open_control(const Options& opts);  // true: a new WAL, its control file not yet written
  void write_new_control();
  void check_scan();
  // The mode the WAL is in once opened: the method's, or for auto (on an existing WAL resolved
  // only after the refusals) the WAL's own, the kind auto then chooses among.
  bool opening_in_append_mode() const {
    return cfg_.init_method == InitMethod::kAuto ? control_.append_mode : append_mode(cfg_.init_method);
  }
  void clean_up_scan();
  void fill_books();
  /// The ready stamp a new segment (tli, segno) of this WAL carries (wal_format.h).
  std::array<std::byte, kReadyStampBytes> stamp_for(TimeLineId tli, SegNo segno) const;
  /// Replaces the control file by `next` if it differs (control_mu_ held by the caller).
  void update_control_locked(const WalControl& next);

  Config cfg_;
  bool background_;
  std::string init_method_option_;  ///< Options::init_method_option
  /// open wrote a new WAL's control file, this file (abandon_new_wal removes only it).
  std::optional<struct stat> new_control_file_;
  Directory dir_;
  DirLock lock_;
  mutable std::mutex control_mu_;  ///< guards control_ and its file; never taken inside mu_
  WalControl control_;
  ScanReport scan_;
  AllocOptions alloc_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  ///< wakes the preallocator
  std::condition_variable done_cv_;  ///< a creation finished (or failed)
  SegNo position_ = 0;  ///< last segment handed out
  SegmentBook book_;    ///< what exists and in which state (segment_book.h); its timeline is the manager's
  std::optional<Error> error_;
  bool stop_ = false;
  std::thread thread_;
  FillPacer pacer_;  ///< fed at each next_segment; the background fills' pace
  DistanceEstimate distance_;
  std::optional<SegNo> last_retire_;
  // stats
  std::map<std::string, std::uint64_t> created_by_method_;
  std::uint64_t recycled_ = 0, removed_ = 0, stalls_ = 0;
  LatencyRecorder stall_, create_, fill_, fsync_, rename_, dir_fsync_, recycle_;
};

}  // namespace walseg
