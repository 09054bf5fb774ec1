// What marks a directory as one of PostgreSQL's own (include/walseg/postgresql_signs.h).
#include "walseg/postgresql_signs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace walseg {
namespace {

bool has(int dirfd, const char* name, mode_t type, bool follow) {
  struct stat st{};
  return ::fstatat(dirfd, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == type;
}

bool all_digits(std::string_view v) {
  return !v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos;
}

// PG_<major>_<catalog version>, e.g. PG_15_202209061.
bool holds_tablespace_version_directory(int dirfd) {
  const int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return false;
  }
  bool found = false;
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view n = e->d_name;
    if (!n.starts_with("PG_")) continue;
    const auto us = n.find('_', 3);
    if (us != std::string_view::npos && all_digits(n.substr(3, us - 3)) && all_digits(n.substr(us + 1))) {
      found = true;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

}  // namespace

std::optional<PostgresqlSign> postgresql_sign_at(int dirfd, std::string_view name) noexcept {
  // PG_VERSION beside it holds for every subdirectory of a data directory, so the data
  // directory's own sign is PG_VERSION with global/, and only pg_wal is known by its parent.
  if (has(dirfd, "PG_VERSION", S_IFREG, true) && has(dirfd, "global", S_IFDIR, true))
    return PostgresqlSign{"data directory", "it has PG_VERSION and global/"};
  if (has(dirfd, "archive_status", S_IFDIR, false))
    return PostgresqlSign{"pg_wal", "it has an archive_status directory"};
  if (name == "pg_wal" && has(dirfd, "../PG_VERSION", S_IFREG, true))
    return PostgresqlSign{"pg_wal", "it is named pg_wal, with PG_VERSION beside it"};
  if (holds_tablespace_version_directory(dirfd))
    return PostgresqlSign{"tablespace", "it holds a PG_<version>_<catalog version> directory"};
  return std::nullopt;
}

}  // namespace walseg
