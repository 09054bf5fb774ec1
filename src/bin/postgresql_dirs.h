// Whether a path is in PostgreSQL's data directory or pg_wal: walseg's tool writes nothing
// there. Its files would take the server's space (a full pg_wal makes PostgreSQL PANIC), and a
// file in pg_wal/archive_status is an instruction to PostgreSQL's archiver (break-it round 16
// L3: `--ack-log .../archive_status/X.ready` made the archiver look for a segment X). The
// extension is what works in pg_wal; walseg_bench() keeps max_wal_size free there.
#pragma once

#include <optional>
#include <string>

namespace walseg::tool {

struct PostgresqlDirectory {
  std::string kind;  ///< "pg_wal", "data directory" or "tablespace"
  std::string path;  ///< that directory, links resolved
  bool inside = false;  ///< the path given is below it (not that directory itself)
  std::string sign;     ///< what gave it away: "it has an archive_status directory", ...
};

/// The PostgreSQL data directory (PG_VERSION and global/), pg_wal (an archive_status
/// directory, or named pg_wal beside PG_VERSION) or tablespace location (it holds a
/// PG_<major>_<catalog version> directory) that `path` is, or is inside, looking up from its
/// deepest existing directory, with links resolved and then as written; nullopt when none. A
/// bind mount or a copy elsewhere of such a directory carries no sign of it and is not found.
/// Never throws.
std::optional<PostgresqlDirectory> postgresql_directory_of(const std::string& path);

/// `option "path" is [inside ]what looks like PostgreSQL's KIND ("P": SIGN)`, for the
/// refusals' messages (a guess from its contents, said as one: new-user trial 15).
std::string describe(const std::string& option, const std::string& path, const PostgresqlDirectory& pg);

/// For write and create: throws std::invalid_argument (a usage error, before anything is made)
/// when `dir` is or is inside PostgreSQL's data directory or pg_wal (break-it round 16 L4: a
/// WAL was started in a data directory, and segments were made in pg_wal/archive_status).
void refuse_wal_in_postgresql_directory(const std::string& dir);

}  // namespace walseg::tool
