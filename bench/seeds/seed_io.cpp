// walseg_seed_io: the two published experiments of the append-versus-preallocate argument,
// redone with walseg's own init methods (allocate_file, allocator.h) and its file layer, and
// counted at the block device (device_stats.h). Run by bench/seeds/mdev14425.sh and
// bench/seeds/pg2013_fallocate.sh, which make the filesystems and print the report.
//
//   walseg_seed_io mdev14425 --dir D --writers N --size BYTES --block BYTES
//                            --method posix_fallocate|none --sync none|block [--device-of D2]
//     MariaDB MDEV-14425 (2018): N writers at once, each writing its own file of --size in
//     --block writes, into a file preallocated by --method (none: appended). --sync block:
//     an fdatasync after every block (the WAL case); none: buffered, as in the thread, with one
//     fdatasync at the end so that the bytes reach the device and are counted. Prints, per
//     writer, `time`'s three lines, then the device's figures.
//   walseg_seed_io pg2013 --dir D --method zero_write|posix_fallocate|glibc_emulation
//                         --iterations 10 --size BYTES --write BYTES [--sync-every N]
//     PostgreSQL's 2013 thread: each iteration creates a file of --size by --method (fsync,
//     close), then rewrites it once in --write writes with an fdatasync every N writes (0: at
//     the end only), and removes it. Prints the thread's line
//     `method: classic. 10 open/close iterations, 10 rewrite in 22.6949s`, then the device's.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "walseg/allocator.h"
#include "walseg/device_stats.h"
#include "walseg/error.h"
#include "walseg/file.h"

