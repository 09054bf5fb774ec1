// The create-then-commit measurement: the one loop behind `walseg bench`'s create and write
// phases, walseg_bench() and auto's probe (auto_method.h), so the three time the same thing.
//
// Each round, every series makes one file (timed), then the files take their commits in turn,
// one commit per file round-robin (one record_bytes pwrite at increasing offsets, then the
// sync), so that a burst of noise from the rest of the machine lands on every series alike
// instead of deciding which looks fastest; then each series is handed its file back to keep or
// remove. Samples are microseconds of the steady clock; summarise them with
// summarize_latencies (latency_summary.h).
//
// Not for: WAL records (the writer's phases go through WalWriter), or concurrency.
// Thread-safety: none; one call runs on the caller's thread and calls the hooks there.
// Lifetimes: the series' hooks and the plan's `check` are used only during the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "walseg/config.h"
#include "walseg/file.h"

namespace walseg {

/// One series (a method, a reference, a recycled file): how it makes and releases its files.
struct MeasureSeries {
  /// Makes round `round`'s file (rounds count from 0) and returns it open for writing, or
  /// closed when the plan has no commits. The creation is timed by the steady clock around the
  /// call, unless the hook stores a time of its own (>= 0, microseconds) in *own_us: e.g.
  /// create_segment's report, which leaves out the hook's bookkeeping.
  std::function<File(int round, double* own_us)> create;
  /// After the round's commits, with the file still open: close it, stat it, remove it. Also
  /// called when the round fails (its exceptions are then dropped, the first error wins).
  /// Empty: the file is closed and left where it is.
  std::function<void(int round, File& file)> release;
};

/// Every byte of a measured commit's record: what the probe and bench files under temporary
/// names hold besides zeros (the start-up scan tells walseg's leftovers by it, dir_scan.h).
inline constexpr std::byte kMeasureRecordByte{0x5a};

struct MeasurePlan {
  int rounds = 1;
  /// Commits per file and round: record_bytes writes at offsets 0, record_bytes, ... while
  /// the record still ends at or before commit_bytes. 0: only creations are measured.
  std::uint64_t commit_bytes = 0;
  std::uint64_t record_bytes = 8192;
  /// The sync after each write. open_datasync / open_sync: none, the create hook opened the
  /// file O_DSYNC / O_SYNC so the write itself was synchronous.
  SyncMethod sync = SyncMethod::kFdatasync;
  /// Called before every creation and every turn of commits: throws to stop the measurement
  /// (a cancel flag, a stop signal). May be empty.
  std::function<void()> check;
  /// Called just before (after = false) and just after (true) each commit of series
  /// `series`, outside the commit's timing: `walseg bench` samples device counters there,
  /// since the series' commits interleave. May be empty.
  std::function<void(std::size_t series, bool after)> around_commit;
};

/// One series' samples, microseconds, in the order measured.
struct MeasureSamples {
  std::vector<double> create_us;  ///< one per round
  std::vector<double> commit_us;  ///< commits of every round, in order
};

/// Runs `plan` over `series`; result i belongs to series[i]. Throws whatever a hook, `check`
/// or a commit throws (walseg::Error from the file operations), after releasing the round's
/// files.
std::vector<MeasureSamples> measure_create_commit(const std::vector<MeasureSeries>& series,
                                                  const MeasurePlan& plan);

/// One commit: pwrite_all of len bytes at `offset`, then the sync of `sync` (see MeasurePlan).
/// Throws walseg::Error.
void commit_once(File& f, const void* data, std::size_t len, std::uint64_t offset, SyncMethod sync);

}  // namespace walseg
