// Filesystem facts for a path: which filesystem it is on, its block size, whether it is
// copy-on-write, and how it is mounted. The allocation layer words its "not supported" errors
// with them, and `walseg bench` prints them above its results.
//
// Not for: deciding the init method (that is measured, not guessed; see the segment manager).
// Thread-safety: free functions without shared state.
#pragma once

#include <cstdint>
#include <string>

namespace walseg {

enum class FsType { kExt4, kXfs, kBtrfs, kTmpfs, kNfs, kZfs, kOverlay, kOther };

struct FsInfo {
  FsType type = FsType::kOther;
  std::string type_name;       ///< "ext4", "xfs", ...; for kOther the mount table's fstype
  std::uint64_t block_size = 0;///< statfs f_bsize, bytes
  std::uint64_t free_bytes = 0;///< statvfs f_bavail * f_frsize: space an unprivileged writer has
  std::uint64_t total_bytes = 0;
  /// btrfs (but not a NOCOW path) and zfs: preallocation reserves nothing lasting
  bool copy_on_write = false;
  bool nocow = false;          ///< btrfs: the path has the NOCOW attribute (chattr +C)
  bool memory_backed = false;  ///< tmpfs: its size limit, not a disk, runs out
  std::string mount_point;     ///< from /proc/self/mountinfo ("" if not found)
  std::string mount_options;   ///< e.g. "rw,relatime,data=ordered" ("" if not found)
  std::string device;          ///< mount source, e.g. "/dev/loop0"
};

/// statfs + the mount table entry covering `path` (which must exist).
/// Throws walseg::Error("statfs") naming the path.
FsInfo fs_info(const std::string& path);

/// "ext4", "xfs", "btrfs", "tmpfs", "nfs", "zfs", "overlay", "other".
const char* fs_type_name(FsType type);

}  // namespace walseg
