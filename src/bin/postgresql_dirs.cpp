// Whether a path is in PostgreSQL's data directory or pg_wal (postgresql_dirs.h).
#include "postgresql_dirs.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "walseg/dir_scan.h"
#include "walseg/directory.h"
#include "walseg/error.h"

namespace walseg::tool {

std::optional<PostgresqlDirectory> postgresql_directory_of(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return std::nullopt;
  fs::path p = target;
  while (!fs::is_directory(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
  for (;; p = p.parent_path()) {
    try {
      const Directory d = Directory::open(p.string());
      struct stat st{};
      const bool data_dir = ::fstatat(d.fd(), "PG_VERSION", &st, 0) == 0 && S_ISREG(st.st_mode) &&
                            ::fstatat(d.fd(), "global", &st, 0) == 0 && S_ISDIR(st.st_mode);
      // The hint's PG_VERSION beside it holds for every subdirectory of a data directory: those
      // are named at the data directory's level.
      const bool pg_wal =
          (::fstatat(d.fd(), "archive_status", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) ||
          (p.filename() == "pg_wal" && !postgresql_pg_wal_hint(d).empty());
      if (data_dir || pg_wal) return PostgresqlDirectory{pg_wal ? "pg_wal" : "data directory", p.string(), p != target};
    } catch (const Error&) {
      // Unreadable: nothing to say about it.
    }
    if (!p.has_parent_path() || p.parent_path() == p) return std::nullopt;
  }
}

std::string describe(const std::string& option, const std::string& path, const PostgresqlDirectory& pg) {
  return fmt::format("{} \"{}\" is {}PostgreSQL's {} (\"{}\")", option, path, pg.inside ? "inside " : "", pg.kind,
                     pg.path);
}

void refuse_wal_in_postgresql_directory(const std::string& dir) {
  if (const auto pg = postgresql_directory_of(dir))
    throw std::invalid_argument(describe("--dir", dir, *pg) +
                                ": walseg's tool never puts a WAL of its own there (PostgreSQL's WAL is its "
                                "pg_wal's, which the extension preallocates); give a directory outside the data "
                                "directory");
}

}  // namespace walseg::tool
