// The measuring half of the boundary (bridge.h): filesystem facts for walseg_fs_info() and
// the create and write phases for walseg_bench(), both in scratch directories that are
// removed whatever happens. No PostgreSQL header here; entry points are noexcept.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bridge.h"
#include "bridge_internal.h"
#include "walseg/auto_method.h"
#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/made_files.h"
#include "walseg/free_space.h"
#include "walseg/fs_info.h"
#include "walseg/measure_loop.h"
#include "walseg/segment_install.h"
#include "walseg/segment_name.h"

namespace {

using walseg::bridge::copy_text;
using walseg::bridge::set_error;
using walseg::bridge::set_bench_stats;

// 1 when fallocate(2) reserves space in `dir`, 0 when the filesystem says "not supported"
// (the errnos of DESIGN.md invariant 2), -1 with a note for anything else.
int test_fallocate(walseg::Directory& dir, char* note, std::size_t len) {
  const std::string name = "fallocate_test";
  walseg::File f = walseg::File::open_at(dir, name, O_RDWR | O_CREAT | O_EXCL, 0600);
  const struct stat st = f.stat();
  int e = f.try_fallocate(0, 0, 64 * 1024);
  f.close();
  if (dir.names_file(name, st)) dir.unlink(name, true);  // only the file made here
  if (e == 0) return 1;
  if (e == EOPNOTSUPP || e == ENOSYS || e == EINVAL) return 0;
  copy_text(note, len, fmt::format("fallocate test failed: {}", walseg::errno_text(e)));
  return -1;
}

// Removes the segment `name` only while it is the file this backend made (made_files, started
// by ScratchDir): one moved onto the name meanwhile is someone's (break-it round 10 F2c).
void unlink_if_made(walseg::Directory& dir, const std::string& name) {
  struct stat st{};
  if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && walseg::made_files::made(dir.fd(), name, st))
    dir.unlink(name, true);
}

struct BenchInput {
  std::vector<walseg::InitMethod> methods;
  std::uint64_t segment_size;
  int n;
  walseg::FallbackMethod fallback;
  WalsegCancel cancel;

  // Options for one creation by `method`; the fill looks at the cancel flags every chunk.
  walseg::AllocOptions options(walseg::InitMethod method) const {
    walseg::AllocOptions o{.method = method, .fallback = fallback};
    o.on_progress = [c = cancel](std::uint64_t, std::uint64_t) { walseg::bridge::check_cancel(c); };
    return o;
  }
};

// Phase create: n durable creations per method, methods interleaved so that load changes
// spread over all of them (measure_loop.h). Row i of `rows` belongs to methods[i].
void run_create(walseg::Directory& dir, const BenchInput& in, WalsegBenchRow* rows) {
  std::vector<walseg::MeasureSeries> series;
  std::uint64_t next = 1;
  for (std::size_t m = 0; m < in.methods.size(); ++m)
    series.push_back(walseg::MeasureSeries{
        .create =
            [&, m](int, double* own_us) {
              std::string name = walseg::segment_file_name(1, next++, in.segment_size);
              walseg::CreateReport r =
                  walseg::create_segment(dir, name, in.segment_size, in.options(in.methods[m]));
              *own_us = static_cast<double>(r.times.total_us);  // as `walseg bench` times it
              rows[m].method_used = static_cast<int>(r.alloc.used);
              rows[m].allocated_bytes = r.alloc.allocated_bytes;
              unlink_if_made(dir, name);
              return walseg::File();
            },
        .release = {}});
  auto samples = walseg::measure_create_commit(
      series, walseg::MeasurePlan{.rounds = in.n, .check = [&] { walseg::bridge::check_cancel(in.cancel); }});
  for (std::size_t m = 0; m < in.methods.size(); ++m) set_bench_stats(&rows[m], samples[m].create_us);
}

