// The pwrite backend of the WAL writer (walseg.io_method = pwrite).
#include <fmt/format.h>

#include "wal_io.h"
#include "walseg/error.h"

namespace walseg {
namespace {

class PwriteIo final : public WalIo {
 public:
  explicit PwriteIo(SyncMethod m) : method_(m) {}

  void write(File& f, std::span<const WriteRun> runs, bool sync, WalIoCounters& c) override {
    // pwrite_all completes short writes itself; every run is written before any sync.
    for (const WriteRun& r : runs) {
      f.pwrite_all(r.data, r.len, r.offset);
      ++c.writes;
    }
    if (!sync) return;
    if (method_ == SyncMethod::kFdatasync) {
      f.fdatasync();
      ++c.syncs;
    } else if (method_ == SyncMethod::kFsync) {
      f.fsync();
      ++c.syncs;
    }
    // open_datasync / open_sync: each write returned only once durable.
  }

 private:
  SyncMethod method_;
};

}  // namespace

std::unique_ptr<WalIo> make_pwrite_io(SyncMethod method) { return std::make_unique<PwriteIo>(method); }

}  // namespace walseg
