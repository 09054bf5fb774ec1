// Whether a path is in PostgreSQL's data directory or pg_wal (postgresql_dirs.h).
#include "postgresql_dirs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <string_view>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>


namespace walseg::tool {

namespace {

// A tablespace's location holds PG_<major>_<catalog version> (PostgreSQL's
// TABLESPACE_VERSION_DIRECTORY), e.g. PG_15_202209061.
bool holds_tablespace_version_directory(const std::string& d) {
  DIR* dir = ::opendir(d.c_str());
  if (dir == nullptr) return false;
  bool found = false;
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view n = e->d_name;
    if (!n.starts_with("PG_")) continue;
    const auto us = n.find('_', 3);
    auto digits = [](std::string_view v) {
      return !v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (us != std::string_view::npos && digits(n.substr(3, us - 3)) && digits(n.substr(us + 1))) {
      found = true;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

// Looking up from the deepest existing directory of `start`.
std::optional<PostgresqlDirectory> look_up(std::filesystem::path p, const std::filesystem::path& target) {
  std::error_code ec;
  while (!std::filesystem::is_directory(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
  for (;; p = p.parent_path()) {
    // By its path, not through Directory::open: this look comes before anything the command
    // does, and the failpoints count the command's own opens (storage_faults_test.sh).
    const std::string d = p.string();
    auto is = [&](const char* name, mode_t type, bool follow) {
      struct stat st{};
      return ::fstatat(AT_FDCWD, (d + "/" + name).c_str(), &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) == 0 &&
             (st.st_mode & S_IFMT) == type;
    };
    const bool data_dir = is("PG_VERSION", S_IFREG, true) && is("global", S_IFDIR, true);
    // PG_VERSION beside it holds for every subdirectory of a data directory: those are named
    // at the data directory's level.
    const bool archive_status = is("archive_status", S_IFDIR, false);
    const bool pg_wal = archive_status || (p.filename() == "pg_wal" && is("../PG_VERSION", S_IFREG, true));
    const bool tablespace = !data_dir && !pg_wal && holds_tablespace_version_directory(d);
    if (data_dir || pg_wal || tablespace)
      return PostgresqlDirectory{pg_wal ? "pg_wal" : data_dir ? "data directory" : "tablespace", d, p != target,
                                 data_dir         ? "it has PG_VERSION and global/"
                                 : archive_status ? "it has an archive_status directory"
                                 : pg_wal         ? "it is named pg_wal, with PG_VERSION beside it"
                                                  : "it holds a PG_<version>_<catalog version> directory"};
    if (!p.has_parent_path() || p.parent_path() == p) return std::nullopt;
  }
}

}  // namespace

std::optional<PostgresqlDirectory> postgresql_directory_of(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path lexical = fs::absolute(path, ec).lexically_normal();
  if (ec) return std::nullopt;
  const fs::path target = fs::weakly_canonical(lexical, ec);
  if (ec) return std::nullopt;
  // Links resolved (pg_wal a link to another disk, initdb -X), and as written: a path through
  // the data directory's pg_tblspc/<oid> link resolves outside it (break-it round 17 M2).
  if (auto pg = look_up(target, target)) return pg;
  return look_up(lexical, lexical);
}

std::string describe(const std::string& option, const std::string& path, const PostgresqlDirectory& pg) {
  return fmt::format("{} \"{}\" is {}what looks like PostgreSQL's {} (\"{}\": {})", option, path,
                     pg.inside ? "inside " : "", pg.kind, pg.path, pg.sign);
}

void refuse_wal_in_postgresql_directory(const std::string& dir) {
  if (const auto pg = postgresql_directory_of(dir))
    throw std::invalid_argument(describe("--dir", dir, *pg) +
                                ": walseg's tool never puts a WAL of its own there (PostgreSQL's WAL is its "
                                "pg_wal's, which the extension preallocates); give a directory outside the data "
                                "directory");
}

}  // namespace walseg::tool
