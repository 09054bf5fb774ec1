// The files this process made (include/walseg/made_files.h).
#include "walseg/made_files.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <map>
#include <mutex>
#include <utility>

namespace walseg::made_files {
namespace detail {
std::atomic<bool> tracking{false};
}

namespace {
std::mutex g_mutex;
// Identity -> birth time in nanoseconds (-1 where the filesystem keeps none).
std::map<std::pair<std::uint64_t, std::uint64_t>, std::int64_t>& made_set() {
  static auto* s = new std::map<std::pair<std::uint64_t, std::uint64_t>, std::int64_t>;  // never destroyed: threads may note late
  return *s;
}

// statx's birth time (ext4, xfs, btrfs, tmpfs keep one): a file made again under a freed
// inode number has another (break-it round 7 F5: ext4 gave a user's new file the number of
// one bench made and the user had removed, and bench removed it).
std::int64_t birth_ns(int dirfd, const char* name, int flags) {
  struct statx sx{};
  if (::statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) != 0 || (sx.stx_mask & STATX_BTIME) == 0)
    return -1;
  return static_cast<std::int64_t>(sx.stx_btime.tv_sec) * 1'000'000'000 + sx.stx_btime.tv_nsec;
}
}  // namespace

void start() { detail::tracking.store(true); }

std::int64_t birth_time_ns(int dirfd, const std::string& name) noexcept { return birth_ns(dirfd, name.c_str(), 0); }

void note_made(int fd) noexcept {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return;
  try {
    const std::int64_t born = birth_ns(fd, "", AT_EMPTY_PATH);
    std::lock_guard lock(g_mutex);
    made_set()[{st.st_dev, st.st_ino}] = born;
  } catch (...) {
    // Out of memory: the file is then taken for someone else's and left, never the reverse.
  }
}

void note_removed(std::uint64_t dev, std::uint64_t ino) noexcept {
  std::lock_guard lock(g_mutex);
  made_set().erase({dev, ino});
}

bool made(int dirfd, const std::string& name, const struct stat& st) {
  const std::int64_t born = birth_ns(dirfd, name.c_str(), 0);
  std::lock_guard lock(g_mutex);
  auto it = made_set().find({st.st_dev, st.st_ino});
  return it != made_set().end() && (it->second < 0 || born < 0 || it->second == born);
}

}  // namespace walseg::made_files
