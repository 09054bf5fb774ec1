// The io_uring backend of the WAL writer (walseg.io_method = io_uring).
//
// One flush is one chain: the write SQEs for the runs (one WRITEV for runs that follow each
// other in the file, so that the last page's copy and the pages before it go out as one
// write, as with pwritev; WRITE_FIXED for a lone run), each IOSQE_IO_LINK'ed, then the
// fdatasync (or fsync) SQE, so the kernel starts the sync only after every write of the chain
// completed in full (liburing io_uring_prep_fsync(3): a linked chain is broken by an error or a
// short transfer, and the rest completes with -ECANCELED). Completions are then checked one by
// one against what was asked: a short write leaves its remainder pending, -EAGAIN/-EINTR/
// -ECANCELED leave the whole piece pending, and the sync is only believed if it completed with
// 0 *and* every piece is complete; otherwise the remainder is submitted again with a fresh
// sync linked behind it. Every SQE is prepared in full each time, offsets always explicit.
#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include <fmt/format.h>

#include "wal_io.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/io_record.h"
#include "walseg/io_trace.h"
#include "walseg/log.h"

namespace walseg {
namespace {

constexpr unsigned kQueueDepth = 256;
constexpr int kMaxRounds = 1000;     // bound on resubmissions of one flush
constexpr std::uint64_t kSyncTag = ~std::uint64_t{0};
constexpr std::size_t kMaxIovecs = 1024;  // IOV_MAX

struct Piece {
  const std::byte* data;
  std::size_t left;
  std::uint64_t offset;
  int buf_index;
};

class UringIo final : public WalIo {
 public:
  UringIo(SyncMethod m, std::span<const struct iovec> registered) : method_(m) {
    int r = io_uring_queue_init(kQueueDepth, &ring_, 0);
    if (r < 0)
      throw make_error(-r, "io_uring_setup", "",
                       fmt::format("could not set up io_uring for walseg.io_method = io_uring: {}; "
                                   "the kernel refuses io_uring here, set walseg.io_method = pwrite",
                                   errno_text(-r)));
    r = io_uring_register_buffers(&ring_, registered.data(), static_cast<unsigned>(registered.size()));
    fixed_ = r == 0;
    // Registration needs locked memory (RLIMIT_MEMLOCK); without it writes are still io_uring,
    // just not from fixed buffers.
    if (!fixed_)
      log(LogLevel::kLog, fmt::format("io_uring: could not register WAL buffers ({}); using unregistered buffers",
                                      errno_text(-r)));
  }
  ~UringIo() override { io_uring_queue_exit(&ring_); }

  void write(File& f, std::span<const WriteRun> runs, bool sync, WalIoCounters& c) override {
    std::vector<Piece> pending;
    for (const WriteRun& r : runs) pending.push_back(Piece{r.data, r.len, r.offset, r.buf_index});
    bool need_sync = sync && (method_ == SyncMethod::kFdatasync || method_ == SyncMethod::kFsync);
    for (int round = 0; round < kMaxRounds; ++round) {
      std::erase_if(pending, [](const Piece& p) { return p.left == 0; });
      if (pending.empty() && !need_sync) return;
      need_sync = submit_round(f, pending, need_sync, c);
    }
    std::size_t left = 0;
    for (const Piece& p : pending) left += p.left;
    throw make_error(EIO, "write", f.path(),
                     fmt::format("could not write to file \"{}\": io_uring writes were still {} bytes short "
                                 "after {} rounds of resubmission",
                                 f.path(), left, kMaxRounds));
  }

