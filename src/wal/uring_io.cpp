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
// sync linked behind it (a sync that completed with -ECANCELED or -EINTR never ran or was
// interrupted before it reported anything, so it is redone; any other error is final,
// invariant 4). Every SQE is prepared in full each time, offsets always explicit.
//
// A round that completes nothing (every write -EAGAIN, -EINTR or -ECANCELED, the sync not
// believed) is followed by a growing pause (10 us doubling to 1 ms: persistent -EAGAIN is
// not a busy spin), and kMaxStalledRounds of them in a row end the flush with the last cause
// as errno and a message naming the path, the first pending offset, the bytes pending and what
// the last round's completions returned.
//
// Signals: every host handles some (PostgreSQL's latch, timeouts, SIGCHLD), and a signal with a
// handler ends io_uring_enter's wait with -EINTR whether or not it has SA_RESTART. The I/O goes
// on in the kernel, so an interrupted submission is finished from the SQ ring's head (never an
// SQE twice) and an interrupted wait is resumed (never a completion lost): submit_all and
// next_completion.
#include <liburing.h>

#include <string.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wal_io.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/io_record.h"
#include "walseg/io_trace.h"
#include "walseg/log.h"

namespace walseg {
namespace {

constexpr unsigned kQueueDepth = 256;
/// Rounds in a row that completed nothing before a flush gives up. Rounds that make progress
/// are not counted: each completes at least a byte or the sync, so they end by themselves.
constexpr int kMaxStalledRounds = 1000;
/// The pause after the second stalled round in a row, doubled after each further one up to
/// kMaxBackoff: 1000 stalled rounds take about a second. The first is retried at once, as a
/// lone -EINTR or a link broken by it is not worth waiting for.
constexpr auto kFirstBackoff = std::chrono::microseconds(10);
constexpr auto kMaxBackoff = std::chrono::milliseconds(1);
constexpr std::uint64_t kSyncTag = ~std::uint64_t{0};
constexpr std::size_t kMaxIovecs = 1024;  // IOV_MAX

struct Piece {
  const std::byte* data;
  std::size_t left;
  std::uint64_t offset;
  int buf_index;
};

/// The pause after `stalled` (at least 2) rounds in a row that completed nothing.
std::chrono::microseconds backoff(int stalled) {
  const std::chrono::microseconds d = kFirstBackoff * (1 << std::min(stalled - 2, 10));
  return std::min<std::chrono::microseconds>(d, kMaxBackoff);
}

/// "EAGAIN" for EAGAIN: the messages name the errno, not only its text.
std::string errno_name(int errnum) {
  const char* name = ::strerrorname_np(errnum);
  return name != nullptr ? name : fmt::format("errno {}", errnum);
}

/// What one round's completions returned: whether it made progress, and what to report when
/// the rounds run out.
struct RoundReport {
  std::size_t bytes_done = 0;
  bool sync_queued = false;
  int sync_res = 0;      ///< the sync's completion result, when queued
  bool covered = false;  ///< the sync completed with 0 and every piece is complete
  bool link_broken = false;  ///< failpoint "uring_write": the linked sync is to be -ECANCELED
  /// Write completions that left their group pending: (errno, how many), in order seen.
  std::vector<std::pair<int, unsigned>> retried;

