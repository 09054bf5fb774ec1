// The pwrite backend of the WAL writer (walseg.io_method = pwrite).
#include <climits>
#include <vector>

#include <fmt/format.h>

#include "wal_io.h"
#include "walseg/error.h"

namespace walseg {
namespace {

class PwriteIo final : public WalIo {
 public:
  explicit PwriteIo(SyncMethod m) : method_(m) {}

  void write(File& f, std::span<const WriteRun> runs, bool sync, WalIoCounters& c) override {
    // Runs that follow each other in the file go out in one pwritev (the full pages from the
    // ring and the partial page from its copy: one system call per commit, not two).
    // pwritev_all completes short writes itself; every run is written before any sync.
    std::vector<struct iovec> iov;
    for (std::size_t i = 0; i < runs.size();) {
      iov.clear();
      std::uint64_t start = runs[i].offset, next = start;
      for (; i < runs.size() && runs[i].offset == next && iov.size() < IOV_MAX; ++i) {
        iov.push_back({const_cast<std::byte*>(runs[i].data), runs[i].len});
        next += runs[i].len;
      }
      f.pwritev_all(iov.data(), static_cast<int>(iov.size()), start);
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
