// Internal to src/wal: the two ways the WAL writer puts pages into a segment file.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "walseg/config.h"
#include "walseg/file.h"
#include "walseg/wal_writer.h"

namespace walseg {

/// One contiguous piece of a write: `len` bytes from `data` to `offset` in the file.
/// buf_index: which registered buffer data lies in (io_uring fixed buffers; pwrite ignores it).
struct WriteRun {
  const std::byte* data;
  std::size_t len;
  std::uint64_t offset;
  int buf_index;
};


class WalIo {
 public:
  virtual ~WalIo() = default;
  /// Writes every run in full (completing short writes), then, if `sync`, makes them durable by
  /// `method` (nothing to do for open_datasync / open_sync, whose files are opened so). A sync
  /// counts only if it was issued after all the runs completed in full. Throws walseg::Error
  /// on the first failure; nothing may be assumed written or durable after a throw.
  virtual void write(File& f, std::span<const WriteRun> runs, bool sync, WalIoCounters& c) = 0;
};

std::unique_ptr<WalIo> make_pwrite_io(SyncMethod method);
/// io_uring with `registered` registered as fixed buffers (their indexes are WriteRun's
/// buf_index). Throws walseg::Error naming walseg.io_method if the kernel refuses io_uring.
std::unique_ptr<WalIo> make_uring_io(SyncMethod method, std::span<const struct iovec> registered);

}  // namespace walseg