  bool progress() const { return bytes_done > 0 || covered; }
  void note_retried(int errnum) {
    for (auto& [e, n] : retried)
      if (e == errnum) {
        ++n;
        return;
      }
    retried.emplace_back(errnum, 1);
  }
  /// The errno to report: a write's own (-ECANCELED is only the echo of a broken link), else
  /// the sync's.
  int cause() const {
    for (const auto& [e, n] : retried)
      if (e != ECANCELED) return e;
    if (!retried.empty()) return ECANCELED;
    return sync_res < 0 ? -sync_res : EIO;
  }
  /// "2 writes completed with -EAGAIN, fdatasync with -ECANCELED"
  std::string describe(const char* sync_name) const {
    std::vector<std::string> parts;
    for (const auto& [e, n] : retried)
      parts.push_back(fmt::format("{} write{} completed with -{}", n, n == 1 ? "" : "s", errno_name(e)));
    if (sync_queued)
      parts.push_back(fmt::format("{} with {}", sync_name, sync_res == 0 ? "0" : "-" + errno_name(-sync_res)));
    return parts.empty() ? "nothing completed" : fmt::format("{}", fmt::join(parts, ", "));
  }
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
    std::uint64_t end = 0;
    for (const WriteRun& r : runs) {
      pending.push_back(Piece{r.data, r.len, r.offset, r.buf_index});
      end = std::max(end, r.offset + r.len);
    }
    bool need_sync = sync && (method_ == SyncMethod::kFdatasync || method_ == SyncMethod::kFsync);
    RoundReport last;
    for (int stalled = 0;;) {
      std::erase_if(pending, [](const Piece& p) { return p.left == 0; });
      if (pending.empty() && !need_sync) return;
      last = submit_round(f, pending, need_sync, c);
      need_sync = need_sync && !last.covered;
      if (last.progress()) {
        stalled = 0;
        continue;
      }
      if (++stalled == kMaxStalledRounds) break;
      if (stalled > 1) std::this_thread::sleep_for(backoff(stalled));
    }
    throw out_of_rounds(f, pending, end, last);
  }

 private:
  /// Pending pieces [first, first + count) written by one SQE; iov lives until it completes.
  struct Group {
    std::size_t first;
    std::size_t count;
    std::vector<struct iovec> iov;
    int injected_errno = 0;  ///< failpoint "uring_write": what its completion is to report
  };

  const char* sync_name() const { return method_ == SyncMethod::kFdatasync ? "fdatasync" : "fsync"; }

  /// Submits the pending pieces and (if wanted) a linked sync, and reaps every completion.
  RoundReport submit_round(File& f, std::vector<Piece>& pending, bool want_sync, WalIoCounters& c) {
    const bool all_queued = group_pieces(pending);
    RoundReport report;
    // Link only when the sync follows in this submission: a chain must not dangle.
    report.sync_queued = want_sync && all_queued;
    const unsigned n = static_cast<unsigned>(groups_.size());
    for (unsigned k = 0; k < n; ++k) prepare_write(f, k, pending, report.sync_queued);
    // A write failed by the failpoint breaks the chain as a real failure would.
    report.link_broken =
        std::any_of(groups_.begin(), groups_.end(), [](const Group& g) { return g.injected_errno != 0; });
    if (report.sync_queued) prepare_sync(f, report.link_broken);
    const unsigned total = n + (report.sync_queued ? 1 : 0);
    submit_all(f, total);
    for (unsigned k = 0; k < total; ++k) {
      io_uring_cqe* cqe = next_completion(f);
      const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      if (tag == kSyncTag) reap_sync(f, res, report, c);
      else reap_write(f, groups_[tag], res, pending, report, c);
    }
    const bool complete = std::all_of(pending.begin(), pending.end(), [](const Piece& p) { return p.left == 0; });
    // A sync that completed while any piece was short covers nothing: it must be redone.
    report.covered = report.sync_queued && report.sync_res == 0 && complete;
    return report;
  }

  /// The error that ends a flush after kMaxStalledRounds rounds in a row completed nothing:
  /// errno is the last round's cause; `end` is where the flush's writes end.
  Error out_of_rounds(File& f, const std::vector<Piece>& pending, std::uint64_t end,
                      const RoundReport& last) const {
    std::size_t left = 0;
    std::uint64_t first = end;
    for (const Piece& p : pending) {
      left += p.left;
      if (p.left > 0) first = std::min(first, p.offset);
    }
    const std::string what = last.describe(sync_name());
    if (left > 0)
      return file_error(last.cause(), "write to", f.path(),
                        fmt::format("; {} bytes from offset {} still unwritten after {} rounds of io_uring "
                                    "resubmission that completed nothing (last round: {})",
                                    left, first, kMaxStalledRounds, what),
                        first);
    return file_error(last.cause(), sync_name(), f.path(),
                      fmt::format("; 0 bytes unwritten (the writes up to offset {} completed) but the sync did "
                                  "not complete in {} rounds of io_uring resubmission (last round: {})",
                                  end, kMaxStalledRounds, what),
                      end);
  }

