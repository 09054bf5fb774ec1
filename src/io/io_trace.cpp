// Syscall trace and per-thread syscall counter (include/walseg/io_trace.h).
#include "walseg/io_trace.h"

#include <atomic>
#include <mutex>

namespace walseg::io_trace {
namespace {
std::mutex mu;
std::vector<Event> events;  // guarded by mu
std::atomic<bool> recording{false};
thread_local std::uint64_t syscalls = 0;
}  // namespace

void start() {
  std::lock_guard lk(mu);
  events.clear();
  recording.store(true);
}

std::vector<Event> stop() {
  std::lock_guard lk(mu);
  recording.store(false);
  return std::move(events);
}

void record(std::string_view op, std::string_view path, int result_errno) {
  if (!recording.load(std::memory_order_relaxed)) return;
  std::lock_guard lk(mu);
  events.push_back(Event{std::string(op), std::string(path), result_errno});
}

std::uint64_t thread_syscalls() { return syscalls; }
void count_syscalls(std::uint64_t n) { syscalls += n; }

}  // namespace walseg::io_trace
