// Checkpointer (checkpointer.h).
#include "checkpointer.h"

#include <chrono>

namespace walseg::tool {

Checkpointer::Checkpointer(WalWriter& w, std::uint64_t segment_bytes) : w_(w), seg_(segment_bytes) {
  if (seg_ > 0) t_ = std::thread([this] { loop(); });
}

Checkpointer::~Checkpointer() {
  stop_ = true;
  if (t_.joinable()) t_.join();
}

void Checkpointer::throw_if_failed() const {
  std::lock_guard lk(mu_);
  if (error_) std::rethrow_exception(error_);
}

// Polls every millisecond: a checkpoint is not woken by the writer, and a millisecond is far
// below a segment's worth of commits.
void Checkpointer::loop() {
  Lsn done = 0;
  while (!stop_) {
    const Lsn flushed = w_.flushed_lsn();
    const Lsn start = flushed - flushed % seg_;
    if (start > done && flushed - start >= seg_ / 4) {
      try {
        w_.truncate_before(start);
      } catch (...) {
        std::lock_guard lk(mu_);
        error_ = std::current_exception();
        failed_ = true;
        return;  // the first error is the run's; retiring on after it would only add noise
      }
      done = start;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace walseg::tool
