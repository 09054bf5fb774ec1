// walseg bench, phases `append` and `commit`: the WAL writer itself, end to end.
//
// append: one writer appends write_size records and flushes each (append + flush = one
// commit), into segments made by each init method and kept ready by the preallocator, once per
// io_method: the append-versus-preallocate question with real records and page headers.
// commit: K clients do the same concurrently; group commit lets one sync cover many commits.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "bench.h"
#include "walseg/wal.h"

namespace walseg::tool {
namespace {

using Clock = std::chrono::steady_clock;

struct Measured {
  std::vector<double> us;
  double seconds = 0;
};

// K clients commit until `commits` are done or `seconds` pass (whichever is set).
Measured run_clients(WalWriter& w, std::size_t payload_bytes, int clients, std::uint64_t commits,
                     double seconds) {
  std::vector<std::byte> payload(payload_bytes, std::byte{0x5a});
  std::atomic<std::uint64_t> issued{0};
  std::mutex mu;
  Measured m;
  std::exception_ptr failure;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      std::vector<double> mine;
      try {
        while (seconds > 0 ? Clock::now() < deadline : issued.fetch_add(1) < commits) {
          auto t = Clock::now();
          w.flush(w.append(payload));
          mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
        }
      } catch (...) {
        std::lock_guard lk(mu);
        if (!failure) failure = std::current_exception();
      }
      std::lock_guard lk(mu);
      m.us.insert(m.us.end(), mine.begin(), mine.end());
    });
  for (auto& t : threads) t.join();
  m.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (failure) std::rethrow_exception(failure);
  return m;
}

Config wal_config(const BenchSettings& s, InitMethod method, IoMethod io) {
  Config c = s.config;
  c.segment_size_bytes = s.segment_size;
  c.init_method = method;
  c.io_method = io;
  c.recycle = false;  // every segment is a new one made by the method under test
  return c;
}

Row make_row(const std::string& phase, const std::string& method, IoMethod io, Measured& m,
             std::size_t payload_bytes) {
  Row row;
  row.phase = phase;
  row.method = method;
  row.method_used = method;
  row.io = std::string(to_string(io));
  row.lat = summarize(m.us);
  row.ops_per_s = m.seconds > 0 ? static_cast<double>(row.lat.n) / m.seconds : 0;
  row.mb_per_s = m.seconds > 0 ? static_cast<double>(row.lat.n * payload_bytes) / m.seconds / 1e6 : 0;
  return row;
}

}  // namespace

std::vector<Row> bench_append(const BenchSettings& s, const std::string& root) {
  std::vector<Row> rows;
  const std::uint64_t commits = std::max<std::uint64_t>(1, s.write_bytes * static_cast<std::uint64_t>(s.segments) / s.write_size);
  for (IoMethod io : {IoMethod::kPwrite, IoMethod::kIoUring}) {
    for (InitMethod m : s.methods) {
      std::string name(to_string(m));
      progress(s, "append", fmt::format("{} {}", name, to_string(io)), 0, 1);
      std::string dir = fmt::format("{}/append/{}-{}", root, name, to_string(io));
      std::filesystem::remove_all(dir);
      Measured meas;
      std::string used;
      {
        auto wal = Wal::open(dir, wal_config(s, m, io));
        wal->manager().wait_ready(static_cast<std::size_t>(s.config.prealloc_segments), std::chrono::seconds(60));
        meas = run_clients(wal->writer(), s.write_size, 1, commits, 0);
        for (const auto& [method_used, n] : wal->manager().stats().created_by_method) used += (used.empty() ? "" : ",") + method_used;
      }
      std::filesystem::remove_all(dir);
      Row row = make_row("append", name, io, meas, s.write_size);
      row.method_used = used.empty() ? name : used;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::vector<Row> bench_commit(const BenchSettings& s, const std::string& root) {
  std::vector<Row> rows;
  for (int clients : s.clients) {
    for (IoMethod io : {IoMethod::kPwrite, IoMethod::kIoUring}) {
      progress(s, "commit", fmt::format("{} clients {}", clients, to_string(io)), 0, 1);
      std::string dir = fmt::format("{}/commit/{}-{}", root, clients, to_string(io));
      std::filesystem::remove_all(dir);
      Measured meas;
      std::string method;
      {
        Config c = wal_config(s, s.config.init_method, io);
        c.recycle = s.config.recycle;  // a steady workload: recycling as configured
        auto wal = Wal::open(dir, c);
        method = std::string(to_string(wal->manager().stats().method));
        wal->manager().wait_ready(static_cast<std::size_t>(c.prealloc_segments), std::chrono::seconds(60));
        meas = run_clients(wal->writer(), s.write_size, clients, 0, s.commit_seconds);
      }
      std::filesystem::remove_all(dir);
      Row row = make_row("commit", method, io, meas, s.write_size);
      row.clients = clients;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace walseg::tool
