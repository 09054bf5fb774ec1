// walseg bench, phase `switch`: does crossing a segment boundary cost a commit anything?
//
// One writer (WalWriter, real records and page headers) appends write_size records, each
// flushed, across at least 8 segment boundaries, taking each next segment from a SegmentManager
// in three configurations:
//   unpooled  no preallocator: every boundary creates its segment synchronously, as
//             PostgreSQL does when no recycled segment is available;
//   pooled    the background preallocator creates segments ahead by the init method;
//   recycled  no creation once warmed up: the pool is refilled only by recycling retired
//             segments, the quiet reference.
// The hand-off is the writer's own (open the next segment early if ready, else take it at the
// boundary), so what is timed is what a WAL user gets. A Checkpointer (checkpointer.h) retires
// segments behind the writer; its errors are the run's. Since the segments hold real WAL, the
// manager recognises them as its own and recycles or removes them (raw bytes were refused
// with a warning per segment, and `recycled` never recycled).
#include <chrono>

#include <fmt/format.h>

#include "bench.h"
#include "checkpointer.h"
#include "clients.h"
#include "walseg/segment_manager.h"
#include "walseg/segment_name.h"
#include "walseg/wal_writer.h"

namespace walseg::tool {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMinBoundaries = 8;  // the floor; --switch-boundaries may ask more
// recycled: boundaries written untimed first, so that every timed one finds a recycled
// segment (the first segments must be created, and retired a quarter into their successor).
constexpr int kRecycleWarmupBoundaries = 3;

struct ConfigRun {
  std::vector<double> boundary, ordinary;
  ManagerStats stats;
  std::uint64_t switches = 0;  ///< the writer's segment switches while timed
};

SegmentManager::Options manager_options(const BenchSettings& s, const std::string& name) {
  SegmentManager::Options o;
  o.config = s.config;
  o.config.segment_size_bytes = s.switch_segment_size;
  o.config.recycle = name == "recycled";
  o.background = name == "pooled";
  // Enough recycled segments to cycle through: the recycle horizon must reach past them.
  if (o.config.recycle)
    o.config.min_size_bytes = std::max<std::uint64_t>(o.config.min_size_bytes, 8 * s.switch_segment_size);
  return o;
}

// Commits (append + flush) until `boundaries` segment boundaries are crossed; timed into run
// unless run is null (the warm-up).
void commit_across(const BenchSettings& s, WalWriter& w, const Checkpointer& ckpt, const std::string& name,
                   int boundaries, ConfigRun* run) {
  const std::uint64_t size = s.switch_segment_size;
  std::vector<std::byte> rec(s.write_size, kPayloadFill);
  SegNo current = segno_of_lsn(w.insert_lsn(), size);
  for (int crossed = 0; crossed < boundaries;) {
    check_stop();
    if (ckpt.failed()) return;  // the caller reports it
    const auto t0 = Clock::now();
    const Lsn end = w.append(rec);
    w.flush(end);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    const SegNo now = segno_of_lsn_end(end, size);
    const bool boundary = now != current;
    current = now;
    if (run != nullptr) (boundary ? run->boundary : run->ordinary).push_back(us);
    if (boundary) {
      ++crossed;
      if (run != nullptr) progress(s, "switch", name, crossed, boundaries);
    }
  }
}

ConfigRun run_config(const BenchSettings& s, Directory dir, const std::string& name) {
  const SegmentManager::Options o = manager_options(s, name);
  SegmentManager m(std::move(dir), o);
  if (o.background)
    wait_ready_or_stop(m, static_cast<std::size_t>(o.config.prealloc_segments), std::chrono::seconds(60));
  WalWriter w(m, WalWriterOptions{.system_id = m.control().system_id, .epoch = m.next_epoch(0)});
  ConfigRun run;
  std::uint64_t before = 0;
  {
    Checkpointer ckpt(w, s.switch_segment_size);
    if (o.config.recycle) commit_across(s, w, ckpt, name, kRecycleWarmupBoundaries, nullptr);
    before = w.stats().segment_switches;
    commit_across(s, w, ckpt, name, std::max(kMinBoundaries, s.switch_boundaries), &run);
    ckpt.throw_if_failed();
  }
  m.throw_if_failed();
  run.stats = m.stats();
  run.switches = w.stats().segment_switches - before;
  return run;
}

void print_stats(const std::string& name, const ManagerStats& st, std::uint64_t switches) {
  std::string created;
  for (const auto& [m, n] : st.created_by_method) created += fmt::format("{}{} by {}", created.empty() ? "" : ", ", n, m);
  fmt::print("  {:<9} created {}; recycled {}; removed {}; stalls {} ({:.0f} us total, max {:.0f}); "
             "fill p50/p99/max {:.0f}/{:.0f}/{:.0f} us; fsync p50 {:.0f} us; dir fsync p50 {:.0f} us; "
             "writer switched segments {} times\n",
             name, created.empty() ? "none" : created, st.recycled, st.removed, st.stalls,
             st.stall.total_us, st.stall.max_us, st.fill.p50_us, st.fill.p99_us, st.fill.max_us,
             st.fsync.p50_us, st.dir_fsync.p50_us, switches);
}

}  // namespace

std::vector<Row> bench_switch(const BenchSettings& s, Scratch& scratch) {
  std::vector<Row> rows;
  std::vector<std::tuple<std::string, ManagerStats, std::uint64_t>> stats;
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
      row.manager = run.stats;
      row.writer_switches = run.switches;
      s.done(row);
      rows.push_back(std::move(row));
    }
    stats.emplace_back(name, run.stats, run.switches);
  }
  fmt::print("\nSegment manager during the switch phase:\n");
  for (const auto& [name, st, switches] : stats) print_stats(name, st, switches);
  return rows;
}

}  // namespace walseg::tool
