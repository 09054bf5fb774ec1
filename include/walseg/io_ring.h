// IoRing: an io_uring instance that writes and syncs Files through the io layer's failpoints,
// trace and mutation record, as File's own pwritev and fdatasync do.
//
// The io layer makes every syscall of the library; io_uring moves the work of a syscall into
// an SQE and its result into a CQE, so each hook of File's syscalls is taken at the matching
// side: the failpoint when the SQE is queued (before the kernel could do anything, as File asks
// before its call), the trace and io_record entries when the completion is handed out (the
// bytes the kernel reports written, in completion order). The names are the syscalls' own:
// "pwrite" for a write of one iovec, "pwritev" for several (as File::pwritev_all names its
// calls), "fdatasync" / "fsync"; so a test arms the same spec for either backend:
//   short:N   the SQE asks the kernel for at most N bytes (0: a NOP whose completion reports
//             0 bytes, what pwritev returns for an empty vector);
//   an errno  a NOP takes the SQE's place and its completion reports -errno; every SQE linked
//             behind it then completes with -ECANCELED unasked, as the kernel cancels the rest
//             of a chain after a failed request (liburing io_uring_prep_fsync(3));
//   crash     the process exits before the SQE is submitted.
// One io_uring_enter counts as one syscall (io_trace::thread_syscalls); completions do not.
//
// Not for: deciding what a short or failed completion means (the WAL writer's io_uring backend,
// src/wal/uring_io.cpp, resubmits, retries or fails); reads; anything but positioned writes and
// syncs.
// Thread-safety: none; one thread uses a ring at a time. Lifetime: the Files and the bytes a
// queued write points to must stay alive until its completion was handed out; the iovec arrays
// are copied. After a throw from submit_and_wait or next_completion, or one of the caller's
// while completions are outstanding, the ring may still hold them: use it no further.
#pragma once

#include <liburing.h>
#include <sys/uio.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace walseg {

class File;

/// One completion: the tag its SQE was queued with, and the kernel's (or a failpoint's) result
/// (bytes written, 0 for a sync, or -errno).
struct RingCompletion {
  std::uint64_t tag;
  int res;
};

class IoRing {
 public:
  /// io_uring_queue_init with `depth` SQEs, and `registered` registered as fixed buffers when
  /// the locked-memory limit allows (fixed_buffers() says whether it did). Throws
  /// walseg::Error("io_uring_setup") when the kernel refuses io_uring.
  IoRing(unsigned depth, std::span<const struct iovec> registered);
  ~IoRing();
  IoRing(const IoRing&) = delete;
  IoRing& operator=(const IoRing&) = delete;

  bool fixed_buffers() const noexcept { return fixed_; }

  /// Queues a write of `iov` (at least one iovec) to f at `offset`: IORING_OP_WRITE_FIXED from
  /// registered buffer `buf_index` for one iovec when buffers are registered, else WRITE or
  /// WRITEV. link: IOSQE_IO_LINK to the next SQE queued. Failpoint "pwrite" / "pwritev".
  void queue_write(const File& f, std::span<const struct iovec> iov, std::uint64_t offset, int buf_index,
                   bool link, std::uint64_t tag);
  /// Queues an fdatasync (data_only) or fsync of f, unlinked. Failpoint "fdatasync" / "fsync",
  /// asked only when no earlier SQE of its chain failed (else it is cancelled, as a sync after
  /// a failed pwrite is never called).
  void queue_sync(const File& f, bool data_only, std::uint64_t tag);

  /// Submits every queued SQE and waits in the same io_uring_enter for `wait_for` completions.
  /// A signal (with or without SA_RESTART) ends the wait early: the call returns the count of
  /// SQEs the kernel took, or -EINTR if it took none; so does a partial submission. Either way
  /// the SQ ring's head says which SQEs were consumed, and the next call hands the kernel only
  /// the others, so no SQE is submitted twice and none is left behind. Completions are not
  /// touched: next_completion() reaps every one, waiting again where this wait was cut.
  /// Throws walseg::Error("io_uring_enter") naming `path`.
  void submit_and_wait(unsigned wait_for, const std::string& path);

  /// The next completion, waiting for it, traced and recorded (see above). A signal ends the
  /// wait with -EINTR while the I/O goes on in the kernel: the wait is resumed. No bound is
  /// needed, since each call looks at the CQ ring before it sleeps. Throws
  /// walseg::Error("io_uring_wait_cqe") naming `path`.
  RingCompletion next_completion(const std::string& path);

 private:
  /// What a queued SQE needs at its completion: whom to trace and record, and what a failpoint
  /// made its result.
  struct Queued {
    const File* file = nullptr;
    std::uint64_t tag = 0;
    std::uint64_t offset = 0;
    const char* name = "";  ///< the failpoint and trace name: "pwrite", "pwritev", "fdatasync", "fsync"
    std::vector<struct iovec> iov;  ///< a write's, as asked of the kernel (after short:N)
    bool sync = false;
    bool data_only = false;
    std::optional<int> injected;  ///< the result a failpoint or a broken chain stands for
  };

  Queued& next_slot(const File& f, std::uint64_t tag);
  io_uring_sqe* get_sqe(std::uint64_t slot);
  void prep_write(io_uring_sqe* sqe, const Queued& q, int buf_index) const;
  void trace_completion(const Queued& q, int res) const;

  io_uring ring_{};
  bool fixed_ = false;
  bool chain_broken_ = false;  ///< an SQE of the chain being queued was failed by a failpoint
  std::vector<Queued> queued_;  ///< slots [0, used_) are in flight; later ones keep capacity
  std::size_t used_ = 0;
  std::size_t outstanding_ = 0;  ///< completions not yet handed out
};

}  // namespace walseg
