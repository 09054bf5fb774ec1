// Filesystem detection (include/walseg/fs_info.h).
#include "walseg/fs_info.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "inject.h"
#include "walseg/error.h"

namespace walseg {
namespace {

// statfs f_type values (linux/magic.h; ZFS's is its own).
constexpr long kExt4Magic = 0xEF53;
constexpr long kXfsMagic = 0x58465342;
constexpr long kBtrfsMagic = 0x9123683E;
constexpr long kTmpfsMagic = 0x01021994;
constexpr long kNfsMagic = 0x6969;
constexpr long kZfsMagic = 0x2FC12FC1;
constexpr long kOverlayMagic = 0x794C7630;

// The inode flags of `path` (FS_IOC_GETFLAGS), or nullopt where the filesystem has none to
// report: btrfs keeps NOCOW there (chattr +C), which new files in a directory inherit.
std::optional<long> inode_flags(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  long flags = 0;
  const int rc = ::ioctl(fd, FS_IOC_GETFLAGS, &flags);
  ::close(fd);
  if (rc != 0) return std::nullopt;
  return flags;
}

// mountinfo escapes spaces and the like as \040 (octal).
std::string unescape_mount(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out.push_back(static_cast<char>(std::strtol(s.substr(i + 1, 3).c_str(), nullptr, 8)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// Finds the mountinfo line whose mount point is the longest prefix of `real`.
void fill_mount(const std::string& real, FsInfo& info) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::size_t best = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string w; ls >> w;) f.push_back(w);
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    std::size_t dash = 0;
    for (std::size_t i = 6; i < f.size(); ++i)
      if (f[i] == "-") dash = i;
    if (dash == 0 || dash + 2 >= f.size()) continue;
    std::string mp = unescape_mount(f[4]);
    bool covers = real == mp || mp == "/" ||
                  (real.size() > mp.size() && real.compare(0, mp.size(), mp) == 0 &&
                   real[mp.size()] == '/');
    if (!covers || mp.size() < best) continue;
    best = mp.size();
    info.mount_point = mp;
    info.device = unescape_mount(f[dash + 2]);
    // Per-mount options first, then the superblock's, each option once.
    info.mount_options = f[5];
    if (dash + 3 < f.size()) {
      std::istringstream so(f[dash + 3]);
      for (std::string opt; std::getline(so, opt, ',');)
        if (("," + info.mount_options + ",").find("," + opt + ",") == std::string::npos)
          info.mount_options += "," + opt;
    }
    // ext2/3/4 share one magic number and "other" has no name of ours: the table tells.
    if (info.type == FsType::kOther || info.type == FsType::kExt4) info.type_name = f[dash + 1];
  }
}

}  // namespace

const char* fs_type_name(FsType type) {
  switch (type) {
    case FsType::kExt4: return "ext4";
    case FsType::kXfs: return "xfs";
    case FsType::kBtrfs: return "btrfs";
    case FsType::kTmpfs: return "tmpfs";
    case FsType::kNfs: return "nfs";
    case FsType::kZfs: return "zfs";
    case FsType::kOverlay: return "overlay";
    case FsType::kOther: return "other";
  }
  return "other";
}

FsInfo fs_info(const std::string& path) {
  struct statfs sf{};
  int err = io_detail::inject("statfs");
  if (err == 0 && ::statfs(path.c_str(), &sf) != 0) err = errno;
  io_detail::done("statfs", path, err);
  if (err != 0) throw file_error(err, "statfs", path);
  FsInfo info;
  switch (static_cast<long>(sf.f_type)) {
    case kExt4Magic: info.type = FsType::kExt4; break;
    case kXfsMagic: info.type = FsType::kXfs; break;
    case kBtrfsMagic: info.type = FsType::kBtrfs; break;
    case kTmpfsMagic: info.type = FsType::kTmpfs; break;
    case kNfsMagic: info.type = FsType::kNfs; break;
    case kZfsMagic: info.type = FsType::kZfs; break;
    case kOverlayMagic: info.type = FsType::kOverlay; break;
    default: info.type = FsType::kOther; break;
  }
  info.type_name = fs_type_name(info.type);
  info.block_size = static_cast<std::uint64_t>(sf.f_bsize);
  info.memory_backed = info.type == FsType::kTmpfs;
  struct statvfs sv{};
  if (::statvfs(path.c_str(), &sv) == 0) {
    info.free_bytes = static_cast<std::uint64_t>(sv.f_bavail) * sv.f_frsize;
    info.total_bytes = static_cast<std::uint64_t>(sv.f_blocks) * sv.f_frsize;
  }
  std::error_code ec;
  auto real = std::filesystem::canonical(path, ec);
  fill_mount(ec ? path : real.string(), info);
  // btrfs copies on write unless the path is NOCOW (chattr +C) or the mount is nodatacow: then
  // it overwrites in place and a reservation lasts, as on ext4 (case C24). ZFS always copies.
  if (info.type == FsType::kBtrfs) {
    const auto flags = inode_flags(path);
    info.nocow = (flags && (*flags & FS_NOCOW_FL) != 0) ||
                 ("," + info.mount_options + ",").find(",nodatacow,") != std::string::npos;
  }
  info.copy_on_write = (info.type == FsType::kBtrfs && !info.nocow) || info.type == FsType::kZfs;
  return info;
}

}  // namespace walseg
