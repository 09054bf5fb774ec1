// Mutation record of the io layer (include/walseg/io_record.h).
#include "walseg/io_record.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <mutex>

namespace walseg::io_record {

namespace detail {
std::atomic<bool> recording{false};
}

namespace {

std::mutex mu;
std::vector<Event> events;  // guarded by mu

// Identity and status flags of an open descriptor, taken at record time: the model follows a
// file by identity, not by the name it was opened under (which a rename may have changed).
void describe_fd(int fd, Event& e) {
  if (fd < 0) return;
  struct stat st{};
  if (::fstat(fd, &st) == 0) {
    e.dev = static_cast<std::uint64_t>(st.st_dev);
    e.ino = static_cast<std::uint64_t>(st.st_ino);
  }
  int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0 && e.op != Op::kOpen) e.flags = fl;
}

// Whether the first `bytes` bytes of the vector are all zero: a fill's megabytes of zeros are
// then recorded as a length alone.
bool all_zero(const struct iovec* iov, int iovcnt, std::size_t bytes) {
  static const std::array<std::byte, 4096> zero{};
  for (int i = 0; i < iovcnt && bytes > 0; ++i) {
    const auto* p = static_cast<const std::byte*>(iov[i].iov_base);
    for (std::size_t n = std::min(bytes, iov[i].iov_len); n > 0;) {
      std::size_t l = std::min(n, zero.size());
      if (std::memcmp(p, zero.data(), l) != 0) return false;
      p += l;
      n -= l;
      bytes -= l;
    }
  }
  return true;
}

}  // namespace

std::string_view to_string(Op op) {
  static constexpr std::string_view kNames[] = {"open",   "write", "fsync", "fdatasync",
                                                "ftruncate", "fallocate", "close", "rename",
                                                "link",   "unlink", "dir_fsync", "mkdir", "exchange"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(Op::kExchange) + 1, "a name per Op");
  return kNames[static_cast<std::size_t>(op)];
}

void start() {
  std::lock_guard lk(mu);
  events.clear();
  detail::recording.store(true);
}

std::vector<Event> stop() {
  std::lock_guard lk(mu);
  detail::recording.store(false);
  return std::move(events);
}

std::uint64_t count() {
  std::lock_guard lk(mu);
  return events.size();
}

void record(Event e) {
  std::lock_guard lk(mu);
  if (!active()) return;  // stopped between the caller's check and here
  if (e.covers_before == kCoversAllRecorded) e.covers_before = events.size();
  events.push_back(std::move(e));
}

void record_write(int fd, const std::string& path, const struct iovec* iov, int iovcnt,
                  std::uint64_t offset, std::size_t bytes, int err, bool uring) {
  if (!active()) return;
  Event e;
  e.op = Op::kWrite;
  e.path = path;
  e.offset = offset;
  e.length = err == 0 ? bytes : 0;
  e.uring = uring;
  e.result_errno = err;
  describe_fd(fd, e);
  // The bytes that reached the file are the first `bytes` of the vector, in order.
  e.zeros = all_zero(iov, iovcnt, e.length);
  if (!e.zeros) {
    e.data.reserve(e.length);
    std::size_t left = e.length;
    for (int i = 0; i < iovcnt && left > 0; ++i) {
      std::size_t l = std::min(left, iov[i].iov_len);
      const auto* p = static_cast<const std::byte*>(iov[i].iov_base);
      e.data.insert(e.data.end(), p, p + l);
      left -= l;
    }
  }
  record(std::move(e));
}

void record_sync(int fd, const std::string& path, bool data_only, int err,
                 std::uint64_t covers_before, bool uring) {
  if (!active()) return;
  Event e;
  e.op = data_only ? Op::kFdatasync : Op::kFsync;
  e.path = path;
  e.result_errno = err;
  e.covers_before = covers_before;
  e.uring = uring;
  describe_fd(fd, e);
  record(std::move(e));
}

void record_file_op(Op op, int fd, const std::string& path, int flags, std::uint64_t offset,
                    std::uint64_t length, int mode, int err) {
  if (!active()) return;
  Event e;
  e.op = op;
  e.path = path;
  e.flags = flags;
  e.offset = offset;
  e.length = length;
  e.mode = mode;
  e.result_errno = err;
  describe_fd(fd, e);
  record(std::move(e));
}

void record_name_op(Op op, const std::string& path, const std::string& path2, std::uint64_t dev,
                    std::uint64_t ino, int err, std::uint64_t covers_before) {
  if (!active()) return;
  Event e;
  e.op = op;
  e.path = path;
  e.path2 = path2;
  e.dev = dev;
  e.ino = ino;
  e.result_errno = err;
  e.covers_before = covers_before;
  record(std::move(e));
}

}  // namespace walseg::io_record
