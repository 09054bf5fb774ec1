// The files this process made (include/walseg/made_files.h).
#include "walseg/made_files.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <utility>

namespace walseg::made_files {
namespace detail {
std::atomic<bool> tracking{false};
}

namespace {
std::mutex g_mutex;
// Identity -> the mark the file had when it was made.
std::map<std::pair<std::uint64_t, std::uint64_t>, Mark>& made_set() {
  static auto* s = new std::map<std::pair<std::uint64_t, std::uint64_t>, Mark>;  // never destroyed: threads may note late
  return *s;
}

// statx's birth time (ext4 with 256-byte inodes, xfs, btrfs, tmpfs keep one): a file made
// again under a freed inode number has another (break-it round 7 F5: ext4 gave a user's new
// file the number of one bench made and the user had removed, and bench removed it).
std::int64_t birth_ns(int dirfd, const char* name, int flags) {
  struct statx sx{};
  if (::statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) != 0 || (sx.stx_mask & STATX_BTIME) == 0)
    return -1;
  return static_cast<std::int64_t>(sx.stx_btime.tv_sec) * 1'000'000'000 + sx.stx_btime.tv_nsec;
}

// The inode's generation, which ext2/3/4 give each new inode (FS_IOC_GETVERSION): where no
// birth time is kept (ext3, ext4 with 128-byte inodes), what tells a reused inode number apart
// (break-it round 13 F2: there bench removed a user's file that got the number of its own).
std::int64_t generation_of(int fd) {
  int gen = 0;
  if (::ioctl(fd, FS_IOC_GETVERSION, &gen) != 0) return -1;
  return static_cast<std::int64_t>(static_cast<std::uint32_t>(gen));
}

Mark mark_of_fd(int fd) {
  Mark m;
  m.born_ns = birth_ns(fd, "", AT_EMPTY_PATH);
  if (m.born_ns < 0) m.generation = generation_of(fd);
  return m;
}
}  // namespace

bool same_file(const Mark& made_as, const Mark& now) noexcept {
  if (made_as.born_ns >= 0 || now.born_ns >= 0) return made_as.born_ns >= 0 && made_as.born_ns == now.born_ns;
  return made_as.generation >= 0 && made_as.generation == now.generation;
}

void start() { detail::tracking.store(true); }

std::int64_t birth_time_ns(int dirfd, const std::string& name) noexcept { return birth_ns(dirfd, name.c_str(), 0); }

Mark mark_of(int dirfd, const std::string& name) noexcept {
  Mark m;
  m.born_ns = birth_ns(dirfd, name.c_str(), 0);
  if (m.born_ns >= 0) return m;
  // Only a regular file is opened: opening a device or FIFO can act on it.
  struct stat st{};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return m;
  const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return m;
  struct stat opened{};
  // The generation of the file that was stat'ed, not of one moved onto the name in between.
  if (::fstat(fd, &opened) == 0 && opened.st_dev == st.st_dev && opened.st_ino == st.st_ino) m.generation = generation_of(fd);
  ::close(fd);
  return m;
}

void note_made(int fd) noexcept {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return;
  try {
    const Mark m = mark_of_fd(fd);
    std::lock_guard lock(g_mutex);
    made_set()[{st.st_dev, st.st_ino}] = m;
  } catch (...) {
    // Out of memory: the file is then taken for someone else's and left, never the reverse.
  }
}

void note_removed(std::uint64_t dev, std::uint64_t ino, const Mark& removed) noexcept {
  std::lock_guard lock(g_mutex);
  auto it = made_set().find({dev, ino});
  // Another thread may have made a file under the freed number between the unlink and this
  // call (break-it round 13 F1: the new segment was forgotten and left as "not bench's").
  if (it != made_set().end() && same_file(it->second, removed)) made_set().erase(it);
}

bool made(int dirfd, const std::string& name, const struct stat& st) {
  const Mark now = mark_of(dirfd, name);
  std::lock_guard lock(g_mutex);
  auto it = made_set().find({st.st_dev, st.st_ino});
  return it != made_set().end() && same_file(it->second, now);
}

}  // namespace walseg::made_files
