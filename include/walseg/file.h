// File: an owned file descriptor with the syscalls walseg needs, each checked.
//
// Every method goes through the failpoint registry (failpoint.h) under the syscall's name,
// records itself in io_trace, and throws walseg::Error worded as PostgreSQL words it
// ("could not write to file \"PATH\": No space left on device"). Writes loop over short
// transfers and EINTR until every byte requested is written or an error occurs.
//
// Not for: directories (see directory.h); choosing how a file is preallocated (see alloc).
// Thread-safety: distinct File objects are independent; one File may be used for positioned
// reads and writes from several threads at once, but not moved or closed concurrently.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "walseg/owned_fd.h"

namespace walseg {

class Directory;

class File {
 public:
  /// Moves and destruction come from OwnedFd; the destructor closes without checking (use
  /// close() where the result matters).
  File() = default;

  /// open(2). flags as for open (O_CLOEXEC is always added); mode for O_CREAT, default 0600.
  /// Throws Error("open") naming the path.
  static File open(const std::string& path, int flags, mode_t mode = 0600);
  /// openat(2) of entry `name` of `dir` (not a path): the file is found through the open
  /// directory, so a directory renamed or re-pointed by a symbolic link meanwhile is still the
  /// one used (the WAL never goes into another directory that took the name). Messages name
  /// dir.path_of(name). Throws Error("open").
  static File open_at(const Directory& dir, const std::string& name, int flags, mode_t mode = 0600);
  /// Existing entry `name` of `dir`, opened with `flags` only if it is a regular file, without
  /// opening anything else (open_regular.h: no device's open routine runs, no FIFO waits, a
  /// symbolic link is not followed). Returns a File that is not open when the entry is not a
  /// regular file; `found` says what it is (S_ISLNK: a symbolic link). Throws Error("open")
  /// naming dir.path_of(name) for the rest (ENOENT: no such entry). One "open" failpoint.
  static File open_at_if_regular(const Directory& dir, const std::string& name, int flags, struct stat& found);
  /// The same for a path a user gives (a settings file), symbolic links followed: what the
  /// path leads to is opened only if it is a regular file. Throws Error("open") naming `path`.
  static File open_if_regular(const std::string& path, int flags, struct stat& found);
  /// Opens this same file again with other flags (e.g. O_DIRECT, or buffered reads of an
  /// O_DIRECT file) through /proc/self/fd, so that neither a rename nor a new file under the
  /// old name can make it another file. Throws Error("open") naming path().
  File reopen(int flags) const;

  bool is_open() const noexcept { return fd_.fd() >= 0; }
  /// True when open() made the file itself (O_CREAT | O_EXCL): nobody else's bytes can be in
  /// it. The allocation layer fills only such files (allocator.h).
  bool created_exclusively() const noexcept { return created_; }
  int fd() const noexcept { return fd_.fd(); }
  const std::string& path() const noexcept { return fd_.path(); }

  /// Writes all n bytes at offset (bytes from the start of the file). Retries EINTR and short
  /// writes; throws Error("write") with "wrote X of N bytes" on failure.
  void pwrite_all(const void* buf, std::size_t n, std::uint64_t offset);
  /// Vectored form of pwrite_all; iov is not modified. total is the sum of iov lengths.
  void pwritev_all(const struct iovec* iov, int iovcnt, std::uint64_t offset);
  /// One pread(2); returns the bytes read (0 at end of file). Retries EINTR. Throws on error.
  std::size_t pread(void* buf, std::size_t n, std::uint64_t offset);

  /// fsync(2); throws Error("fsync"). Never retried after a failure (the first failure is final),
  /// except EINTR, which reports no writeback error (src/io/file.cpp says why): retried up to
  /// 64 times in a row, then thrown.
  void fsync();
  void fdatasync();  ///< fdatasync(2), as fsync(); throws Error("fdatasync")
  /// sync_file_range(2) over [0, end) with SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE:
  /// waits for writeback already under way there, then starts it for the pages still dirty.
  /// Durability needs fsync still; this only keeps a writer's dirty data small (as RocksDB's
  /// bytes_per_sync). Retries EINTR; throws Error("sync_file_range"), message "could not start
  /// writeback of file ...".
  void write_behind(std::uint64_t end);
  void ftruncate(std::uint64_t size_bytes);
  struct stat stat();

  /// fallocate(2) with `mode` over [offset, offset+len). Does not throw and does not retry:
  /// returns 0 or the errno, because what an errno means (unsupported, interrupted, full) is
  /// the allocation layer's decision (a fallback only on "not supported").
  int try_fallocate(int mode, std::uint64_t offset, std::uint64_t len) noexcept;

  /// posix_fadvise(POSIX_FADV_DONTNEED) over the whole file: a hint, failures are ignored.
  void advise_dontneed() noexcept;

  /// close(2), reporting its error (it can carry a delayed write error on NFS).
  void close();

 private:
  File(int fd, std::string path, bool created) : fd_(fd, std::move(path)), created_(created) {}
  OwnedFd fd_;
  bool created_ = false;
};

}  // namespace walseg
