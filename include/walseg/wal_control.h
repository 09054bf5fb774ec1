// wal_control.h: the walseg.control file of a WAL directory, as PostgreSQL's pg_control: which
// WAL lives in the directory (system identifier, segment and block size, append mode), the
// timeline it continues on, and where it starts (the oldest LSN still needed). The byte
// layout is WalControl in wal_format.h; this unit reads it and replaces it durably.
//
// Why it exists: without it, where a WAL starts and which files belong to it had to be
// inferred from the lowest file name and a file's first bytes, and a blank or foreign file
// with a low segment name made a writer start a fresh WAL over acknowledged records
// (a WAL directory must know what it is). With it, readers start at oldest_lsn, and only files carrying its
// system identifier (a long page header or a ready stamp, wal_format.h) are walseg's.
//
// The file is written when a directory gets its first segment manager (before any segment)
// and replaced, never edited in place: a fixed temporary name (walseg.control.tmp, removed
// first if a crash left it; a file there that is not walseg's is refused) opened O_EXCL,
// written, fsynced, exchanged with walseg.control (renameat2 RENAME_EXCHANGE, checked after),
// and the directory fsynced (PostgreSQL's durable_rename). A reader sees the old file or the
// new one, never a mix, so reading needs no lock.
//
// Not for: deciding when oldest_lsn moves (the segment manager does, at retire) or reading
// WAL (wal_reader.h). Thread-safety: functions are independent; a caller that replaces the
// file must hold the directory's DirLock. Lifetime: nothing passed in is retained.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "walseg/directory.h"
#include "walseg/wal_format.h"

namespace walseg {

inline constexpr const char* kControlFileName = "walseg.control";
inline constexpr const char* kControlTempFileName = "walseg.control.tmp";

/// The control file of `dir`, or nullopt when there is none. Throws walseg::Error: EINVAL
/// when the file exists but is not a valid control file (short, bad magic, CRC mismatch,
/// unknown version or flags), with a message naming the path, what is wrong and what to do;
/// the open or read error otherwise.
std::optional<WalControl> read_control(const Directory& dir);

/// Like read_control for a directory given by path, opened read-only (readers need no lock).
std::optional<WalControl> read_control(const std::string& dir_path);

/// Throws walseg::Error EEXIST (naming the file and why) when a file named walseg.control.tmp
/// in `dir` is not a leftover of write_control for the WAL with `system_id`: not a regular file
/// of one link, larger than a control file, not beginning with the control magic, or the
/// control file of another WAL (empty, all zeros or torn counts as a leftover: a crash before
/// its fsync; system_id 0, for a directory without one yet: only a new WAL's first control file
/// does, durable up to 0/0 at epoch 0, the one a crash before its rename leaves). walseg
/// removes only its own leftovers; another program's file under that name is refused, never
/// replaced. Thread-safety: as write_control.
void check_control_temp(const Directory& dir, std::uint64_t system_id);

/// What write_control does with a file under the temporary name: a writer's opening removes a
/// crash's leftover there (if check_control_temp accepts it); any later update refuses any
/// file there, which someone put there while walseg had the directory open.
enum class ControlTemp { kRemoveLeftover, kRefuse };

/// Replaces (or creates) dir's control file with `c`, durably (see above): a file under the
/// temporary name is removed first only with kRemoveLeftover and if check_control_temp
/// accepts it, else refused (EEXIST; a refusal changes nothing); the new file is made with O_EXCL (EEXIST if a file took the name); it
/// goes in by Directory::replace_checked, so a file moved onto either name is refused (EEXIST)
/// or, when it came out of the exchange, left under the temporary name with a WARNING. Throws
/// walseg::Error from the open, write, fsync, exchange or directory fsync, naming the path and
/// errno's text; after a throw the old file or the new one is in place, and the caller must
/// not act on the new values (they may not be durable). Returns the identity (fstat of the
/// descriptor it wrote through) of the file it put under walseg.control.
struct stat write_control(Directory& dir, const WalControl& c, ControlTemp temp = ControlTemp::kRefuse);

/// A new system identifier, as initdb's BootStrapXLOG makes one: seconds in the upper 32
/// bits, then microseconds and the low 12 bits of the PID. Unique enough across directories,
/// never reused by one machine.
std::uint64_t new_system_id();

/// "system identifier S, 16MB segments, 8kB pages, timeline 1, oldest needed 0/1000000" for
/// messages and `walseg ls`.
std::string describe(const WalControl& c);

}  // namespace walseg
