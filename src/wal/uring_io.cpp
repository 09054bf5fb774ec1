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
// interrupted before it reported anything, so it is redone; any other error is final: the
// kernel may have dropped the pages, so a retried sync would vouch for data it no longer has).
// Every SQE is prepared in full each time, offsets always explicit.
//
// A round that completes nothing (every write -EAGAIN, -EINTR or -ECANCELED, the sync not
// believed) is followed by a growing pause (10 us doubling to 1 ms: persistent -EAGAIN is
// not a busy spin), and kMaxStalledRounds of them in a row end the flush with the last cause
// as errno and a message naming the path, the first pending offset, the bytes pending and what
// the last round's completions returned.
//
// The ring itself is the io layer's IoRing (io_ring.h): it asks the same failpoints as the pwrite
// backend's syscalls ("pwrite" / "pwritev", "fdatasync" / "fsync") when an SQE is queued, and
// traces and records (io_record, for the power-loss harness) each completion, so this file
// decides only what a completion means.
//
// Signals: every host handles some (PostgreSQL's latch, timeouts, SIGCHLD), and a signal with a
// handler ends io_uring_enter's wait with -EINTR whether or not it has SA_RESTART. The I/O goes
// on in the kernel, so an interrupted submission is finished from the SQ ring's head (never an
// SQE twice) and an interrupted wait is resumed (never a completion lost): IoRing's
// submit_and_wait and next_completion.
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
#include "walseg/io_ring.h"

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
  UringIo(SyncMethod m, std::span<const struct iovec> registered) : method_(m), ring_(kQueueDepth, registered) {}

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
  /// Pending pieces [first, first + count), written by one SQE.
  struct Group {
    std::size_t first;
    std::size_t count;
  };

  const char* sync_name() const { return method_ == SyncMethod::kFdatasync ? "fdatasync" : "fsync"; }

  /// One round: queues the pending pieces and (if wanted) a linked sync, submits them, and
  /// reaps every completion, so that nothing of the round is in flight when it returns.
  RoundReport submit_round(File& f, std::vector<Piece>& pending, bool want_sync, WalIoCounters& c) {
    RoundReport report;
    const unsigned total = queue_round(f, pending, want_sync, report);
    ring_.submit_and_wait(total, f.path());
    for (unsigned k = 0; k < total; ++k) {
      const RingCompletion done = ring_.next_completion(f.path());
      if (done.tag == kSyncTag) reap_sync(f, done.res, report, c);
      else reap_write(f, groups_[done.tag], done.res, pending, report, c);
    }
    const bool complete = std::all_of(pending.begin(), pending.end(), [](const Piece& p) { return p.left == 0; });
    // A sync that completed while any piece was short covers nothing: it must be redone.
    report.covered = report.sync_queued && report.sync_res == 0 && complete;
    return report;
  }

  /// Queues one write SQE per group (tagged with its index) and, when every pending piece is
  /// in a group, the sync linked behind them. Returns the number of SQEs queued.
  unsigned queue_round(File& f, const std::vector<Piece>& pending, bool want_sync, RoundReport& report) {
    const bool all_queued = group_pieces(pending);
    // Link only when the sync follows in this submission: a chain must not dangle.
    report.sync_queued = want_sync && all_queued;
    const unsigned n = static_cast<unsigned>(groups_.size());
    for (unsigned k = 0; k < n; ++k) queue_group(f, k, pending, report.sync_queued);
    if (report.sync_queued) ring_.queue_sync(f, method_ == SyncMethod::kFdatasync, kSyncTag);
    return n + (report.sync_queued ? 1 : 0);
  }

  /// Queues the write of groups_[k]: its pieces' remainders as one vector, at the first one's
  /// offset, linked to the next SQE if `link`.
  void queue_group(File& f, unsigned k, const std::vector<Piece>& pending, bool link) {
    const Group& g = groups_[k];
    iov_.clear();
    for (std::size_t i = g.first; i < g.first + g.count; ++i)
      iov_.push_back({const_cast<std::byte*>(pending[i].data), pending[i].left});
    const Piece& p = pending[g.first];
    ring_.queue_write(f, iov_, p.offset, p.buf_index, link, k);
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
      groups_.push_back(Group{i, 1});
    }
    return groups_.empty() || groups_.back().first + groups_.back().count == pending.size();
  }

  /// Notes the sync's result; throws for a real failure (final: a failed sync is never retried,
  /// since a second one would report success for pages the kernel dropped). -ECANCELED (a
  /// broken link: it never ran) and -EINTR (interrupted before it reported any writeback
  /// error, as File::fsync explains) leave it to be redone.
  void reap_sync(File& f, int res, RoundReport& report, WalIoCounters& c) {
    ++c.syncs;
    if (res != 0 && res != -ECANCELED && res != -EINTR) throw file_error(-res, sync_name(), f.path());
    report.sync_res = res;
  }

  /// Moves the group's pieces past the bytes its write completed (the group's first ones, in
  /// order). -ECANCELED/-EAGAIN/-EINTR leave all of it pending; other errors are thrown, and so
  /// is a write of no byte with no error (as pwrite's: taken for a full disk, as PostgreSQL does).
  void reap_write(File& f, const Group& g, int res, std::vector<Piece>& pending, RoundReport& report,
                  WalIoCounters& c) {
    ++c.writes;
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
  IoRing ring_;
  std::vector<Group> groups_;
  std::vector<struct iovec> iov_;  ///< queue_group's scratch (the ring copies it)
};

}  // namespace

std::unique_ptr<WalIo> make_uring_io(SyncMethod method, std::span<const struct iovec> registered) {
  return std::make_unique<UringIo>(method, registered);
}

}  // namespace walseg
