// walseg bench, phase `write`: what a commit costs in a segment made by each method.
//
// Each commit is one write_size pwrite followed by the configured sync (fdatasync by default),
// the pattern of a WAL writer with one client. A segment made sparse or by fallocate makes the
// first write of each block also allocate or convert an unwritten extent, and the sync must
// journal that (case C09); a zero-written or recycled segment does not; a plain append (none)
// changes the file size with every commit. Commits go round-robin over the methods' segments.
#include <fcntl.h>


#include "bench.h"
#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/made_files.h"
#include "walseg/measure_loop.h"
#include "walseg/segment_install.h"
#include "walseg/segment_name.h"

namespace walseg::tool {
namespace {

struct Series {
  std::string name;
  InitMethod method;
  Directory dir;
  std::vector<double> us;
  std::string used, note;
  std::uint64_t allocated = 0;
  std::string current;  ///< the segment of the round being measured
  bool current_ours = false;  ///< `current` was bench's own file when opened (made_files)
  struct stat opened{};       ///< its identity then
};

// Opens bench's segment `name` through its row directory (never by path, never through a
// link: break-it round 10 F2 wrote the commits into another WAL swapped in by path) and says
// whether it is the file bench made there.
File open_own(Directory& dir, const std::string& name, int flags, struct stat* st, bool* ours) {
  File f = File::open_at(dir, name, flags | O_NOFOLLOW);
  *st = f.stat();
  *ours = made_files::made(dir.fd(), name, *st);
  return f;
}

int open_flags(SyncMethod m) {
  switch (m) {
    case SyncMethod::kOpenDatasync: return O_RDWR | O_DSYNC;
    case SyncMethod::kOpenSync: return O_RDWR | O_SYNC;
    default: return O_RDWR;
  }
}

// A segment's previous life for the recycled row: fully written with non-zero bytes, fsynced,
// then renamed to its new name, as PostgreSQL's recycling leaves it.
std::string make_recycled(const BenchSettings& s, Directory& dir, SegNo segno, const std::vector<char>& pattern) {
  std::uint64_t size = s.segment_size;
  std::string old_name = segment_file_name(1, segno, size);
  create_segment(dir, old_name, size, AllocOptions{.method = InitMethod::kZeroWrite, .fallback = s.config.fallocate_fallback});
  struct stat st{};
  bool ours = false;
  File f = open_own(dir, old_name, O_RDWR, &st, &ours);
  if (!ours)
    throw make_error(EEXIST, "open", dir.path_of(old_name),
                     fmt::format("\"{}\" is not the segment walseg bench made there: another file was moved "
                                 "onto its name; it is left as it is",
                                 dir.path_of(old_name)));
  for (std::uint64_t off = 0; off < size; off += pattern.size())
    f.pwrite_all(pattern.data(), std::min<std::uint64_t>(pattern.size(), size - off), off);
  f.fsync();
  f.close();
  std::string new_name = segment_file_name(1, segno + 1'000'000, size);
  recycle_own(dir, old_name, new_name);
  return new_name;
}

// Segment i of series `se`, made fresh (or recycled) and opened for the commits.
File open_fresh(const BenchSettings& s, Series& se, SegNo i, const std::vector<char>& pattern) {
  progress(s, "write", se.name, static_cast<int>(i), s.segments);
  if (se.name == kRecycle) {
    se.current = make_recycled(s, se.dir, i, pattern);
  } else {
    se.current = segment_file_name(1, i, s.segment_size);
    CreateReport r = create_segment(se.dir, se.current, s.segment_size,
                                    AllocOptions{.method = se.method, .fallback = s.config.fallocate_fallback});
    se.used = std::string(to_string(r.alloc.used));
    se.note = r.alloc.fallback_reason;
    se.allocated = r.alloc.allocated_bytes;
  }
  File f = open_own(se.dir, se.current, open_flags(s.config.sync_method), &se.opened, &se.current_ours);
  if (!se.current_ours)
    throw make_error(EEXIST, "open", se.dir.path_of(se.current),
                     fmt::format("\"{}\" is not the segment walseg bench made there: another file was moved "
                                 "onto its name; it is left as it is",
                                 se.dir.path_of(se.current)));
  return f;
}

}  // namespace

std::vector<Row> bench_write(const BenchSettings& s, Scratch& scratch) {
  std::vector<Series> series;
  for (InitMethod m : s.methods) series.push_back(Series{std::string(to_string(m)), m, {}, {}, {}, {}, 0, {}});
  series.push_back(Series{kRecycle, InitMethod::kZeroWrite, {}, {}, "recycled segment", {}, 0, {}});
  for (auto& se : series) se.dir = phase_dir(scratch, "write", se.name);

  const std::uint64_t size = s.segment_size;
  const std::uint64_t bytes = std::min(s.write_bytes, size);
  std::vector<char> record(s.write_size, '\x5a');
  // A fresh segment of every kind first, then their commits in turn, one each, by the
  // library's loop (measure_loop.h): a burst of noise then lands on every method alike.
  std::vector<MeasureSeries> hooks;
  DeviceMeter meter(s.device_dir.empty() ? scratch.root() : s.device_dir, series.size());
  for (auto& se : series)
    hooks.push_back(MeasureSeries{
        .create = [&](int round, double*) { return open_fresh(s, se, static_cast<SegNo>(round) + 1, record); },
        .release =
            [&](int, File& f) {
              meter.leave();  // closing, removing and the next round's creations are walseg's
              if (f.is_open()) f.close();
              // Keeps the phase's disk use to one segment per method; only the file bench made
              // and measured (round 10 F2: a user's file moved onto the name was removed).
              // Linux has no unlink by inode: README, "What it cannot promise".
              if (se.current_ours && se.dir.names_file(se.current, se.opened)) se.dir.unlink(se.current, true);
            }});
  MeasurePlan plan{.rounds = s.segments, .commit_bytes = bytes, .record_bytes = s.write_size,
                   .sync = s.config.sync_method, .check = check_stop,
                   .around_commit = [&](std::size_t k, bool after) { after ? meter.end(k) : meter.begin(k); }};
  auto samples = measure_create_commit(hooks, plan);
  for (std::size_t k = 0; k < series.size(); ++k) series[k].us = std::move(samples[k].commit_us);
  std::vector<Row> rows;
  for (std::size_t k = 0; k < series.size(); ++k) {
    Series& se = series[k];
    Row row = latency_row("write", se.name, se.us, s.write_size);
    row.device = meter.figures(k, se.us.size(), se.us.size() * s.write_size);
    row.method_used = se.used;
    row.note = se.note;
    row.allocated_bytes = se.name == kRecycle ? size : se.allocated;
    row.reference = se.name == kRecycle;
    s.done(row);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace walseg::tool
