// K committing clients (clients.h).
#include "clients.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

#include "walseg/error.h"

namespace walseg::tool {

using Clock = std::chrono::steady_clock;

namespace {

// Polls the flush position every millisecond; the clients' error path reports any failure.
class Checkpointer {
 public:
  Checkpointer(WalWriter& w, std::uint64_t segment_bytes) : w_(w), seg_(segment_bytes) {
    if (seg_ > 0) t_ = std::thread([this] { loop(); });
  }
  ~Checkpointer() {
    stop_ = true;
    if (t_.joinable()) t_.join();
  }
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

 private:
  void loop() {
    Lsn done = 0;
    while (!stop_) {
      Lsn flushed = w_.flushed_lsn();
      Lsn start = flushed - flushed % seg_;
      if (start > done && flushed - start >= seg_ / 4) {
        try {
          w_.truncate_before(start);
        } catch (const Error&) {
          return;  // the writer failed: the clients see and report it
        }
        done = start;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  WalWriter& w_;
  std::uint64_t seg_;
  std::atomic<bool> stop_{false};
  std::thread t_;
};

}  // namespace

ClientRun run_clients(WalWriter& w, std::size_t payload_bytes, int clients, std::uint64_t commits,
                      double seconds, std::uint64_t checkpoint_segment_bytes,
                      const std::function<bool()>& stop) {
  std::vector<std::byte> payload(payload_bytes, std::byte{0x5a});
  std::atomic<std::uint64_t> issued{0};
  std::mutex mu;
  ClientRun m;
  std::exception_ptr failure;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  auto t0 = Clock::now();
  Checkpointer ckpt(w, checkpoint_segment_bytes);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      std::vector<double> mine;
      try {
        auto more = [&] { return seconds > 0 ? Clock::now() < deadline : issued.fetch_add(1) < commits; };
        while (more() && !(stop && stop())) {
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

}  // namespace walseg::tool
