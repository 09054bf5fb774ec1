// walseg bench, phase `write`: what a commit costs in a segment made by each method.
//
// Each commit is one write_size pwrite followed by the configured sync (fdatasync by default),
// the pattern of a WAL writer with one client. A segment made sparse or by fallocate makes the
// first write of each block also allocate or convert an unwritten extent, and the sync must
// journal that (case C09); a zero-written or recycled segment does not; a plain append (none)
// changes the file size with every commit. Commits go round-robin over the methods' segments.
#include <fcntl.h>

#include <chrono>
#include <cstring>

#include "bench.h"
#include "walseg/file.h"
#include "walseg/segment_install.h"
#include "walseg/segment_name.h"

namespace walseg::tool {
namespace {

constexpr const char* kRecycled = "recycled";

struct Series {
  std::string name;
  InitMethod method;
  Directory dir;
  std::vector<double> us;
  std::string used, note;
  std::uint64_t allocated = 0;
};

int open_flags(SyncMethod m) {
  switch (m) {
    case SyncMethod::kOpenDatasync: return O_RDWR | O_DSYNC;
    case SyncMethod::kOpenSync: return O_RDWR | O_SYNC;
    default: return O_RDWR;
  }
}

void sync(File& f, SyncMethod m) {
  if (m == SyncMethod::kFdatasync) f.fdatasync();
  else if (m == SyncMethod::kFsync) f.fsync();
  // open_datasync / open_sync: the write itself was synchronous.
}

// A segment's previous life for the recycled row: fully written with non-zero bytes, fsynced,
// then renamed to its new name, as PostgreSQL's recycling leaves it.
std::string make_recycled(const BenchSettings& s, Directory& dir, SegNo segno, const std::vector<char>& pattern) {
  std::uint64_t size = s.segment_size;
  std::string old_name = segment_file_name(1, segno, size);
  create_segment(dir, old_name, size, AllocOptions{.method = InitMethod::kZeroWrite, .fallback = s.config.fallocate_fallback});
  File f = File::open(dir.path_of(old_name), O_RDWR);
  for (std::uint64_t off = 0; off < size; off += pattern.size())
    f.pwrite_all(pattern.data(), std::min<std::uint64_t>(pattern.size(), size - off), off);
  f.fsync();
  f.close();
  std::string new_name = segment_file_name(1, segno + 1'000'000, size);
  recycle_segment(dir, old_name, new_name);
  return new_name;
}

}  // namespace

std::vector<Row> bench_write(const BenchSettings& s, Scratch& scratch) {
  std::vector<Series> series;
  for (InitMethod m : s.methods) series.push_back(Series{std::string(to_string(m)), m, {}, {}, {}, {}, 0});
  series.push_back(Series{kRecycled, InitMethod::kZeroWrite, {}, {}, kRecycled, {}, 0});
  for (auto& se : series) se.dir = phase_dir(scratch, "write", se.name);

  const std::uint64_t size = s.segment_size;
  const std::uint64_t bytes = std::min(s.write_bytes, size);
  std::vector<char> record(s.write_size, '\x5a');
  using Clock = std::chrono::steady_clock;
  for (SegNo i = 1; i <= static_cast<SegNo>(s.segments); ++i) {
    // A fresh segment of every kind first, then their commits in turn, one each: a burst of
    // noise from the rest of the machine then lands on every method alike.
    std::vector<std::pair<std::string, File>> files;
    for (auto& se : series) {
      progress(s, "write", se.name, static_cast<int>(i), s.segments);
      std::string name;
      if (se.name == kRecycled) {
        name = make_recycled(s, se.dir, i, record);
      } else {
        name = segment_file_name(1, i, size);
        CreateReport r = create_segment(se.dir, name, size, AllocOptions{.method = se.method, .fallback = s.config.fallocate_fallback});
        se.used = std::string(to_string(r.alloc.used));
        se.note = r.alloc.fallback_reason;
        se.allocated = r.alloc.allocated_bytes;
      }
      files.emplace_back(name, File::open(se.dir.path_of(name), open_flags(s.config.sync_method)));
    }
    for (std::uint64_t off = 0; off + s.write_size <= bytes; off += s.write_size) {
      check_stop();  // a segment's commits take seconds on a slow disk
      for (std::size_t k = 0; k < series.size(); ++k) {
        File& f = files[k].second;
        auto t0 = Clock::now();
        f.pwrite_all(record.data(), record.size(), off);
        sync(f, s.config.sync_method);
        series[k].us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
    }
    for (std::size_t k = 0; k < series.size(); ++k) {
      files[k].second.close();
      series[k].dir.unlink(files[k].first);  // keeps the phase's disk use to one segment per method
    }
  }
  std::vector<Row> rows;
  for (auto& se : series) {
    Row row = latency_row("write", se.name, se.us, s.write_size);
    row.method_used = se.used;
    row.note = se.note;
    row.allocated_bytes = se.name == kRecycled ? size : se.allocated;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace walseg::tool
