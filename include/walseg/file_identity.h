// FileIdentity: which file a name held when walseg made, recycled or found it, so that a later
// user of the name can tell that file from one put under the name since. Content cannot: a
// copy of a segment (cp, then mv onto its name) carries the same first page or ready stamp
// (break-it round 30 H2: such a copy, changed past its first page, was written into).
//
// The device and inode number, and the Mark of made_files.h (birth time, or the inode
// generation), since a filesystem may hand a freed inode number to the next file made. Where
// the filesystem keeps no mark (some FUSE and network filesystems), the device and inode alone.
//
// Not for: deciding whether a file is walseg's in the first place (dir_scan.h, own_files.h).
// Thread-safety: values; the functions touch only the descriptor given.
#pragma once

#include <sys/stat.h>

#include <cstdint>

#include "walseg/made_files.h"

namespace walseg {

struct FileIdentity {
  std::uint64_t dev = 0, ino = 0;  ///< st_dev, st_ino; ino 0: unknown
  made_files::Mark mark;
  bool known() const noexcept { return ino != 0; }
};

/// The identity of the file open on `fd` (fstat and its mark). Unknown (ino 0) if the fstat
/// fails. Never throws.
FileIdentity identity_of_fd(int fd) noexcept;
/// The identity of `name` in `dirfd`, whose lstat is `st` (the mark is read by name).
FileIdentity identity_of(int dirfd, const char* name, const struct stat& st) noexcept;

/// Whether `now` is the file `was` identifies: the same device and inode and, where either has
/// a mark, the same mark (made_files::same_file). False if either is unknown.
bool same_identity(const FileIdentity& was, const FileIdentity& now) noexcept;

}  // namespace walseg
