// own_files: how walseg makes the files of a WAL directory (mode 0600, owned by the user it
// runs as, whatever the umask), and how it tells a file it may change from someone's.
//
// A name or the bytes in a file say nothing about who put it there: anyone can copy a segment
// to a future segment name, or write a PID into a file named walseg.lock (break-it round 23:
// a 0444 copy owned by another user was recycled and written into; a user's 0644 walseg.lock
// holding "4242" was rewritten, and a 0600 xlogtemp.4242 then removed as 4242's leftover).
// So every rule that lets walseg remove, rename, rewrite or write into an existing file asks
// this header too, as PostgreSQL's pg_file_create_mode fixes the mode of every file it makes.
//
// Two rules, by what a user does to such files:
// - walseg's private files (walseg.lock, walseg.control.tmp, xlogtemp.<pid>): nobody has a
//   reason to make or restore them, so they are walseg's only at mode 0600 exactly, owned by
//   the process's effective user ID.
// - segments: a DBA may restore one with `cp` (mode 0644 under the usual umask), so a segment
//   is walseg's to write into, rename or remove when that user owns it and may read and write it;
//   a read-only file or one of another user is someone's. Reading (dump, recover, ls) asks
//   neither rule: a snapshot may be read-only or another user's.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>

namespace walseg {

class File;

/// The mode of every file walseg makes in a WAL directory (as PostgreSQL's
/// pg_file_create_mode without group access).
inline constexpr mode_t kOwnFileMode = 0600;

/// Gives `f`, a file this process has just made with O_CREAT | O_EXCL, exactly kOwnFileMode
/// (fchmod), so that a umask such as 0277 does not make walseg's own file look like someone's
/// at the next opening; no syscall but fstat when the mode is right already. Throws
/// walseg::Error("change permissions of") naming f.path() with errno's text.
void set_own_file_mode(File& f);

/// Why the file whose lstat is `st` is not one of walseg's private files (see above): e.g.
/// "with mode 0644: walseg makes its files 0600", "owned by user ID 1000, not 0, the user
/// walseg runs as". nullopt when it is made as walseg makes them. Never throws.
std::optional<std::string> not_made_as_walseg_makes_files(const struct stat& st);

/// Why walseg may not write into, rename or remove the segment-named file whose lstat is `st`
/// (see above): owned by another user, or not writable by its owner. nullopt when it may
/// (the file's content is a separate question: dir_scan.h's foreign_reason). Never throws.
std::optional<std::string> not_walsegs_to_change(const struct stat& st);

/// For a file of the WAL that not_walsegs_to_change refuses (or that this user cannot read):
/// how to make it walseg's again, e.g. "make it readable and writable by its owner again
/// (chmod u+rw)", or to run walseg as its owner or chown it when another user owns it.
std::string how_to_give_back(const struct stat& st);

}  // namespace walseg
