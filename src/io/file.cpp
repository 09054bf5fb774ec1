// File (include/walseg/file.h): checked syscalls on one descriptor.
#include "walseg/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include <fmt/format.h>

#include "inject.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/io_record.h"
#include "walseg/made_files.h"
#include "walseg/open_regular.h"

namespace walseg {

using io_detail::done;
using io_detail::inject;

File File::open(const std::string& path, int flags, mode_t mode) {
  int err = inject("open");
  int fd = -1;
  if (err == 0) {
    do {
      fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) err = errno;
  }
  done("open", path, err);
  if (io_record::active()) io_record::record_file_op(io_record::Op::kOpen, fd, path, flags, 0, 0, 0, err);
  if (err != 0) throw file_error(err, "open", path);
  const bool created = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
  if (created && made_files::active()) made_files::note_made(fd, -1, path.c_str());
  return File(fd, path, created);
}

File File::open_at(const Directory& dir, const std::string& name, int flags, mode_t mode) {
  const std::string path = dir.path_of(name);
  int err = inject("open");
  int fd = -1;
  if (err == 0) {
    do {
      fd = ::openat(dir.fd(), name.c_str(), flags | O_CLOEXEC, mode);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) err = errno;
  }
  done("open", path, err);
  if (io_record::active()) io_record::record_file_op(io_record::Op::kOpen, fd, path, flags, 0, 0, 0, err);
  if (err != 0) throw file_error(err, "open", path);
  const bool created = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
  if (created && made_files::active()) made_files::note_made(fd, dir.fd());
  return File(fd, path, created);
}

namespace {

// The one body of open_at_if_regular and open_if_regular: the failpoint, the trace, the error.
File regular_or_none(int dirfd, const std::string& name, const std::string& path, int flags, bool follow,
                     struct stat& found, File (*make)(int, const std::string&)) {
  int err = inject("open");
  RegularOpen r;
  if (err == 0) {
    r = open_if_regular(dirfd, name.c_str(), flags, follow);
    err = r.err;
  }
  done("open", path, err);
  if (io_record::active()) io_record::record_file_op(io_record::Op::kOpen, r.fd, path, flags, 0, 0, 0, err);
  if (err != 0) throw file_error(err, "open", path);
  found = r.st;
  if (r.not_regular) return File();
  return make(r.fd, path);
}

}  // namespace

File File::open_at_if_regular(const Directory& dir, const std::string& name, int flags, struct stat& found) {
  return regular_or_none(dir.fd(), name, dir.path_of(name), flags, false, found,
                         [](int fd, const std::string& path) { return File(fd, path, false); });
}

File File::open_if_regular(const std::string& path, int flags, struct stat& found) {
  return regular_or_none(AT_FDCWD, path, path, flags, true, found,
                         [](int fd, const std::string& p) { return File(fd, p, false); });
}

File File::reopen(int flags) const {
  const std::string self = "/proc/self/fd/" + std::to_string(fd());
  int err = inject("open");
  int fd = -1;
  if (err == 0) {
    do {
      fd = ::open(self.c_str(), (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) err = errno;
  }
  done("open", path(), err);
  if (io_record::active())
    io_record::record_file_op(io_record::Op::kOpen, fd, path(), flags & ~(O_CREAT | O_EXCL | O_TRUNC), 0, 0, 0, err);
  if (err != 0) throw file_error(err, "open", path());
  return File(fd, path(), false);
}

void File::pwrite_all(const void* buf, std::size_t n, std::uint64_t offset) {
  struct iovec iov{const_cast<void*>(buf), n};
  pwritev_all(&iov, 1, offset);
}

void File::pwritev_all(const struct iovec* iov_in, int iovcnt, std::uint64_t offset) {
  std::vector<struct iovec> iov(iov_in, iov_in + iovcnt);
  std::size_t total = 0;
  for (const auto& v : iov) total += v.iov_len;
  std::size_t written = 0;
  std::size_t first = 0;  // index of the first iovec with bytes left
  // Traced under the same name its failpoint uses, so a trace can be matched to failpoints.
  const char* name = iovcnt == 1 ? "pwrite" : "pwritev";
  while (written < total) {
    std::size_t want = total - written;
    int err = inject(name, &want);
    ssize_t r = -1;
    if (err == 0) {
      // A short failpoint limits the transfer by trimming the vector it sees.
      std::vector<struct iovec> part;
      std::size_t budget = want;
      for (std::size_t i = first; i < iov.size() && budget > 0; ++i) {
        std::size_t l = std::min(budget, iov[i].iov_len);
        part.push_back({iov[i].iov_base, l});
        budget -= l;
      }
      r = ::pwritev(fd(), part.data(), static_cast<int>(part.size()),
                    static_cast<off_t>(offset + written));
      if (r < 0) err = errno;
      if (io_record::active())
        io_record::record_write(fd(), path(), part.data(), static_cast<int>(part.size()), offset + written,
                                r < 0 ? 0 : static_cast<std::size_t>(r), err);
    }
    done(name, path(), err);
    if (err == EINTR) continue;
    if (err != 0)
      throw file_error(err, "write to", path(),
                       fmt::format("; wrote {} of {} bytes at offset {}", written, total, offset),
                       offset + written);
    if (r == 0)  // no progress and no error: treat as disk full, as PostgreSQL does
      throw file_error(ENOSPC, "write to", path(),
                       fmt::format("; wrote {} of {} bytes at offset {}", written, total, offset),
                       offset + written);
    std::size_t adv = static_cast<std::size_t>(r);
    written += adv;
    while (adv > 0 && first < iov.size()) {
      std::size_t l = std::min(adv, iov[first].iov_len);
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + l;
      iov[first].iov_len -= l;
      adv -= l;
      if (iov[first].iov_len == 0) ++first;
    }
  }
}

std::size_t File::pread(void* buf, std::size_t n, std::uint64_t offset) {
  for (;;) {
    int err = inject("pread", &n);
    ssize_t r = -1;
    if (err == 0) {
      r = ::pread(fd(), buf, n, static_cast<off_t>(offset));
      if (r < 0) err = errno;
    }
    done("pread", path(), err);
    if (err == EINTR) continue;
    if (err != 0) throw file_error(err, "read", path(), fmt::format(" at offset {}", offset), offset);
    return static_cast<std::size_t>(r);
  }
}

namespace {
/// EINTRs in a row after which a sync reports EINTR (then final, as any failed sync).
constexpr int kMaxSyncEintrRetries = 64;

// fsync/fdatasync are never retried on failure: the first failure is final,
// since the kernel may have dropped the dirty pages and a second call would report success.
// EINTR alone is retried, as PostgreSQL's pg_fsync and pg_fdatasync do: Linux hands out a
// writeback error through the file's errseq cursor and returns it as itself (EIO, ENOSPC),
// and local filesystems never return EINTR. It comes from filesystems whose own request can
// be interrupted (FUSE's daemon, NFS's commit), and those check the cursor first and return
// its error in preference (fuse_fsync, nfs_file_fsync_commit), so an EINTR means nothing was
// consumed and a retry asks afresh. XXX: that is how those filesystems are written, not a
// documented contract. The bound keeps a daemon that always answers EINTR from spinning.
void sync_call(int fd, const std::string& path, bool data_only) {
  const char* name = data_only ? "fdatasync" : "fsync";
  for (int retries = 0;; ++retries) {
    // Read before the call: the sync covers only what completed before it began.
    const std::uint64_t before = io_record::active() ? io_record::count() : 0;
    int err = inject(name);
    if (err == 0 && (data_only ? ::fdatasync(fd) : ::fsync(fd)) != 0) err = errno;
    done(name, path, err);
    if (io_record::active()) io_record::record_sync(fd, path, data_only, err, before);
    if (err == 0) return;
    if (err != EINTR) throw file_error(err, name, path);
    if (retries == kMaxSyncEintrRetries)
      throw file_error(err, name, path, fmt::format(" (gave up after {} interrupted calls)", retries + 1));
  }
}
}  // namespace

void File::fsync() { sync_call(fd(), path(), false); }
void File::fdatasync() { sync_call(fd(), path(), true); }

void File::write_behind(std::uint64_t end) {
  int err = inject("sync_file_range");
  if (err == 0) {
    int r;
    do {
      r = ::sync_file_range(fd(), 0, static_cast<off_t>(end), SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE);
    } while (r != 0 && errno == EINTR);
    if (r != 0) err = errno;
  }
  done("sync_file_range", path(), err);
  if (err != 0) throw file_error(err, "start writeback of", path(), " (sync_file_range)");
}

void File::ftruncate(std::uint64_t size_bytes) {
  int err = inject("ftruncate");
  if (err == 0) {
    int r;
    do {
      r = ::ftruncate(fd(), static_cast<off_t>(size_bytes));
    } while (r != 0 && errno == EINTR);
    if (r != 0) err = errno;
  }
  done("ftruncate", path(), err);
  if (io_record::active())
    io_record::record_file_op(io_record::Op::kTruncate, fd(), path(), 0, size_bytes, 0, 0, err);
  if (err != 0)
    throw file_error(err, "truncate", path(), fmt::format(" to {} bytes", size_bytes), size_bytes);
}

struct stat File::stat() {
  struct stat st{};
  int err = inject("fstat");
  if (err == 0 && ::fstat(fd(), &st) != 0) err = errno;
  done("fstat", path(), err);
  if (err != 0) throw file_error(err, "stat", path());
  return st;
}

int File::try_fallocate(int mode, std::uint64_t offset, std::uint64_t len) noexcept {
  int err = inject("fallocate");
  if (err == 0 && ::fallocate(fd(), mode, static_cast<off_t>(offset), static_cast<off_t>(len)) != 0)
    err = errno;
  done("fallocate", path(), err);
  if (io_record::active())
    io_record::record_file_op(io_record::Op::kFallocate, fd(), path(), 0, offset, len, mode, err);
  return err;
}

void File::advise_dontneed() noexcept {
  ::posix_fadvise(fd(), 0, 0, POSIX_FADV_DONTNEED);
  done("fadvise", path(), 0);
}

void File::close() {
  if (!is_open()) return;
  int err = inject("close");
  // The close's event carries the identity the descriptor had, taken while it is still open.
  io_record::Event closing;
  if (io_record::active()) {
    struct stat st{};
    if (::fstat(fd(), &st) == 0) closing = {.dev = st.st_dev, .ino = st.st_ino};
  }
  int fd = fd_.release();
  // close(2) is never retried: on Linux the descriptor is gone even when it reports EINTR.
  if (::close(fd) != 0 && err == 0) err = errno;
  done("close", path(), err);
  if (io_record::active()) {
    closing.op = io_record::Op::kClose;
    closing.path = path();
    closing.result_errno = err;
    io_record::record(std::move(closing));
  }
  if (err != 0) throw file_error(err, "close", path());
}

}  // namespace walseg