namespace {

using namespace walseg;
using Clock = std::chrono::steady_clock;

InitMethod method_named(const std::string& name) {
  for (std::size_t i = 0; i < kInitMethodNames.size(); ++i)
    if (kInitMethodNames[i] == name) return static_cast<InitMethod>(i);
  throw std::invalid_argument("unknown init method " + name);
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

std::string time_format(double s) {  // as bash's `time`: 0m6.345s
  const int m = static_cast<int>(s / 60);
  return fmt::format("{}m{:.3f}s", m, s - 60.0 * m);
}

// A new file made by `method` (walseg's allocator; none: left empty). Returns the method used.
std::string make_file(File& f, InitMethod method, std::uint64_t size) {
  if (method == InitMethod::kNone) return "none";
  AllocReport r = allocate_file(f, size, AllocOptions{.method = method, .fallback = FallbackMethod::kGlibcEmulation});
  return std::string(to_string(r.used));
}

// Device counters around a run, or why there are none.
struct DeviceRun {
  std::optional<DeviceCounters> c;
  std::string why;
  DeviceSample before;
  explicit DeviceRun(const std::string& dir) {
    BlockDevice d = find_block_device(dir);
    if (d.name.empty()) why = d.why_not;
    else c.emplace(d);
    if (c) before = c->sample();
  }
  void print(std::uint64_t asked) const {
    if (!c) {
      fmt::print("device: not measurable ({})\n", why);
      return;
    }
    const DeviceDelta d = c->sample() - before;
    fmt::print("device {}: {} bytes written for {} asked, write amplification {:.3f}, flushes {}, journal commits {}, "
               "bytes read {}\n",
               c->device().name, d.bytes_written, asked, static_cast<double>(d.bytes_written) / static_cast<double>(asked),
               d.flushes ? std::to_string(*d.flushes) : "null",
               d.journal_commits ? std::to_string(*d.journal_commits) : "null", d.bytes_read);
  }
};

struct WriterTimes {
  double real = 0, user = 0, sys = 0, alloc = 0;
  std::string used;
};

void one_writer(const std::string& path, InitMethod method, std::uint64_t size, std::uint64_t block, bool sync_each,
                std::latch& go, WriterTimes& out) {
  std::vector<char> buf(block, '\x5a');
  go.arrive_and_wait();
  rusage r0{}, r1{};
  ::getrusage(RUSAGE_THREAD, &r0);
  const auto t0 = Clock::now();
  File f = File::open(path, O_RDWR | O_CREAT | O_EXCL);
  out.used = make_file(f, method, size);
  out.alloc = std::chrono::duration<double>(Clock::now() - t0).count();
  for (std::uint64_t off = 0; off + block <= size; off += block) {
    f.pwrite_all(buf.data(), buf.size(), off);
    if (sync_each) f.fdatasync();
  }
  if (!sync_each) f.fdatasync();
  f.close();
  out.real = std::chrono::duration<double>(Clock::now() - t0).count();
  ::getrusage(RUSAGE_THREAD, &r1);
  out.user = seconds(r1.ru_utime) - seconds(r0.ru_utime);
  out.sys = seconds(r1.ru_stime) - seconds(r0.ru_stime);
}

void run_mdev14425(const std::string& dir, const std::string& dev_dir, int writers, std::uint64_t size,
                   std::uint64_t block, const std::string& method, const std::string& sync) {
  const InitMethod m = method_named(method);
  DeviceRun dev(dev_dir.empty() ? dir : dev_dir);
  std::vector<WriterTimes> times(static_cast<std::size_t>(writers));
  std::latch go(writers);
  std::vector<std::jthread> threads;
  std::vector<std::exception_ptr> errors(times.size());
  for (std::size_t i = 0; i < times.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        one_writer(fmt::format("{}/seed.{}", dir, i), m, size, block, sync == "block", go, times[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  threads.clear();  // joins
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  for (std::size_t i = 0; i < times.size(); ++i)
    fmt::print("writer {} ({} used {}, allocation {:.3f}s):\nreal\t{}\nuser\t{}\nsys\t{}\n", i + 1, method,
               times[i].used, times[i].alloc, time_format(times[i].real), time_format(times[i].user),
               time_format(times[i].sys));
  dev.print(size / block * block * static_cast<std::uint64_t>(writers));
  for (std::size_t i = 0; i < times.size(); ++i) ::unlink(fmt::format("{}/seed.{}", dir, i).c_str());
}

void run_pg2013(const std::string& dir, const std::string& dev_dir, const std::string& method, int iterations,
                std::uint64_t size, std::uint64_t write, int sync_every) {
  const InitMethod m = method_named(method);
  const std::string path = dir + "/seed.pg2013";
  std::vector<char> buf(write, '\x5a');
  DeviceRun dev(dev_dir.empty() ? dir : dev_dir);
  std::string used;
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    File f = File::open(path, O_RDWR | O_CREAT | O_EXCL);
    used = make_file(f, m, size);
    f.fsync();
    f.close();
    File w = File::open(path, O_RDWR);
    int n = 0;
    for (std::uint64_t off = 0; off + write <= size; off += write) {
      w.pwrite_all(buf.data(), buf.size(), off);
      if (sync_every > 0 && ++n % sync_every == 0) w.fdatasync();
    }
    w.fdatasync();
    w.close();
    ::unlink(path.c_str());
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  // The thread called zero-filling "classic"; the other names are walseg's.
  fmt::print("method: {}. {} open/close iterations, {} rewrite in {:.4f}s (walseg method {}, used {})\n",
             m == InitMethod::kZeroWrite ? "classic" : method, iterations, iterations, s, method, used);
  // Asked: what the rewrites wrote (creation's zeros are the method's own cost).
  dev.print(size / write * write * static_cast<std::uint64_t>(iterations));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("walseg_seed_io: MDEV-14425's and PostgreSQL 2013's experiments with walseg's init methods");
  app.require_subcommand(1);
  std::string dir, dev_dir, method, sync = "none";
  int writers = 1, iterations = 10, sync_every = 1;
  std::uint64_t size = 0, block = 2048, write = 8192;
  auto* a = app.add_subcommand("mdev14425", "N writers, 2 KiB blocks, preallocated or appended");
  auto* b = app.add_subcommand("pg2013", "create, then rewrite in 8 kB writes, per init method");
  for (auto* c : {a, b}) {
    c->add_option("--dir", dir, "directory to write in")->required()->check(CLI::ExistingDirectory);
    c->add_option("--device-of", dev_dir, "read the device counters of this directory's filesystem instead");
    c->add_option("--method", method, "walseg init method")->required();
    c->add_option("--size", size, "bytes per file")->required();
  }
  a->add_option("--writers", writers, "concurrent writers")->check(CLI::Range(1, 64));
  a->add_option("--block", block, "bytes per write (default 2048)");
  a->add_option("--sync", sync, "none (buffered, one fdatasync at the end) or block")->check(CLI::IsMember({"none", "block"}));
  b->add_option("--iterations", iterations, "creations and rewrites (default 10)")->check(CLI::Range(1, 1000));
  b->add_option("--write", write, "bytes per rewrite write (default 8192)");
  b->add_option("--sync-every", sync_every, "fdatasync every N writes of a rewrite (0: at its end only; default 1)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (*a) run_mdev14425(dir, dev_dir, writers, size, block, method, sync);
    else run_pg2013(dir, dev_dir, method, iterations, size, write, sync_every);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "walseg_seed_io: %s\n", e.what());
    return 1;
  }
  return 0;
}
