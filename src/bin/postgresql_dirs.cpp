// Whether a path is in PostgreSQL's data directory or pg_wal (postgresql_dirs.h).
#include "postgresql_dirs.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "walseg/postgresql_signs.h"


namespace walseg::tool {

namespace {

// Looking up from the deepest existing directory of `target`.
std::optional<PostgresqlDirectory> look_up(std::filesystem::path p, const std::filesystem::path& target) {
  std::error_code ec;
  while (!std::filesystem::is_directory(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
  for (;; p = p.parent_path()) {
    // By a plain open, not Directory::open: this look comes before anything the command does,
    // and the failpoints count the command's own opens (storage_faults_test.sh).
    const std::string d = p.string();
    if (const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
      const auto sign = postgresql_sign_at(fd, p.filename().string());
      ::close(fd);
      if (sign) return PostgresqlDirectory{std::string(sign->kind), d, p != target, std::string(sign->sign)};
    }
    if (!p.has_parent_path() || p.parent_path() == p) return std::nullopt;
  }
}

}  // namespace

std::optional<PostgresqlDirectory> postgresql_directory_of(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return std::nullopt;
  const fs::path lexical = absolute.lexically_normal();
  // Where the kernel goes: each ".." from a link's target, not from the link (break-it round
  // 36: "pgwal/../x", pgwal a link to PGDATA/pg_wal, was checked as a sibling of the link and
  // written inside PGDATA).
  const fs::path target = fs::weakly_canonical(absolute, ec);
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
