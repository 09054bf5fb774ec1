// IoRing (include/walseg/io_ring.h): io_uring writes and syncs through the io layer's hooks.
#include "walseg/io_ring.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "inject.h"
#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/io_record.h"
#include "walseg/log.h"

namespace walseg {

IoRing::IoRing(unsigned depth, std::span<const struct iovec> registered) {
  int r = io_uring_queue_init(depth, &ring_, 0);
  if (r < 0)
    throw make_error(-r, "io_uring_setup", "",
                     fmt::format("could not set up io_uring for walseg.io_method = io_uring: {}; "
                                 "the kernel refuses io_uring here, set walseg.io_method = pwrite",
                                 errno_text(-r)));
  if (registered.empty()) return;  // nothing to register (tests of the ring alone)
  r = io_uring_register_buffers(&ring_, registered.data(), static_cast<unsigned>(registered.size()));
  fixed_ = r == 0;
  // Registration needs locked memory (RLIMIT_MEMLOCK); without it writes are still io_uring,
  // just not from fixed buffers.
  if (!fixed_)
    log(LogLevel::kLog, fmt::format("io_uring: could not register WAL buffers ({}); using unregistered buffers",
                                    errno_text(-r)));
}

IoRing::~IoRing() { io_uring_queue_exit(&ring_); }

// Slots are reused once every completion of the previous submission was handed out, so that a
// steady stream of flushes allocates nothing (each slot keeps its iovec array's capacity).
IoRing::Queued& IoRing::next_slot(const File& f, std::uint64_t tag) {
  if (outstanding_ == 0) used_ = 0;
  if (used_ == queued_.size()) queued_.emplace_back();
  Queued& q = queued_[used_];
  q.file = &f;
  q.tag = tag;
  q.offset = 0;
  q.iov.clear();
  q.name = "";
  q.sync = false;
  q.data_only = false;
  q.injected.reset();
  return q;
}

// The SQE for slot `slot`; an SQE queued while its chain is broken (or that breaks it) is a
// NOP, its result supplied at completion.
io_uring_sqe* IoRing::get_sqe(std::uint64_t slot) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr)  // the caller queued more than the ring's depth before submitting
    throw make_error(EBUSY, "io_uring_get_sqe", "", "could not queue an io_uring request: the submission queue is full");
  io_uring_sqe_set_data64(sqe, slot);
  ++used_;
  ++outstanding_;
  return sqe;
}

namespace {

/// Cuts iov down to its first `bytes` bytes (short:N), dropping emptied entries.
void keep_first(std::vector<struct iovec>& iov, std::size_t bytes) {
  for (auto& v : iov) {
    v.iov_len = std::min(v.iov_len, bytes);
    bytes -= v.iov_len;
  }
  std::erase_if(iov, [](const struct iovec& v) { return v.iov_len == 0; });
}

}  // namespace

void IoRing::queue_write(const File& f, std::span<const struct iovec> iov, std::uint64_t offset, int buf_index,
                         bool link, std::uint64_t tag) {
  Queued& q = next_slot(f, tag);
  const std::uint64_t slot = used_;
  q.offset = offset;
  q.iov.assign(iov.begin(), iov.end());
  std::size_t total = 0;
  for (const auto& v : q.iov) total += v.iov_len;
  // Named as File::pwritev_all names its call, so one spec arms both backends.
  q.name = q.iov.size() == 1 ? "pwrite" : "pwritev";
  std::size_t want = total;
  if (chain_broken_) q.injected = -ECANCELED;  // never asked: a cancelled SQE is no call
  else if (int err = io_detail::inject(q.name, &want); err != 0) q.injected = -err;
  if (!q.injected && want < total) keep_first(q.iov, want);
  if (q.iov.empty()) q.injected = q.injected.value_or(0);  // short:0: nothing to ask the kernel for
  io_uring_sqe* sqe = get_sqe(slot);
  prep_write(sqe, q, buf_index);
  if (link) sqe->flags |= IOSQE_IO_LINK;
  // A failed request cancels the rest of its chain; a short:0 write (result 0) does not.
  if (q.injected && *q.injected < 0) chain_broken_ = link;
  else if (!link) chain_broken_ = false;
}

