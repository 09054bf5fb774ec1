// The segment manager's background preallocator: one loop, one hand-off (work_cv_/done_cv_),
// a stop signal, the first error kept. Modelled on etcd's file_pipeline.
//
// Why it paces: a background fill that writes 16 MiB as fast as it can and then fsyncs makes
// every foreground fdatasync that lands meanwhile wait behind the fill's I/O (on ext4 the
// journal commit has to write the fill's dirty pages first): p99.9 commit latency grew 15-20x
// in our measurements. The fill bypasses the page cache (O_DIRECT, see allocator.h) and is
// spread over half the time the writer is expected to take to reach the segment, so its I/O
// arrives in small pieces the device interleaves with commits. Measured with `walseg bench
// --phases switch` on ext4 (1 MiB segments): 64 kB chunks gave a pooled ordinary p99 of
// ~1.3x the recycled reference, 256 kB ~2x, 1 MiB ~2.5x; the idle I/O priority class made
// p99.9 worse there (idle requests starve, then arrive in a burst), so walseg.fill_io_class
// defaults to best_effort (the PostgreSQL extension's paced buffered fills are another case:
// contrib/walseg/preallocator.c). 16 kB
// chunks then brought the pooled boundary p99 from 1.5x the ordinary p99 (64 kB) to 0.8-1.1x
// in quiet runs, with ordinary p99.9 unchanged (~650 us, about 2.1-2.3x recycled: the fill's
// fsync and install once per segment, not the chunk size, set that tail); 8 kB was no better.
// Buffered writes with write-behind (AllocOptions::write_behind, which the PostgreSQL
// extension uses) gave a boundary p99 of 1.3-1.4x here.
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "walseg/io_priority.h"
#include "walseg/log.h"
#include "walseg/segment_manager.h"

namespace walseg {
namespace {

/// Thrown from the progress callback to abandon a fill at shutdown; create_segment removes
/// the temporary file on the way out.
struct FillCancelled : Error {
  FillCancelled() : Error(ECANCELED, "create", "", "segment creation cancelled at shutdown") {}
};

/// Never sleep longer than this between chunks, so a change of rate is noticed soon.
constexpr auto kMaxPause = std::chrono::milliseconds(200);

}  // namespace

std::optional<SegmentManager::Job> SegmentManager::next_job_locked() const {
  const SegNo max_segments = std::max<SegNo>(1, cfg_.max_size_bytes / cfg_.segment_size_bytes);
  // Segments of other timelines (the old one after a switch) are on disk until retired too.
  if (existing_.size() + others_.size() + in_progress_.size() >= max_segments) return std::nullopt;
  for (SegNo s = position_ + 1; s <= position_ + static_cast<SegNo>(cfg_.prealloc_segments); ++s)
    if (!existing_.count(s) && !in_progress_.count(s)) return Job{timeline_, s};
  return std::nullopt;
}

void SegmentManager::pace(std::unique_lock<std::mutex>& lk, SegNo segno, std::uint64_t done,
                          std::uint64_t total, std::chrono::steady_clock::time_point started) {
  using namespace std::chrono;
  for (;;) {
    if (stop_) throw FillCancelled();
    // Without a consumption rate yet (start-up) there is nothing to pace against.
    if (switch_interval_s_ <= 0 || segno <= position_) return;
    double deadline_s = static_cast<double>(segno - position_) * switch_interval_s_;
    double due_s = deadline_s * fill_due_share(done, total);
    auto due = started + duration_cast<steady_clock::duration>(duration<double>(due_s));
    auto now = steady_clock::now();
    if (due <= now) return;
    work_cv_.wait_for(lk, std::min<steady_clock::duration>(due - now, kMaxPause));
  }
}

void SegmentManager::preallocator_loop() {
  if (cfg_.fill_io_class != FillIoClass::kBestEffort) {
    try {
      set_thread_io_class(cfg_.fill_io_class);
    } catch (const Error& e) {  // fills still work, at the default class
      log(LogLevel::kWarning, e.what());
    }
  }
  std::unique_lock lk(mu_);
  while (!stop_) {
    std::optional<Job> job;
    // An error is kept until a public call has taken it; until then nothing new is tried.
    work_cv_.wait(lk, [&] { return stop_ || (!error_ && (job = next_job_locked())); });
    if (stop_) break;
    in_progress_.insert(job->segno);
    lk.unlock();
    std::optional<CreateReport> report;
    std::optional<Error> failure;
    try {
      report = create(*job, true);
    } catch (const Error& e) {
      failure = e;  // create_segment rethrows a cancellation as an annotated Error
    }
    lk.lock();
    if (report) {
      record_created_locked(*job, *report);
    } else {
      in_progress_.erase(job->segno);
      if (failure && !(stop_ && failure->errnum() == ECANCELED)) {
        log(LogLevel::kLog, fmt::format("preallocation of segment {} failed: {}", job->segno, failure->what()));
        error_ = *failure;
      }
    }
    done_cv_.notify_all();
  }
}

}  // namespace walseg