 private:
  // Submits the pending pieces and (if wanted) a linked sync; returns whether a sync is still
  // needed after reaping everything.
  bool submit_round(File& f, std::vector<Piece>& pending, bool want_sync, WalIoCounters& c) {
    // Groups of pieces that follow each other in the file: [first, first + count).
    groups_.clear();
    for (std::size_t i = 0; i < pending.size() && groups_.size() < kQueueDepth - 1; ++i) {
      if (!groups_.empty()) {
        Group& g = groups_.back();
        const Piece& last = pending[g.first + g.count - 1];
        if (last.offset + last.left == pending[i].offset && g.count < kMaxIovecs) {
          ++g.count;
          continue;
        }
      }
      groups_.push_back(Group{i, 1, {}});
    }
    const unsigned n = static_cast<unsigned>(groups_.size());
    const bool all_queued = groups_.empty() || groups_.back().first + groups_.back().count == pending.size();
    // Link only when the sync follows in this submission: a chain must not dangle.
    const bool sync_queued = want_sync && all_queued;
    for (unsigned k = 0; k < n; ++k) {
      Group& g = groups_[k];
      std::size_t total = 0;
      for (std::size_t i = g.first; i < g.first + g.count; ++i) {
        g.iov.push_back({const_cast<std::byte*>(pending[i].data), pending[i].left});
        total += pending[i].left;
      }
      // Failpoint: ask the kernel for less, so the completion is short of what the group needs.
      if (auto spec = failpoint::hit("uring_write"); spec && spec->kind == failpoint::Kind::kShort) {
        std::size_t budget = std::max<std::size_t>(1, std::min<std::size_t>(total, spec->short_bytes));
        for (auto& v : g.iov) {
          v.iov_len = std::min(v.iov_len, budget);
          budget -= v.iov_len;
        }
        std::erase_if(g.iov, [](const struct iovec& v) { return v.iov_len == 0; });
      }
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      const Piece& p = pending[g.first];
      if (g.iov.size() > 1)
        io_uring_prep_writev(sqe, f.fd(), g.iov.data(), static_cast<unsigned>(g.iov.size()), p.offset);
      else if (fixed_)
        io_uring_prep_write_fixed(sqe, f.fd(), p.data, static_cast<unsigned>(g.iov[0].iov_len), p.offset, p.buf_index);
      else
        io_uring_prep_write(sqe, f.fd(), p.data, static_cast<unsigned>(g.iov[0].iov_len), p.offset);
      if (sync_queued) sqe->flags |= IOSQE_IO_LINK;
      io_uring_sqe_set_data64(sqe, k);
    }
    if (sync_queued) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      io_uring_prep_fsync(sqe, f.fd(), method_ == SyncMethod::kFdatasync ? IORING_FSYNC_DATASYNC : 0);
      io_uring_sqe_set_data64(sqe, kSyncTag);
    }
    unsigned total = n + (sync_queued ? 1 : 0);
    int r = io_uring_submit_and_wait(&ring_, total);
    io_trace::count_syscalls();
    if (r < 0) throw make_error(-r, "io_uring_enter", f.path(),
                                fmt::format("could not submit writes for file \"{}\": {}", f.path(), errno_text(-r)));
    bool synced = false;
    for (unsigned k = 0; k < total; ++k) {
      io_uring_cqe* cqe = nullptr;
      int w = io_uring_wait_cqe(&ring_, &cqe);
      if (w < 0) throw make_error(-w, "io_uring_wait_cqe", f.path(),
                                  fmt::format("could not wait for writes of file \"{}\": {}", f.path(), errno_text(-w)));
      std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      if (tag == kSyncTag) {
        ++c.syncs;
        const char* name = method_ == SyncMethod::kFdatasync ? "fdatasync" : "fsync";
        if (auto spec = failpoint::hit(name); spec && spec->kind == failpoint::Kind::kErrno) res = -spec->errnum;
        io_trace::record(name, f.path(), res < 0 ? -res : 0);
        if (io_record::active())  // linked behind the writes reaped (and recorded) before it
          io_record::record_sync(f.fd(), f.path(), method_ == SyncMethod::kFdatasync, res < 0 ? -res : 0,
                                 io_record::kCoversAllRecorded, true);
        if (res == 0) synced = true;
        else if (res != -ECANCELED) throw file_error(-res, name, f.path());
        continue;
      }
      const Group& g = groups_[tag];
      ++c.writes;
      io_trace::record("pwrite", f.path(), res < 0 ? -res : 0);
      if (io_record::active())  // the group's first res bytes reached the file at its offset
        io_record::record_write(f.fd(), f.path(), g.iov.data(), static_cast<int>(g.iov.size()),
                                pending[g.first].offset, res > 0 ? static_cast<std::size_t>(res) : 0,
                                res < 0 ? -res : 0, true);
      if (res == -ECANCELED || res == -EAGAIN || res == -EINTR) continue;  // stays pending
      if (res < 0) {
        const std::uint64_t at = pending[g.first].offset;
        throw file_error(-res, "write to", f.path(), fmt::format(" at offset {}", at), at);
      }
      // The bytes written are the group's first ones, in order.
      auto done = static_cast<std::size_t>(res);
      std::size_t asked = 0;
      for (std::size_t i = g.first; i < g.first + g.count; ++i) asked += pending[i].left;
      if (done < asked) ++c.short_writes;
      for (std::size_t i = g.first; i < g.first + g.count && done > 0; ++i) {
        Piece& p = pending[i];
        const std::size_t d = std::min(done, p.left);
        p.data += d;
        p.offset += d;
        p.left -= d;
        done -= d;
      }
    }
    bool complete = std::all_of(pending.begin(), pending.end(), [](const Piece& p) { return p.left == 0; });
    // A sync that completed while any piece was short covers nothing: it must be redone.
    return want_sync && !(synced && complete && all_queued);
  }

  /// Pending pieces [first, first + count) written by one SQE; iov lives until it completes.
  struct Group {
    std::size_t first;
    std::size_t count;
    std::vector<struct iovec> iov;
  };

  SyncMethod method_;
  io_uring ring_{};
  bool fixed_ = false;
  std::vector<Group> groups_;
};

}  // namespace

std::unique_ptr<WalIo> make_uring_io(SyncMethod method, std::span<const struct iovec> registered) {
  return std::make_unique<UringIo>(method, registered);
}

}  // namespace walseg
