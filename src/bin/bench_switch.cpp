// walseg bench, phase `switch`: does crossing a segment boundary cost a commit anything?
//
// One writer appends write_size records, each followed by fdatasync, across at least 8
// segment boundaries, taking each next segment from a SegmentManager in three configurations:
//   unpooled  no preallocator: every boundary creates its segment synchronously, as
//             PostgreSQL does when no recycled segment is available;
//   pooled    the background preallocator creates segments ahead by the init method;
//   recycled  no creation at all: the pool is refilled only by recycling retired segments,
//             the quiet reference.
// A checkpointer thread retires the previous segment once the writer is a quarter into the
// next one, as PostgreSQL's checkpointer would at some point of its own, so retirement stays
// off the writer's path in every configuration and its directory fsync is not made to land on
// the boundary commit itself (a checkpoint is not synchronised with segment switches).
#include <fcntl.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "bench.h"
#include "walseg/file.h"
#include "walseg/segment_manager.h"

namespace walseg::tool {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMinBoundaries = 8;  // the floor; --switch-boundaries may ask more

// Retires segments on its own thread: the writer only posts the first segment still needed.
class Checkpointer {
 public:
  explicit Checkpointer(SegmentManager& m) : m_(m), t_([this] { loop(); }) {}
  ~Checkpointer() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    t_.join();
  }
  void post(SegNo first_needed) {
    std::lock_guard lk(mu_);
    want_ = first_needed;
    cv_.notify_all();
  }

 private:
  void loop() {
    std::unique_lock lk(mu_);
    for (;;) {
      cv_.wait(lk, [&] { return stop_ || want_ > done_; });
      if (want_ > done_) {
        SegNo w = want_;
        lk.unlock();
        m_.retire(w);
        lk.lock();
        done_ = w;
        continue;
      }
      if (stop_) return;
    }
  }
  SegmentManager& m_;
  std::mutex mu_;
  std::condition_variable cv_;
  SegNo want_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread t_;
};

struct ConfigRun {
  std::vector<double> boundary, ordinary;
  std::vector<double> handoff;  ///< next_segment + open of the boundary appends
  ManagerStats stats;
};

ConfigRun run_config(const BenchSettings& s, const std::string& dir, const std::string& name) {
  SegmentManager::Options o;
  o.config = s.config;
  const std::uint64_t size = s.switch_segment_size;
  o.config.segment_size_bytes = size;
  o.config.recycle = name == "recycled";
  o.background = name == "pooled";
  int boundaries = std::max(kMinBoundaries, s.switch_boundaries);
  if (name == "recycled") {
    // Enough written segments to cycle through; the recycle horizon must reach past them.
    o.config.min_size_bytes = std::max<std::uint64_t>(o.config.min_size_bytes, 8 * size);
  }
  SegmentManager m(dir, o);
  if (name == "recycled") {
    for (SegNo i = 1; i <= 3; ++i) m.next_segment(i);  // created now, recycled from then on
    m.retire(3);
  } else if (name == "pooled") {
    wait_ready_or_stop(m, static_cast<std::size_t>(o.config.prealloc_segments),
                       std::chrono::seconds(60));
  }
  ConfigRun run;
  std::vector<char> rec(s.write_size, '\x6b');
  SegNo segno = name == "recycled" ? 3 : 1;
  File f = File::open(m.next_segment(segno).path, O_RDWR);
  File next, previous;  // the writer's hand-off, as WalWriter does it (wal_write_out.cpp)
  // Unpooled models PostgreSQL without a recycled segment: the segment is made at the boundary.
  const bool early_take = name != "unpooled";
  bool retired = true;  // whether the segments before the current one were handed to retire
  std::uint64_t off = 0;
  Checkpointer ckpt(m);
  for (int crossed = 0; crossed < boundaries;) {
    check_stop();
    auto t0 = Clock::now();
    bool boundary = off + s.write_size > size;
    if (boundary) {
      ReadySegment rs = m.next_segment(segno + 1);  // tells the manager the writer moved on
      if (!next.is_open()) next = File::open(rs.path, O_RDWR);
      ++segno;
      previous = std::move(f);  // closed after the first commit in the new segment
      f = std::move(next);
      off = 0;
      run.handoff.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    f.pwrite_all(rec.data(), rec.size(), off);
    f.fdatasync();
    double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    (boundary ? run.boundary : run.ordinary).push_back(us);
    off += s.write_size;
    if (boundary) {
      retired = false;
      ++crossed;
      progress(s, "switch", name, crossed, boundaries);
    } else if (previous.is_open()) {
      previous.close();
    } else if (!retired && off >= size / 4) {
      ckpt.post(segno);
      retired = true;
    } else if (early_take && !next.is_open() && off >= size / 2) {
      if (auto rs = m.peek_ready(segno + 1)) next = File::open(rs->path, O_RDWR);  // open it early
    }
  }
  f.close();
  run.stats = m.stats();
  return run;
}

void print_stats(const std::string& name, const ManagerStats& st, std::vector<double> handoff) {
  Summary h = summarize(handoff);
  std::string created;
  for (const auto& [m, n] : st.created_by_method) created += fmt::format("{}{} by {}", created.empty() ? "" : ", ", n, m);
  fmt::print("  {:<9} created {}; recycled {}; removed {}; stalls {} ({:.0f} us total, max {:.0f}); "
             "fill p50/p99/max {:.0f}/{:.0f}/{:.0f} us; fsync p50 {:.0f} us; dir fsync p50 {:.0f} us; "
             "hand-off p50/max {:.0f}/{:.0f} us\n",
             name, created.empty() ? "none" : created, st.recycled, st.removed, st.stalls,
             st.stall.total_us, st.stall.max_us, st.fill.p50_us, st.fill.p99_us, st.fill.max_us,
             st.fsync.p50_us, st.dir_fsync.p50_us, h.median, h.max);
}

}  // namespace

std::vector<Row> bench_switch(const BenchSettings& s, Scratch& scratch) {
  std::vector<Row> rows;
  std::vector<std::tuple<std::string, ManagerStats, std::vector<double>>> stats;
  for (const std::string name : {"unpooled", "pooled", "recycled"}) {
    const std::string rel = std::string("switch/") + name;
    scratch.remove(rel);
    ConfigRun run = run_config(s, scratch.make_dir(rel), name);
    scratch.remove(rel);
    for (const char* kind : {"boundary", "ordinary"}) {
      auto& v = std::string(kind) == "boundary" ? run.boundary : run.ordinary;
      Row row = latency_row("switch", name == "recycled" ? "recycle" : std::string(to_string(run.stats.method)), v,
                            s.write_size);
      row.config = name;
      row.kind = kind;
      rows.push_back(std::move(row));
    }
    stats.emplace_back(name, run.stats, run.handoff);
  }
  fmt::print("\nSegment manager during the switch phase:\n");
  for (const auto& [name, st, handoff] : stats) print_stats(name, st, handoff);
  return rows;
}

}  // namespace walseg::tool