  /// Fills groups_ with runs of pending pieces that follow each other in the file (one SQE
  /// each, at most kMaxIovecs pieces, at most a ring's worth less the sync's slot). Returns
  /// whether every pending piece is in a group.
  bool group_pieces(const std::vector<Piece>& pending) {
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
    return groups_.empty() || groups_.back().first + groups_.back().count == pending.size();
  }

  /// Prepares the write SQE of groups_[k] (tagged k), linked to the next SQE if `link`.
  void prepare_write(File& f, unsigned k, const std::vector<Piece>& pending, bool link) {
    Group& g = groups_[k];
    std::size_t total = 0;
    for (std::size_t i = g.first; i < g.first + g.count; ++i) {
      g.iov.push_back({const_cast<std::byte*>(pending[i].data), pending[i].left});
      total += pending[i].left;
    }
    // Failpoint: ask the kernel for less, so the completion is short of what the group needs;
    // or, for an errno, write nothing (a NOP in its place) and have the completion report it.
    const auto spec = failpoint::hit("uring_write");
    g.injected_errno = spec && spec->kind == failpoint::Kind::kErrno ? spec->errnum : 0;
    if (spec && spec->kind == failpoint::Kind::kShort) {
      std::size_t budget = std::max<std::size_t>(1, std::min<std::size_t>(total, spec->short_bytes));
      for (auto& v : g.iov) {
        v.iov_len = std::min(v.iov_len, budget);
        budget -= v.iov_len;
      }
      std::erase_if(g.iov, [](const struct iovec& v) { return v.iov_len == 0; });
    }
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    const Piece& p = pending[g.first];
    if (g.injected_errno != 0)
      io_uring_prep_nop(sqe);
    else if (g.iov.size() > 1)
      io_uring_prep_writev(sqe, f.fd(), g.iov.data(), static_cast<unsigned>(g.iov.size()), p.offset);
    else if (fixed_)
      io_uring_prep_write_fixed(sqe, f.fd(), p.data, static_cast<unsigned>(g.iov[0].iov_len), p.offset, p.buf_index);
    else
      io_uring_prep_write(sqe, f.fd(), p.data, static_cast<unsigned>(g.iov[0].iov_len), p.offset);
    if (link) sqe->flags |= IOSQE_IO_LINK;
    io_uring_sqe_set_data64(sqe, k);
  }

  /// Prepares the sync SQE; a NOP instead when a failpoint broke the chain it ends.
  void prepare_sync(File& f, bool link_broken) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (link_broken) io_uring_prep_nop(sqe);
    else io_uring_prep_fsync(sqe, f.fd(), method_ == SyncMethod::kFdatasync ? IORING_FSYNC_DATASYNC : 0);
    io_uring_sqe_set_data64(sqe, kSyncTag);
  }

  /// Submits every prepared SQE, waiting in the same io_uring_enter for `total` completions.
  /// A signal (with or without SA_RESTART) ends the wait early: the call returns the count of
  /// SQEs the kernel took, or -EINTR if it took none; so does a partial submission. Either way
  /// the SQ ring's head says which SQEs were consumed, and the next call hands the kernel only
  /// the others, so no SQE is submitted twice and none is left behind. Completions are not
  /// touched here: next_completion() reaps every one, waiting again where this wait was cut.
  void submit_all(File& f, unsigned total) {
    for (;;) {
      const int r = io_uring_submit_and_wait(&ring_, total);
      io_trace::count_syscalls();
      if (r < 0 && r != -EINTR)
        throw make_error(-r, "io_uring_enter", f.path(),
                         fmt::format("could not submit writes for file \"{}\": {}", f.path(), errno_text(-r)));
      const unsigned left = io_uring_sq_ready(&ring_);
      if (left == 0) return;
      // Neither interrupted nor any SQE taken: asking again would spin.
      if (r == 0)
        throw make_error(EBUSY, "io_uring_enter", f.path(),
                         fmt::format("could not submit writes for file \"{}\": the kernel took none of {} SQEs",
                                     f.path(), left));
    }
  }

