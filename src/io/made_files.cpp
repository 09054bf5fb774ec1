// The files this process made (include/walseg/made_files.h).
#include "walseg/made_files.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
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

}  // namespace

Mark mark_of_fd(int fd) noexcept {
  Mark m;
  m.born_ns = birth_ns(fd, "", AT_EMPTY_PATH);
  if (m.born_ns < 0) m.generation = generation_of(fd);
  return m;
}

bool same_file(const Mark& made_as, const Mark& now) noexcept {
  if (made_as.born_ns >= 0 || now.born_ns >= 0) return made_as.born_ns >= 0 && made_as.born_ns == now.born_ns;
  return made_as.generation >= 0 && made_as.generation == now.generation;
}

void start() { detail::tracking.store(true); }

std::int64_t birth_time_ns(int dirfd, const std::string& name) noexcept { return birth_ns(dirfd, name.c_str(), 0); }

namespace {
bool born_after_its_mtime_at(int dirfd, const char* name, int flags) noexcept {
  struct statx sx{};
  if (::statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW, STATX_BTIME | STATX_MTIME, &sx) != 0 ||
      (sx.stx_mask & (STATX_BTIME | STATX_MTIME)) != (STATX_BTIME | STATX_MTIME))
    return false;
  const auto ns = [](const struct statx_timestamp& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  };
  return ns(sx.stx_btime) > ns(sx.stx_mtime);
}
}  // namespace

bool born_after_its_mtime(int dirfd, const std::string& name) noexcept {
  return born_after_its_mtime_at(dirfd, name.c_str(), 0);
}

bool born_after_its_mtime(int fd) noexcept { return born_after_its_mtime_at(fd, "", AT_EMPTY_PATH); }

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

namespace {
// Directory identity -> journal descriptor.
std::map<std::pair<std::uint64_t, std::uint64_t>, int>& journals() {
  static auto* j = new std::map<std::pair<std::uint64_t, std::uint64_t>, int>;  // never destroyed
  return *j;
}
std::atomic<int> g_journal_count{0};

void journal(const struct stat& file, const Mark& m, int dir_fd, const char* path) {
  if (g_journal_count.load(std::memory_order_relaxed) == 0) return;
  struct stat dir{};
  int rc = -1;
  if (dir_fd >= 0) {
    rc = ::fstat(dir_fd, &dir);
  } else if (path != nullptr) {
    std::string parent(path);
    const std::size_t slash = parent.rfind('/');
    parent = slash == std::string::npos ? "." : slash == 0 ? "/" : parent.substr(0, slash);
    rc = ::stat(parent.c_str(), &dir);
  }
  if (rc != 0) return;
  std::lock_guard lock(g_mutex);
  auto it = journals().find({dir.st_dev, dir.st_ino});
  if (it == journals().end()) return;
  char line[128];
  const int n = std::snprintf(line, sizeof line, "made %llu %llu %lld %lld\n", static_cast<unsigned long long>(file.st_dev),
                              static_cast<unsigned long long>(file.st_ino), static_cast<long long>(m.born_ns),
                              static_cast<long long>(m.generation));
  if (n > 0) (void)!::write(it->second, line, static_cast<std::size_t>(n));
}
}  // namespace

void note_made(int fd, int dir_fd, const char* path) noexcept {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return;
  try {
    const Mark m = mark_of_fd(fd);
    {
      std::lock_guard lock(g_mutex);
      made_set()[{st.st_dev, st.st_ino}] = m;
    }
    journal(st, m, dir_fd, path);
  } catch (...) {
    // Out of memory: the file is then taken for someone else's and left, never the reverse.
  }
}

void journal_in(int dir_fd, int journal_fd) noexcept {
  struct stat dir{};
  if (::fstat(dir_fd, &dir) != 0) return;
  try {
    std::lock_guard lock(g_mutex);
    if (journals().emplace(std::pair<std::uint64_t, std::uint64_t>{dir.st_dev, dir.st_ino}, journal_fd).second)
      g_journal_count.fetch_add(1);
  } catch (...) {
  }
}

void stop_journal(int dir_fd) noexcept {
  struct stat dir{};
  if (::fstat(dir_fd, &dir) != 0) return;
  std::lock_guard lock(g_mutex);
  if (journals().erase({dir.st_dev, dir.st_ino}) > 0) g_journal_count.fetch_sub(1);
}

std::vector<JournalEntry> read_journal(const std::string& text) {
  std::vector<JournalEntry> out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;  // a line a crash cut short
    const std::string line = text.substr(at, nl - at);
    at = nl + 1;
    unsigned long long dev = 0, ino = 0;
    long long born = -1, gen = -1;
    char tail = 0;
    if (std::sscanf(line.c_str(), "made %llu %llu %lld %lld%c", &dev, &ino, &born, &gen, &tail) != 4) continue;
    out.push_back(JournalEntry{dev, ino, Mark{born, gen}});
  }
  return out;
}

bool journaled(const std::vector<JournalEntry>& journal, int dirfd, const std::string& name, const struct stat& st) {
  const Mark now = mark_of(dirfd, name);
  for (const JournalEntry& e : journal)
    if (e.dev == st.st_dev && e.ino == st.st_ino && same_file(e.mark, now)) return true;
  return false;
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