// Phase write: per method one new segment, then commits (pwrite + fdatasync) into them, one
// per segment in turn (measure_loop.h).
void run_write(walseg::Directory& dir, const BenchInput& in, WalsegBenchRow* rows) {
  std::vector<walseg::MeasureSeries> series;
  std::vector<struct stat> opened(in.methods.size());
  for (std::size_t m = 0; m < in.methods.size(); ++m) {
    std::string name = walseg::segment_file_name(2, m + 1, in.segment_size);
    series.push_back(walseg::MeasureSeries{
        .create =
            [&, m, name](int, double*) {
              walseg::CreateReport r =
                  walseg::create_segment(dir, name, in.segment_size, in.options(in.methods[m]));
              rows[m].method_used = static_cast<int>(r.alloc.used);
              // Through the scratch directory, never through a link (break-it round 10 F2c), and
              // only the file made here (round 11 F2b: one moved onto the name during the
              // install's directory fsync was overwritten with the commits).
              walseg::File f = walseg::File::open_at(dir, name, O_RDWR | O_NOFOLLOW);
              opened[m] = f.stat();
              // What the method reserved, before the commits write into it (the new-user trial:
              // taken after them, a sparse file's 1MB of commits read as the method's).
              rows[m].allocated_bytes = static_cast<std::uint64_t>(opened[m].st_blocks) * 512;
              if (opened[m].st_nlink != 1 || !walseg::made_files::made(dir.fd(), name, opened[m]))
                throw walseg::make_error(EEXIST, "open", dir.path_of(name),
                                         fmt::format("\"{}\" is not the segment walseg_bench() made there: "
                                                     "another file was moved onto its name; it is left as it is",
                                                     dir.path_of(name)));
              return f;
            },
        .release =
            [&, m, name](int, walseg::File& f) {
              if (f.is_open()) f.close();
              // Only the segment measured: a file moved onto the name meanwhile is someone's.
              if (dir.names_file(name, opened[m])) dir.unlink(name, true);
            }});
  }
  auto samples = walseg::measure_create_commit(
      series, walseg::MeasurePlan{.commit_bytes = std::min<std::uint64_t>(in.segment_size, WALSEG_BENCH_WRITE_BYTES),
                                  .record_bytes = WALSEG_BENCH_COMMIT_BYTES,
                                  .check = [&] { walseg::bridge::check_cancel(in.cancel); }});
  for (std::size_t m = 0; m < in.methods.size(); ++m) set_bench_stats(&rows[m], samples[m].commit_us);
}

}  // namespace

extern "C" {

static_assert(WALSEG_FS_PROBE_BYTES >= std::size(walseg::kCandidateOrder) * walseg::kProbeFileBytes + 64 * 1024,
              "walseg_fs_facts' probes hold more than WALSEG_FS_PROBE_BYTES");

bool walseg_fs_facts(const char* path, const char* no_probe, int fallback, WalsegCancel cancel, WalsegFsFacts* out,
                     WalsegErr* err) noexcept {
  try {
    *out = WalsegFsFacts{};
    walseg::FsInfo info = walseg::fs_info(path);
    copy_text(out->fs_type, sizeof out->fs_type, info.type_name);
    copy_text(out->mount_point, sizeof out->mount_point, info.mount_point);
    out->block_size = info.block_size;
    out->free_bytes = info.free_bytes;
    out->copy_on_write = info.copy_on_write;
    out->fallocate_supported = -1;
    out->auto_method = -1;
    if (no_probe != nullptr) {
      copy_text(out->auto_reason, sizeof out->auto_reason, no_probe);
      return true;
    }
    // The two tests write, so a read-only or foreign directory gives facts without them.
    try {
      walseg::bridge::ScratchDir scratch(path, "facts");
      out->fallocate_supported = test_fallocate(scratch.dir(), out->note, sizeof out->note);
    } catch (const walseg::bridge::Canceled&) {
      throw;
    } catch (const std::exception& e) {
      copy_text(out->note, sizeof out->note, e.what());
    }
    WalsegErr auto_err{};
    if (!walseg_resolve_auto(path, fallback, true, cancel, &out->auto_method, out->auto_reason,
                             sizeof out->auto_reason, &auto_err)) {
      if (auto_err.canceled) throw walseg::bridge::Canceled();
      out->auto_method = -1;
      copy_text(out->auto_reason, sizeof out->auto_reason, auto_err.message);
    }
    return true;
  } catch (...) {
    set_error(err);
    return false;
  }
}

bool walseg_lib_bench(const char* dir, const int* methods, int nmethods, uint64_t segment_size, int n,
                  int fallback, uint64_t margin_bytes, WalsegCancel cancel, WalsegBenchRow* rows,
                  WalsegErr* err) noexcept {
  try {
    walseg::check_segment_size(segment_size);
    if (n < 1 || nmethods < 1)
      throw walseg::make_error(EINVAL, "bench", dir, "nothing to measure");
    BenchInput in{{}, segment_size, n, static_cast<walseg::FallbackMethod>(fallback), cancel};
    for (int i = 0; i < nmethods; ++i) {
      if (methods[i] < 0 || methods[i] >= WALSEG_METHOD_AUTO)
        throw walseg::make_error(EINVAL, "bench", dir, fmt::format("invalid method {}", methods[i]));
      in.methods.push_back(static_cast<walseg::InitMethod>(methods[i]));
    }
    for (int i = 0; i < 2 * nmethods; ++i) {
      rows[i] = WalsegBenchRow{};
      rows[i].method = methods[i % nmethods];
      rows[i].write_phase = i >= nmethods;
    }
    walseg::require_free_space("walseg_bench", dir, walseg::fs_info(dir).free_bytes,
                               walseg::bench_peak_bytes(in.methods.size(), segment_size), margin_bytes,
                               "PostgreSQL's WAL (max_wal_size)");
    walseg::bridge::ScratchDir scratch(dir, "bench");
    run_create(scratch.dir(), in, rows);
    run_write(scratch.dir(), in, rows + nmethods);
    return true;
  } catch (...) {
    set_error(err);
    return false;
  }
}

}  // extern "C"
