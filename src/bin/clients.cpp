// K committing clients (clients.h).
#include "clients.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

namespace walseg::tool {

using Clock = std::chrono::steady_clock;

ClientRun run_clients(WalWriter& w, std::size_t payload_bytes, int clients, std::uint64_t commits,
                      double seconds) {
  std::vector<std::byte> payload(payload_bytes, std::byte{0x5a});
  std::atomic<std::uint64_t> issued{0};
  std::mutex mu;
  ClientRun m;
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

}  // namespace walseg::tool
