// What marks a directory as one of PostgreSQL's own. walseg reads and writes only a WAL it
// made itself; these signs let its refusals say what a directory most likely is, and let the
// tool keep its files out of PostgreSQL's (a file in pg_wal/archive_status is an instruction
// to the archiver; break-it round 16 L3). One test for every caller: the scan's hint on a
// directory without walseg.control, and the tool's check of --dir, --json and --ack-log.
#pragma once

#include <optional>
#include <string_view>

namespace walseg {

struct PostgresqlSign {
  std::string_view kind;  ///< "pg_wal", "data directory" or "tablespace"
  std::string_view sign;  ///< what gave it away, e.g. "it has an archive_status directory"
};

/// The sign, if any, that the directory open as `dirfd` is PostgreSQL's data directory
/// (PG_VERSION and global/), pg_wal (an archive_status directory, or named pg_wal with
/// PG_VERSION beside it: `name` is its last path component) or a tablespace location (a
/// PG_<major>_<catalog version> directory, PostgreSQL's TABLESPACE_VERSION_DIRECTORY). Looks
/// only at this directory, through the descriptor (no path is resolved again, so no failpoint
/// of Directory::open counts it). A guess from contents, and said as one. Never throws.
std::optional<PostgresqlSign> postgresql_sign_at(int dirfd, std::string_view name) noexcept;

}  // namespace walseg
