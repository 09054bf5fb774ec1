// Checkpointer: a thread that retires a WAL's old segments while a benchmark writes, as
// PostgreSQL's checkpointer does at some point of its own: once the writer's flushed position
// is a quarter into a segment, every segment before that one is handed to
// WalWriter::truncate_before (recycled or removed by the segment manager). A quarter in, so
// that the retirement's directory fsync does not land on the boundary commit itself (a
// checkpoint is not synchronised with segment switches), and with walseg.recycle = on the
// steady state writes into recycled segments.
//
// Errors: the first error of truncate_before is stored and the thread stops retiring; the
// run reports it as its error by throw_if_failed() (it used to be dropped, or to end the
// program from a thread). Shared by run_clients (clients.h) and the bench's switch phase.
// Thread-safety: throw_if_failed and failed may be called from any thread. Lifetime: the
// writer must outlive the Checkpointer; the destructor stops and joins the thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>

#include "walseg/wal_writer.h"

namespace walseg::tool {

class Checkpointer {
 public:
  /// segment_bytes: the WAL's segment size; 0 starts no thread (nothing is ever retired).
  Checkpointer(WalWriter& w, std::uint64_t segment_bytes);
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  /// Whether a retirement failed (then throw_if_failed throws). Never throws.
  bool failed() const noexcept { return failed_.load(); }
  /// Rethrows the first error a retirement met (walseg::Error), if any.
  void throw_if_failed() const;

 private:
  void loop();
  WalWriter& w_;
  const std::uint64_t seg_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  std::exception_ptr error_;  ///< guarded by mu_
  std::thread t_;
};

}  // namespace walseg::tool
