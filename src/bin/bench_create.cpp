// walseg bench, phase `create`: the cost of one durable segment creation per method.
//
// Methods are measured round-robin by the library's loop (measure_loop.h: segment 1 of every
// method, then segment 2 of every method, ...) so that drift in the machine's load or the device's state spreads over all
// rows instead of favouring whichever ran first. Every row uses the same installation
// protocol (temp file, fill, fsync, no-replace rename, directory fsync); only the fill
// differs, so the PostgreSQL reference rows compare fills, not protocols.
#include <sys/uio.h>

#include <map>

#include <fmt/format.h>

#include "bench.h"
#include "walseg/measure_loop.h"
#include "walseg/segment_install.h"
#include "walseg/segment_name.h"

namespace walseg::tool {
namespace {

constexpr std::uint64_t kPgBlockBytes = 8192;  // XLOG_BLCKSZ
constexpr int kPgIovecs = 32;                   // PG_IOV_MAX in PostgreSQL 14 and later

alignas(4096) const char kZeroBlock[kPgBlockBytes] = {};

// PostgreSQL 13 and older: one 8 kB write() after another (pwrite here, same cost).
void pg13_fill(File& f, std::uint64_t size, AllocReport& r) {
  for (std::uint64_t off = 0; off < size; off += kPgBlockBytes) f.pwrite_all(kZeroBlock, kPgBlockBytes, off);
  r.used = InitMethod::kZeroWrite;
}

// PostgreSQL 14 and later (15 is the extension's): pwritev of 32 iovecs, each the same 8 kB zero
// block (XLogFileInitInternal; pg_pwrite_zeros since 16).
void pg15_fill(File& f, std::uint64_t size, AllocReport& r) {
  struct iovec iov[kPgIovecs];
  for (auto& v : iov) v = {const_cast<char*>(kZeroBlock), kPgBlockBytes};
  constexpr std::uint64_t kChunk = kPgBlockBytes * kPgIovecs;
  for (std::uint64_t off = 0; off < size; off += kChunk) {
    int n = static_cast<int>(std::min(kChunk, size - off) / kPgBlockBytes);
    f.pwritev_all(iov, n, off);
  }
  r.used = InitMethod::kZeroWrite;
}

struct Series {
  std::string name;
  bool reference = false;
  std::optional<InitMethod> method;
  CustomFill fill;
  std::string ref_used;  ///< a reference's `used`: how PostgreSQL fills
  Directory dir;
  std::vector<double> us;
  std::uint64_t allocated = 0, syscalls = 0;
  std::string used, note;
};

// Segment i of series `se` (of n per series), its time in *own_us: the install's own clock.
void create_one(const BenchSettings& s, Series& se, SegNo i, SegNo n, double* own_us) {
  const std::uint64_t size = s.segment_size;
  progress(s, "create", se.name, static_cast<int>(i), s.segments);
  if (se.name == kRecycle) {
    InstallTimes t = recycle_own(se.dir, segment_file_name(1, i, size), segment_file_name(1, n + i, size));
    *own_us = static_cast<double>(t.total_us);
    se.used = "rename, no fill";  // what the reference is, in the `used` column
    se.allocated = size;
    return;
  }
  AllocOptions opts{.method = se.method.value_or(InitMethod::kZeroWrite), .fallback = s.config.fallocate_fallback};
  CreateReport r = create_segment(se.dir, segment_file_name(1, i, size), size, opts, se.fill);
  *own_us = static_cast<double>(r.times.total_us);
  se.allocated = r.alloc.allocated_bytes;
  se.syscalls = r.syscalls;
  se.used = se.reference ? se.ref_used : std::string(to_string(r.alloc.used));
  se.note = r.alloc.fallback_reason;
  if (r.alloc.direct_io) se.note += se.note.empty() ? "O_DIRECT" : "; O_DIRECT";
}

}  // namespace

Directory phase_dir(Scratch& scratch, const std::string& phase, const std::string& method) {
  const std::string rel = phase + "/" + method;
  scratch.remove(rel);  // a phase run twice (--phases create,create) starts afresh
  return scratch.make_dir(rel);
}

std::vector<Row> bench_create(const BenchSettings& s, Scratch& scratch) {
  std::vector<Series> series;
  for (InitMethod m : s.methods) series.push_back(Series{std::string(to_string(m)), false, m, {}, {}, {}, {}, 0, 0, {}, {}});
  series.push_back(Series{kPg13Reference, true, std::nullopt, pg13_fill, "zeros, 8kB writes", {}, {}, 0, 0, {}, {}});
  series.push_back(Series{kPg15Reference, true, std::nullopt, pg15_fill, "zeros, 256kB pwritev", {}, {}, 0, 0, {}, {}});
  series.push_back(Series{kRecycle, true, std::nullopt, {}, {}, {}, {}, 0, 0, {}, {}});
  for (auto& se : series) se.dir = phase_dir(scratch, "create", se.name);

  const std::uint64_t size = s.segment_size;
  const SegNo n = static_cast<SegNo>(s.segments);
  // Recycling needs complete, written segments to rename: make them first, untimed.
  Series& rec = series.back();
  for (SegNo i = 1; i <= n; ++i) {
    check_stop();
    create_segment(rec.dir, segment_file_name(1, i, size), size, AllocOptions{.method = InitMethod::kZeroWrite, .fallback = s.config.fallocate_fallback});
  }

  std::vector<MeasureSeries> hooks;
  for (auto& se : series)
    hooks.push_back(MeasureSeries{.create = [&](int round, double* own_us) {
                                    create_one(s, se, static_cast<SegNo>(round) + 1, n, own_us);
                                    return File();
                                  },
                                  .release = {}});
  auto samples = measure_create_commit(hooks, MeasurePlan{.rounds = s.segments, .check = check_stop});
  for (std::size_t k = 0; k < series.size(); ++k) series[k].us = std::move(samples[k].create_us);
  std::vector<Row> rows;
  for (auto& se : series) {
    Row row = latency_row("create", se.name, se.us, size);
    row.method_used = se.used;
    row.note = se.note;
    row.reference = se.reference;
    row.allocated_bytes = se.allocated;
    if (se.name != kRecycle) row.syscalls = se.syscalls;  // a rename is not counted
    s.done(row);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace walseg::tool