// WRITE_FIXED needs the registered buffer's index; a vector goes out as one WRITEV, as pwritev.
void IoRing::prep_write(io_uring_sqe* sqe, const Queued& q, int buf_index) const {
  const int fd = q.file->fd();
  if (q.injected)
    io_uring_prep_nop(sqe);
  else if (q.iov.size() > 1)
    io_uring_prep_writev(sqe, fd, q.iov.data(), static_cast<unsigned>(q.iov.size()), q.offset);
  else if (fixed_)
    io_uring_prep_write_fixed(sqe, fd, q.iov[0].iov_base, static_cast<unsigned>(q.iov[0].iov_len), q.offset,
                              buf_index);
  else
    io_uring_prep_write(sqe, fd, q.iov[0].iov_base, static_cast<unsigned>(q.iov[0].iov_len), q.offset);
}

void IoRing::queue_sync(const File& f, bool data_only, std::uint64_t tag) {
  Queued& q = next_slot(f, tag);
  const std::uint64_t slot = used_;
  q.sync = true;
  q.data_only = data_only;
  q.name = data_only ? "fdatasync" : "fsync";
  if (chain_broken_) q.injected = -ECANCELED;
  else if (int err = io_detail::inject(q.name); err != 0) q.injected = -err;
  chain_broken_ = false;  // a sync ends its chain
  io_uring_sqe* sqe = get_sqe(slot);
  if (q.injected) io_uring_prep_nop(sqe);
  else io_uring_prep_fsync(sqe, f.fd(), data_only ? IORING_FSYNC_DATASYNC : 0);
}

void IoRing::submit_and_wait(unsigned wait_for, const std::string& path) {
  for (;;) {
    const int r = io_uring_submit_and_wait(&ring_, wait_for);
    io_trace::count_syscalls();
    if (r < 0 && r != -EINTR)
      throw make_error(-r, "io_uring_enter", path,
                       fmt::format("could not submit writes for file \"{}\": {}", path, errno_text(-r)));
    const unsigned left = io_uring_sq_ready(&ring_);
    if (left == 0) return;
    // Neither interrupted nor any SQE taken: asking again would spin.
    if (r == 0)
      throw make_error(EBUSY, "io_uring_enter", path,
                       fmt::format("could not submit writes for file \"{}\": the kernel took none of {} SQEs", path,
                                   left));
  }
}

RingCompletion IoRing::next_completion(const std::string& path) {
  io_uring_cqe* cqe = nullptr;
  for (;;) {
    const int w = io_uring_wait_cqe(&ring_, &cqe);
    if (w == 0) break;
    if (w != -EINTR)
      throw make_error(-w, "io_uring_wait_cqe", path,
                       fmt::format("could not wait for writes of file \"{}\": {}", path, errno_text(-w)));
  }
  const std::uint64_t slot = io_uring_cqe_get_data64(cqe);
  int res = cqe->res;
  io_uring_cqe_seen(&ring_, cqe);
  const Queued& q = queued_.at(slot);
  if (q.injected) res = *q.injected;
  if (outstanding_ > 0) --outstanding_;
  trace_completion(q, res);
  return RingCompletion{q.tag, res};
}

// The trace and io_record entries File would make for the syscall the SQE stands for. A write
// records the first `res` bytes of what was asked at its offset; a sync covers everything
// recorded before it, since its chain's writes completed (and were handed out) before it.
void IoRing::trace_completion(const Queued& q, int res) const {
  const int err = res < 0 ? -res : 0;
  const File& f = *q.file;
  io_trace::record(q.name, f.path(), err);
  if (q.sync) {
    if (io_record::active())
      io_record::record_sync(f.fd(), f.path(), q.data_only, err, io_record::kCoversAllRecorded, true);
    return;
  }
  if (io_record::active())
    io_record::record_write(f.fd(), f.path(), q.iov.data(), static_cast<int>(q.iov.size()), q.offset,
                            res > 0 ? static_cast<std::size_t>(res) : 0, err, true);
}

}  // namespace walseg
