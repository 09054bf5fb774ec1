// K committing clients (clients.h).
#include "clients.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "checkpointer.h"
#include "walseg/error.h"

namespace walseg::tool {

using Clock = std::chrono::steady_clock;

namespace {

// Writes the tag (clients.h) into the first bytes of `payload`, as far as it reaches.
void tag_payload(std::vector<std::byte>& payload, std::uint64_t run, std::uint32_t client, std::uint64_t seq) {
  std::byte tag[kPayloadTagBytes];
  for (int i = 0; i < 8; ++i) tag[i] = static_cast<std::byte>(run >> (8 * i));
  for (int i = 0; i < 4; ++i) tag[8 + i] = static_cast<std::byte>(client >> (8 * i));
  for (int i = 0; i < 8; ++i) tag[12 + i] = static_cast<std::byte>(seq >> (8 * i));
  std::memcpy(payload.data(), tag, std::min(payload.size(), kPayloadTagBytes));
}

}  // namespace

void AckLog::line(const std::string& text) {
  std::lock_guard g(mu_);
  if (failed_)
    throw file_error(EIO, "write to", file_.path(), "; an earlier line could not be written, so none follows it");
  struct stat st{};
  const off_t before = ::fstat(file_.fd(), &st) == 0 ? st.st_size : -1;
  ssize_t r;
  do {
    r = ::write(file_.fd(), text.data(), text.size());
  } while (r < 0 && errno == EINTR);
  if (r >= 0 && static_cast<std::size_t>(r) == text.size()) return;
  const int err = r < 0 ? errno : ENOSPC;
  failed_ = true;
  // A torn line is cut off: the log ends with the last whole acknowledgement.
  std::string cut;
  if (r > 0 && (before < 0 || ::ftruncate(file_.fd(), before) != 0))
    cut = fmt::format("; its last line is torn ({} of {} bytes)", r, text.size());
  if (r < 0) throw file_error(err, "write to", file_.path(), cut);  // ENOSPC, EIO: the run's error
  throw file_error(err, "write to", file_.path(), fmt::format("; wrote {} of {} bytes{}", r, text.size(), cut));
}

void AckLog::start(std::uint64_t run, Lsn resume_lsn, int clients) {
  line(fmt::format("start {} {} {}\n", run, resume_lsn, clients));
}

void AckLog::ack(std::uint64_t run, int client, std::uint64_t seq, Lsn end_lsn) {
  line(fmt::format("ack {} {} {} {}\n", run, client, seq, end_lsn));
}

ClientRun run_clients(WalWriter& w, std::size_t payload_bytes, int clients, std::uint64_t commits,
                      double seconds, std::uint64_t checkpoint_segment_bytes, AckLog* ack_log,
                      const std::function<bool()>& stop, bool rethrow) {
  std::atomic<std::uint64_t> issued{0};
  std::mutex mu;
  ClientRun m;
  m.run_id = std::random_device{}() | static_cast<std::uint64_t>(std::random_device{}()) << 32;
  if (ack_log != nullptr) ack_log->start(m.run_id, w.insert_lsn(), clients);
  std::exception_ptr failure;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  auto t0 = Clock::now();
  Checkpointer ckpt(w, checkpoint_segment_bytes);
  std::vector<std::thread> threads;
  // A client that could not start stops the others (a joinable std::thread destroyed would end
  // the process: break-it round 30, under ulimit -u).
  std::atomic<bool> not_started{false};
  auto start = [&](int c) {
    threads.emplace_back([&, c] {
      std::vector<double> mine;
      try {
        std::vector<std::byte> payload(payload_bytes, kPayloadFill);
        // With a time limit, each client commits at least once: the threads may start past a
        // deadline a millisecond away (break-it round 35: --seconds 1e-3 ran 0 commits).
        auto more = [&](std::uint64_t seq) {
          return seconds > 0 ? seq == 0 || Clock::now() < deadline : issued.fetch_add(1) < commits;
        };
        // A failed checkpoint ends the run: its error is the run's (below).
        for (std::uint64_t seq = 0; more(seq) && !not_started && !ckpt.failed() && !(stop && stop()); ++seq) {
          auto t = Clock::now();
          tag_payload(payload, m.run_id, static_cast<std::uint32_t>(c), seq);
          Lsn end = w.append(payload);
          w.flush(end);
          mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
          if (ack_log != nullptr) ack_log->ack(m.run_id, c, seq, end);
        }
      } catch (...) {
        std::lock_guard lk(mu);
        if (!failure) failure = std::current_exception();
      }
      std::lock_guard lk(mu);
      try {
        m.us.insert(m.us.end(), mine.begin(), mine.end());
      } catch (...) {  // out of memory for the latencies: the run's error, not the process's end
        if (!failure) failure = std::current_exception();
      }
    });
  };
  for (int c = 0; c < clients; ++c) {
    try {
      start(c);
    } catch (...) {
      not_started = true;
      for (auto& t : threads) t.join();
      throw;
    }
  }
  for (auto& t : threads) t.join();
  m.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  // A client's error first: when the writer failed, the checkpointer met the same one.
  if (!failure) {
    try {
      ckpt.throw_if_failed();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  if (failure && rethrow) std::rethrow_exception(failure);
  m.failure = failure;
  return m;
}

}  // namespace walseg::tool
