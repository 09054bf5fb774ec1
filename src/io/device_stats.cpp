// Block-device counters (include/walseg/device_stats.h).
#include "walseg/device_stats.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "walseg/error.h"

namespace walseg {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kSectorBytes = 512;  // iostats.rst: "sectors" are 512 bytes, always

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\n') ++j;
    if (j > i) out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<std::uint64_t> number(std::string_view w) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  if (ec != std::errc() || end != w.data() + w.size()) return std::nullopt;
  return v;
}

// A whole small file (sysfs, procfs: their size is not known before reading), or the errno.
std::string read_small(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw file_error(errno, "open", path);
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw file_error(err, "read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

DiskStat read_stat(const std::string& path) {
  auto st = parse_disk_stat(read_small(path));
  if (!st) throw make_error(0, "read", path, fmt::format("could not parse file \"{}\": not a block device stat file", path));
  return *st;
}

// /sys/dev/block/MAJ:MIN resolved: the device's sysfs directory, or "" if there is none.
fs::path sysfs_dir(const std::string& sys_root, dev_t dev) {
  std::error_code ec;
  fs::path p = fs::canonical(fmt::format("{}/dev/block/{}:{}", sys_root, major(dev), minor(dev)), ec);
  return ec ? fs::path() : p;
}

// The mount source and filesystem type of the mount covering `dir` (the longest mount point
// that is a prefix of its real path). Not by st_dev: btrfs gives each subvolume an anonymous
// device of its own, which the mount table's major:minor (the superblock's) does not show.
std::pair<std::string, std::string> mount_source(const std::string& proc_root, const std::string& dir) {
  std::error_code ec;
  const std::string real = fs::canonical(dir, ec).string();
  std::ifstream in(proc_root + "/self/mountinfo");
  std::pair<std::string, std::string> best;
  std::size_t best_len = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string w; ls >> w;) f.push_back(w);
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    std::size_t dash = 0;
    for (std::size_t i = 6; i < f.size() && dash == 0; ++i)
      if (f[i] == "-") dash = i;
    if (dash == 0 || dash + 2 >= f.size()) continue;
    const std::string& mp = f[4];  // XXX: \040-escaped names are not unescaped; none here
    const bool covers = real == mp || mp == "/" ||
                        (real.size() > mp.size() && real.compare(0, mp.size(), mp) == 0 && real[mp.size()] == '/');
    if (covers && mp.size() >= best_len) {
      best_len = mp.size();
      best = {f[dash + 2], f[dash + 1]};
    }
  }
  return best;
}

BlockDevice from_sysfs(const fs::path& dir, const std::string& proc_root) {
  BlockDevice d;
  d.name = dir.filename().string();
  d.stat_path = (dir / "stat").string();
  // A partition's directory has a "partition" file and sits inside its disk's directory.
  std::error_code ec;
  d.flush_stat_path = fs::exists(dir / "partition", ec) ? (dir.parent_path() / "stat").string() : d.stat_path;
  const std::string jbd2 = fmt::format("{}/fs/jbd2/{}-8/info", proc_root, d.name);
  if (fs::exists(jbd2, ec)) d.jbd2_info_path = jbd2;
  return d;
}

}  // namespace

std::optional<DiskStat> parse_disk_stat(std::string_view text) {
  const auto w = words(text);
  if (w.size() < 11) return std::nullopt;
  std::vector<std::uint64_t> v;
  for (auto s : w) {
    auto n = number(s);
    if (!n) return std::nullopt;
    v.push_back(*n);
  }
  DiskStat st;
  st.read_ios = v[0];
  st.read_sectors = v[2];
  st.write_ios = v[4];
  st.write_sectors = v[6];
  st.in_flight = v[8];
  st.has_flush = v.size() >= 17;
  if (st.has_flush) st.flush_ios = v[15];
  return st;
}

std::optional<std::uint64_t> parse_jbd2_transactions(std::string_view text) {
  const auto w = words(text.substr(0, text.find('\n')));
  if (w.size() < 2 || w[1] != "transactions") return std::nullopt;
  return number(w[0]);
}

BlockDevice find_block_device(const std::string& dir, const std::string& sys_root, const std::string& proc_root) {
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0) return BlockDevice{.why_not = fmt::format("could not stat \"{}\": {}", dir, errno_text(errno))};
  if (auto p = sysfs_dir(sys_root, st.st_dev); !p.empty()) return from_sysfs(p, proc_root);
  // An anonymous st_dev: btrfs names its device in the mount table; tmpfs, fuse, nfs have none.
  const auto [source, type] = mount_source(proc_root, dir);
  struct stat src{};
  if (!source.empty() && source[0] == '/' && ::stat(source.c_str(), &src) == 0 && S_ISBLK(src.st_mode))
    if (auto p = sysfs_dir(sys_root, src.st_rdev); !p.empty()) return from_sysfs(p, proc_root);
  if (type.empty()) return BlockDevice{.why_not = fmt::format("no mount covering \"{}\" in the mount table", dir)};
  return BlockDevice{.why_not = fmt::format("{} (mount source \"{}\") is not on a block device", type, source)};
}

DeviceDelta& DeviceDelta::operator+=(const DeviceDelta& o) {
  bytes_written += o.bytes_written;
  bytes_read += o.bytes_read;
  write_ios += o.write_ios;
  if (flushes && o.flushes) *flushes += *o.flushes;
  else flushes.reset();
  if (journal_commits && o.journal_commits) *journal_commits += *o.journal_commits;
  else journal_commits.reset();
  return *this;
}

DeviceDelta operator-(const DeviceSample& after, const DeviceSample& before) {
  auto diff = [](std::uint64_t a, std::uint64_t b) { return a >= b ? a - b : 0; };
  DeviceDelta d;
  d.bytes_written = diff(after.disk.write_sectors, before.disk.write_sectors) * kSectorBytes;
  d.bytes_read = diff(after.disk.read_sectors, before.disk.read_sectors) * kSectorBytes;
  d.write_ios = diff(after.disk.write_ios, before.disk.write_ios);
  if (after.flushes && before.flushes) d.flushes = diff(*after.flushes, *before.flushes);
  if (after.journal_commits && before.journal_commits)
    d.journal_commits = diff(*after.journal_commits, *before.journal_commits);
  return d;
}

DeviceCounters::DeviceCounters(BlockDevice dev) : dev_(std::move(dev)) {
  if (dev_.stat_path.empty()) throw make_error(0, "open", "", "no block device to read: " + dev_.why_not);
  (void)sample();  // every file readable now, or the error names the one that is not
}

DeviceSample DeviceCounters::sample() const {
  DeviceSample s;
  s.disk = read_stat(dev_.stat_path);
  const DiskStat f = dev_.flush_stat_path == dev_.stat_path ? s.disk : read_stat(dev_.flush_stat_path);
  if (f.has_flush) s.flushes = f.flush_ios;
  if (!dev_.jbd2_info_path.empty()) {
    const std::string path = dev_.jbd2_info_path;
    s.journal_commits = parse_jbd2_transactions(read_small(path));
    if (!s.journal_commits) throw make_error(0, "read", path, fmt::format("could not parse file \"{}\": no transaction count", path));
  }
  return s;
}

}  // namespace walseg