  /// The next completion, waiting for it. A signal ends the wait with -EINTR, with or without
  /// SA_RESTART, while the I/O goes on in the kernel: the wait is resumed. No bound is needed,
  /// since each call looks at the CQ ring before it sleeps and so returns as soon as the
  /// completion is there, however many signals arrive.
  io_uring_cqe* next_completion(File& f) {
    for (;;) {
      io_uring_cqe* cqe = nullptr;
      const int w = io_uring_wait_cqe(&ring_, &cqe);
      if (w == 0) return cqe;
      if (w != -EINTR)
        throw make_error(-w, "io_uring_wait_cqe", f.path(),
                         fmt::format("could not wait for writes of file \"{}\": {}", f.path(), errno_text(-w)));
    }
  }

  /// Notes the sync's result; throws for a real failure (final: invariant 4). -ECANCELED (a
  /// broken link: it never ran) and -EINTR (interrupted before it reported any writeback
  /// error, as File::fsync explains) leave it to be redone.
  void reap_sync(File& f, int res, RoundReport& report, WalIoCounters& c) {
    ++c.syncs;
    const char* name = sync_name();
    if (report.link_broken) res = -ECANCELED;
    else if (auto spec = failpoint::hit(name); spec && spec->kind == failpoint::Kind::kErrno) res = -spec->errnum;
    io_trace::record(name, f.path(), res < 0 ? -res : 0);
    if (io_record::active())  // linked behind the writes reaped (and recorded) before it
      io_record::record_sync(f.fd(), f.path(), method_ == SyncMethod::kFdatasync, res < 0 ? -res : 0,
                             io_record::kCoversAllRecorded, true);
    if (res != 0 && res != -ECANCELED && res != -EINTR) throw file_error(-res, name, f.path());
    report.sync_res = res;
  }

  /// Moves the group's pieces past the bytes its write completed (the group's first ones, in
  /// order). -ECANCELED/-EAGAIN/-EINTR leave all of it pending; other errors are thrown, and so
  /// is a write of no byte with no error (as pwrite's: taken for a full disk, as PostgreSQL does).
  void reap_write(File& f, const Group& g, int res, std::vector<Piece>& pending, RoundReport& report,
                  WalIoCounters& c) {
    ++c.writes;
    if (g.injected_errno != 0) res = -g.injected_errno;
    io_trace::record("pwrite", f.path(), res < 0 ? -res : 0);
    if (io_record::active())  // the group's first res bytes reached the file at its offset
      io_record::record_write(f.fd(), f.path(), g.iov.data(), static_cast<int>(g.iov.size()), pending[g.first].offset,
                              res > 0 ? static_cast<std::size_t>(res) : 0, res < 0 ? -res : 0, true);
    if (res == -ECANCELED || res == -EAGAIN || res == -EINTR) {
      report.note_retried(-res);
      return;
    }
    const std::uint64_t at = pending[g.first].offset;
    if (res < 0) throw file_error(-res, "write to", f.path(), fmt::format(" at offset {}", at), at);
    std::size_t asked = 0;
    for (std::size_t i = g.first; i < g.first + g.count; ++i) asked += pending[i].left;
    if (res == 0)
      throw file_error(ENOSPC, "write to", f.path(), fmt::format("; wrote 0 of {} bytes at offset {}", asked, at),
                       at);
    auto done = static_cast<std::size_t>(res);
    report.bytes_done += done;
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
