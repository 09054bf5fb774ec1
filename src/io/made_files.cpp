// The files this process made (include/walseg/made_files.h).
#include "walseg/made_files.h"

#include <sys/stat.h>

#include <mutex>
#include <set>
#include <utility>

namespace walseg::made_files {
namespace detail {
std::atomic<bool> tracking{false};
}

namespace {
std::mutex g_mutex;
std::set<std::pair<std::uint64_t, std::uint64_t>>& made_set() {
  static auto* s = new std::set<std::pair<std::uint64_t, std::uint64_t>>;  // never destroyed: threads may note late
  return *s;
}
}  // namespace

void start() { detail::tracking.store(true); }

void note_made(int fd) noexcept {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return;
  try {
    std::lock_guard lock(g_mutex);
    made_set().emplace(st.st_dev, st.st_ino);
  } catch (...) {
    // Out of memory: the file is then taken for someone else's and left, never the reverse.
  }
}

void note_removed(std::uint64_t dev, std::uint64_t ino) noexcept {
  std::lock_guard lock(g_mutex);
  made_set().erase({dev, ino});
}

bool made(std::uint64_t dev, std::uint64_t ino) {
  std::lock_guard lock(g_mutex);
  return made_set().count({dev, ino}) != 0;
}

}  // namespace walseg::made_files
