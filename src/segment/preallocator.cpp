// The preallocator's step (include/walseg/preallocator.h: job choice and paced fill, shared
// with the PostgreSQL extension's worker) and the segment manager's background thread that
// loops on it: one loop, one hand-off (work_cv_/done_cv_), a stop signal, the first error
// kept. Modelled on etcd's file_pipeline.
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
#include "walseg/preallocator.h"
#include "walseg/segment_manager.h"

namespace walseg {

std::optional<PoolJob> next_job(const PoolView& v) {
  const SegNo last = std::min<SegNo>(v.position + static_cast<SegNo>(std::max(v.target, 0)), v.last_allowed);
  for (SegNo s = v.position + 1; s <= last; ++s)
    if (!v.present(s)) {
      // The first missing one completes the pool only if it is the last wanted (the header
      // says why nothing else is paced).
      PoolJob job{s, std::nullopt};
      if (s == last) job.pace_until = v.position + 1;
      return job;
    }
  return std::nullopt;
}

PreparedSegment prepare_paced(Directory& dir, const std::string& name, std::optional<Lsn> pace_until,
                              std::uint64_t size_bytes, AllocOptions opts, std::span<const std::byte> stamp,
                              const FillHooks& hooks) {
  const auto started = std::chrono::steady_clock::now();
  opts.on_progress = [&](std::uint64_t done, std::uint64_t total) {
    for (;;) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const double w =
          pace_until ? hooks.pacer().wait_s(elapsed, done, total, hooks.position(), *pace_until) : 0.0;
      // A wait of 0 still asks the host, so that a stop is seen at every chunk.
      if (!hooks.wait(w)) throw FillCancelled();
      if (w <= 0) return;
    }
  };
  return PreparedSegment::prepare(dir, name, size_bytes, opts, {}, stamp);
}

namespace {

/// Never sleep longer than this between chunks, so a change of rate is noticed soon.
constexpr auto kMaxPause = std::chrono::milliseconds(200);

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

PoolView SegmentManager::pool_view_locked() const {
  PoolView v;
  v.position = position_;
  v.target = cfg_.prealloc_segments;
  const SegNo max_segments = std::max<SegNo>(1, cfg_.max_size_bytes / cfg_.segment_size_bytes);
  // walseg.max_size counts files: segments of other timelines (the old one after a switch)
  // are on disk until retired too.
  v.last_allowed = book_.files() >= max_segments ? position_ : ~SegNo{0};
  v.present = [this](SegNo s) { return book_.present(s); };
  return v;
}

void SegmentManager::observe_position_locked(SegNo segno) {
  pacer_.observe(lsn_of_segment(segno, 0, cfg_.segment_size_bytes), now_s());
}

FillHooks SegmentManager::fill_hooks() {
  FillHooks h;
  // The writer's segment, as the manager knows it: its first byte (a switch is the only
  // position the manager sees; the pacer's rate comes from switches too).
  h.position = [this] {
    std::lock_guard lk(mu_);
    return lsn_of_segment(position_, 0, cfg_.segment_size_bytes);
  };
  h.pacer = [this] {
    std::lock_guard lk(mu_);
    return pacer_;
  };
  h.wait = [this](double seconds) {
    std::unique_lock lk(mu_);
    if (stop_) return false;
    if (seconds > 0)
      work_cv_.wait_for(lk, std::min<std::chrono::steady_clock::duration>(
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(seconds)),
                                kMaxPause));
    return !stop_;
  };
  return h;
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
    std::optional<PoolJob> next;
    // An error is kept until a public call has taken it; until then nothing new is tried.
    work_cv_.wait(lk, [&] { return stop_ || (!error_ && (next = next_job(pool_view_locked()))); });
    if (stop_) break;
    const Job job{book_.timeline(), next->segno, next->pace_until};
    book_.begin(job.segno);
    lk.unlock();
    std::optional<CreateReport> report;
    std::optional<Error> failure;
    try {
      report = create(job, true);
    } catch (const Error& e) {
      failure = e;  // create_segment rethrows a cancellation as an annotated Error
    } catch (const std::exception& e) {
      // Out of memory (or a thread's resources) must not leave this thread, where it would
      // end the process (break-it round 30: ulimit -v aborted a run): the writer's error.
      const std::string path = dir_.path_of(segment_file_name(job.timeline, job.segno, cfg_.segment_size_bytes));
      failure = make_error(dynamic_cast<const std::bad_alloc*>(&e) != nullptr ? ENOMEM : EIO, "create", path,
                           fmt::format("could not create segment \"{}\": {}", path,
                                       dynamic_cast<const std::bad_alloc*>(&e) != nullptr ? "out of memory" : e.what()));
    }
    lk.lock();
    if (report) {
      record_created_locked(job, *report);
    } else {
      book_.end(job.segno);
      if (failure && !(stop_ && failure->errnum() == ECANCELED)) {
        log(LogLevel::kLog, fmt::format("preallocation of segment {} failed: {}", job.segno, failure->what()));
        error_ = *failure;
      }
    }
    done_cv_.notify_all();
  }
}

}  // namespace walseg
