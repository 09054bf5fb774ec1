// walseg bench, phases `append` and `commit`: the WAL writer itself, end to end.
//
// append: one writer appends write_size records and flushes each (append + flush = one
// commit), into segments made by each init method and kept ready by the preallocator, once per
// io_method: the append-versus-preallocate question with real records and page headers.
// commit: K clients do the same concurrently; group commit lets one sync cover many commits.
// A checkpointer retires old segments as the run goes, so with walseg.recycle = on (the
// default) the steady state writes into recycled segments, as a PostgreSQL server does.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "bench.h"
#include "bench_space.h"
#include "clients.h"
#include "walseg/wal.h"

namespace walseg::tool {
namespace {

using Clock = std::chrono::steady_clock;

// Stops the clients of run_clients at a stop signal; the phase then throws by check_stop().
bool stop_requested() { return stop_signal() != 0; }

Config wal_config(const BenchSettings& s, InitMethod method, IoMethod io) {
  Config c = s.config;
  c.segment_size_bytes = s.segment_size;
  c.init_method = method;
  c.io_method = io;
  c.recycle = false;  // every segment is a new one made by the method under test
  return c;
}

}  // namespace

std::size_t wait_ready_or_stop(SegmentManager& m, std::size_t n, std::chrono::seconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto step = Clock::now();
    const std::size_t ready = m.wait_ready(n, std::chrono::milliseconds(100));
    // Short well before the step's end: the preallocator failed, which the caller reports.
    const auto now = Clock::now();
    if (ready >= n || now >= deadline || now - step < std::chrono::milliseconds(90)) return ready;
    check_stop();
  }
}

std::vector<Row> bench_append(const BenchSettings& s, Scratch& scratch) {
  std::vector<Row> rows;
  const std::uint64_t commits = std::max<std::uint64_t>(1, s.write_bytes * static_cast<std::uint64_t>(s.segments) / s.write_size);
  for (IoMethod io : {IoMethod::kPwrite, IoMethod::kIoUring}) {
    for (InitMethod m : s.methods) {
      std::string name(to_string(m));
      progress(s, "append", fmt::format("{} {}", name, to_string(io)), 0, 1);
      const std::string rel = fmt::format("append/{}-{}", name, to_string(io));
      scratch.remove(rel);
      Directory made = scratch.make_dir(rel);
      const std::string dir = made.path();
      ClientRun meas;
      DeviceMeter meter(s.device_dir.empty() ? dir : s.device_dir, 1);
      std::string used;
      std::uint64_t created_while = 0;
      {
        // Every segment the run writes is made before it starts, and none after: this phase
        // measures writing into what each method leaves, and the cost of making segments while
        // writing is the `switch` phase's subject (a fill running here doubled the disk's work,
        // which the fio and pg_test_fsync references of bench/append_vs_fio.sh never do).
        // walseg.max_size is what stops the preallocator: with it any larger, the pool is
        // topped up to walseg.prealloc_segments ahead as the writer moves on.
        Config c = wal_config(s, m, io);
        const std::uint64_t ahead = append_segments_ahead(s, c.block_size_bytes);
        c.prealloc_segments = static_cast<int>(ahead);
        c.max_size_bytes = ahead * s.segment_size;  // the first segment written is one of them
        c.min_size_bytes = std::min(c.min_size_bytes, c.max_size_bytes);  // unused: no recycling
        auto wal = Wal::open(std::move(made), c);
        const std::size_t ready = wait_ready_or_stop(wal->manager(), ahead, std::chrono::seconds(120));
        if (ready < ahead) {
          wal->manager().throw_if_failed();  // the preallocator's own error (ENOSPC, ...) first
          throw Error(ETIMEDOUT, "prepare", dir,
                      fmt::format("bench append: only {} of {} segments were ready in \"{}\" after 120 s",
                                  ready, ahead, dir));
        }
        const std::uint64_t created_before = wal->manager().stats().create.count;
        // A tenth of a second of nothing first: what the device writes then is another's.
        meter.quiet_check(std::chrono::milliseconds(100));
        meter.begin(0);
        meas = run_clients(wal->writer(), s.write_size, 1, commits, 0, 0, nullptr, stop_requested);
        meter.end(0);
        check_stop();
        created_while = wal->manager().stats().create.count - created_before;
        for (const auto& [method_used, n] : wal->manager().stats().created_by_method) used += (used.empty() ? "" : ",") + method_used;
      }
      scratch.remove(rel);
      Row row = latency_row("append", name, meas.us, s.write_size, meas.seconds);
      row.io = std::string(to_string(io));
      row.method_used = used.empty() ? name : used;
      row.created_while_measuring = created_while;
      row.device = meter.figures(0, meas.us.size(), meas.us.size() * s.write_size);
      if (created_while > 0)
        row.device.note += fmt::format("{}{} segments were made during the commits and are counted", row.device.note.empty() ? "" : "; ", created_while);
      s.done(row);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::vector<Row> bench_commit(const BenchSettings& s, Scratch& scratch) {
  std::vector<Row> rows;
  for (int clients : s.clients) {
    for (IoMethod io : {IoMethod::kPwrite, IoMethod::kIoUring}) {
      progress(s, "commit", fmt::format("{} clients {}", clients, to_string(io)), 0, 1);
      const std::string rel = fmt::format("commit/{}-{}", clients, to_string(io));
      scratch.remove(rel);
      Directory made = scratch.make_dir(rel);
      ClientRun meas;
      std::string method;
      {
        Config c = wal_config(s, s.config.init_method, io);
        c.recycle = s.config.recycle;  // a steady workload: recycling as configured
        auto wal = Wal::open(std::move(made), c);
        method = std::string(to_string(wal->manager().stats().method));
        wait_ready_or_stop(wal->manager(), static_cast<std::size_t>(c.prealloc_segments),
                           std::chrono::seconds(60));
        meas = run_clients(wal->writer(), s.write_size, clients, 0, s.commit_seconds, c.segment_size_bytes, nullptr,
                           stop_requested);
        check_stop();
      }
      scratch.remove(rel);
      Row row = latency_row("commit", method, meas.us, s.write_size, meas.seconds);
      row.io = std::string(to_string(io));
      row.clients = clients;
      s.done(row);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace walseg::tool
