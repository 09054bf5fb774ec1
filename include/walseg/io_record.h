// io_record: an ordered record of every mutation the io layer makes (file contents, sizes,
// names, syncs), detailed enough to rebuild what a power cut at any point could leave on disk
// (tests/crash/crash_model.h replays it as README.md "Power-loss states" describes).
//
// Each event says what was done to which file: the path (both names for a rename or link), the
// file's identity (st_dev/st_ino from fstat at record time, so a file is followed through
// renames), the descriptor's status flags (O_DSYNC, O_SYNC, O_DIRECT, ...), offset and length,
// a copy of the bytes that reached the file (or just "zeros" when every byte was zero, which
// keeps a recorded segment fill small), and the result. File, Directory and IoRing
// record themselves (IoRing each write completion, with the bytes the kernel reports written,
// and each sync completion, through record_write/record_sync).
//
// Not for: production diagnostics (io_trace.h holds the cheap op/path/errno trace and the
// syscall counts); reads, stats and hints (they change nothing on disk); anything outside src/io,
// which makes every syscall that mutates a file.
// Cost: when recording is off, each call site pays one relaxed atomic load (active()); nothing
// else is done or allocated. When on, each event takes a mutex and copies the bytes written:
// meant for tests with small segments.
// Ordering: an event is appended after its syscall returned, so the record is one order in
// which the calls completed. A sync carries covers_before: the number of events recorded
// before the sync was called, so a sync racing another thread's write is never taken to cover
// it (the write may have landed after the sync began).
// Thread-safety: every function may be called from any thread. Lifetime: events own their
// copies; nothing passed in is kept.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace walseg::io_record {

enum class Op : std::uint8_t {
  kOpen,       ///< path, flags as passed (O_CREAT, O_EXCL, O_TRUNC included), identity
  kWrite,      ///< offset, length bytes reached the file (pwrite/pwritev, or an io_uring CQE)
  kFsync,      ///< fsync(2) of a file (or an io_uring IORING_OP_FSYNC)
  kFdatasync,  ///< fdatasync(2) of a file (or IORING_OP_FSYNC with IORING_FSYNC_DATASYNC)
  kTruncate,   ///< ftruncate(2) to offset bytes
  kFallocate,  ///< fallocate(2) with mode over [offset, offset + length)
  kClose,      ///< close(2)
  kRename,     ///< renameat2 path -> path2 (RENAME_NOREPLACE; or rename_over, which replaces path2)
  kLink,       ///< linkat path -> path2 (rename_noreplace's fallback, first half)
  kUnlink,     ///< unlinkat path; identity is the file removed (looked up before the call)
  kDirFsync,   ///< fsync(2) of the directory `path`
  kMkdir,      ///< mkdir(2) of `path`
  kExchange,   ///< renameat2(RENAME_EXCHANGE) of path and path2; identity is path's file
};

std::string_view to_string(Op op);

struct Event {
  Op op = Op::kOpen;
  std::string path;   ///< the file (or directory), as the caller named it
  std::string path2;  ///< kRename, kLink: the new name
  std::uint64_t dev = 0;  ///< identity of the file the event applies to (0/0: unknown)
  std::uint64_t ino = 0;
  int flags = 0;      ///< kOpen: the flags passed; others on a descriptor: fcntl(F_GETFL)
  int mode = 0;       ///< kFallocate: its mode (FALLOC_FL_KEEP_SIZE, ...)
  std::uint64_t offset = 0;  ///< kWrite, kFallocate: start; kTruncate: the new size
  std::uint64_t length = 0;  ///< kWrite: bytes that reached the file; kFallocate: range length
  bool zeros = false;        ///< kWrite: every byte was zero (data is then left empty)
  bool uring = false;        ///< made through io_uring (a completion), not a direct syscall
  std::vector<std::byte> data;  ///< kWrite: the bytes, unless zeros
  int result_errno = 0;         ///< 0 on success
  std::uint64_t covers_before = 0;  ///< syncs: events recorded before the call (see above)
};

namespace detail {
extern std::atomic<bool> recording;
}

/// Whether recording is on: the one relaxed load every call site makes first.
inline bool active() noexcept { return detail::recording.load(std::memory_order_relaxed); }

/// Starts recording, clearing any previous record.
void start();
/// Stops recording and returns every event since start(), in order.
std::vector<Event> stop();
/// Events recorded so far: an index into the record (a sync's covers_before, or the moment a
/// caller's flush returned).
std::uint64_t count();

/// Appends one event (if recording). The helpers below fill the common fields.
void record(Event e);

/// A write on descriptor fd (of `path`) that put `bytes` bytes, the first ones of iov, at
/// offset; err its errno (bytes 0). uring: an io_uring completion. No-op when off.
void record_write(int fd, const std::string& path, const struct iovec* iov, int iovcnt,
                  std::uint64_t offset, std::size_t bytes, int err, bool uring = false);
/// covers_before for a sync that covers everything recorded before it: an io_uring sync linked
/// behind its writes, whose completions were reaped (and recorded) before the sync's.
inline constexpr std::uint64_t kCoversAllRecorded = ~std::uint64_t{0};
/// An fsync (data_only false) or fdatasync of descriptor fd; covers_before as count() read
/// before the call was made, or kCoversAllRecorded. No-op when off.
void record_sync(int fd, const std::string& path, bool data_only, int err,
                 std::uint64_t covers_before, bool uring = false);
/// kOpen, kTruncate, kFallocate, kClose on descriptor fd (identity from fstat; fd < 0: none).
void record_file_op(Op op, int fd, const std::string& path, int flags, std::uint64_t offset,
                    std::uint64_t length, int mode, int err);
/// A namespace operation (kRename, kLink, kUnlink, kMkdir, kDirFsync, kExchange) with the identity given
/// (0/0 where unknown).
void record_name_op(Op op, const std::string& path, const std::string& path2, std::uint64_t dev,
                    std::uint64_t ino, int err, std::uint64_t covers_before = 0);

}  // namespace walseg::io_record
