// Block-device counters for a directory: which block device its filesystem sends its I/O to,
// and what that device has done so far (the kernel's /sys/class/block/DEV/stat, documented in
// its Documentation/admin-guide/iostats.rst) and, on ext4, how many journal transactions jbd2
// has committed (/proc/fs/jbd2/DEV-8/info). `walseg bench` takes two samples around what it
// measures; their difference is what the device was asked to do, whoever asked.
//
// A loop device counts exactly what the filesystem on it sends (after the page cache, before
// the backing file's own filesystem), which is what "device bytes" means in the bench.
//
// Not for: attributing I/O to a process (the counters are per device, so anything else on the
// device during a sample is counted too; the bench detects it, this unit does not), devices
// below device-mapper or md (the counters of the device the filesystem is mounted on are read,
// not those of its members), or a btrfs spanning several devices (only the mount source).
// Thread-safety: free functions without shared state; a DeviceCounters is immutable after
// construction and may be sampled from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace walseg {

/// One reading of /sys/class/block/DEV/stat. Sectors are 512 bytes whatever the device's
/// logical block size (iostats.rst).
struct DiskStat {
  std::uint64_t read_ios = 0;       ///< field 1: reads completed
  std::uint64_t read_sectors = 0;   ///< field 3
  std::uint64_t write_ios = 0;      ///< field 5: writes completed
  std::uint64_t write_sectors = 0;  ///< field 7
  std::uint64_t in_flight = 0;      ///< field 9: requests issued but not completed, now
  bool has_flush = false;           ///< the 17-field format (kernel 5.5 and later)
  std::uint64_t flush_ios = 0;      ///< field 16: flush requests completed (if has_flush)
};

/// Parses the text of a stat file: 11 fields (before 4.18), 15 (4.18 to 5.4) or 17 (5.5 and
/// later), separated by blanks. nullopt when fewer than 11 numbers are there or one is not a
/// decimal number.
std::optional<DiskStat> parse_disk_stat(std::string_view text);

/// The transaction count of a jbd2 info file, whose first line reads
/// "N transactions (M requested), each up to B blocks". nullopt when it does not.
std::optional<std::uint64_t> parse_jbd2_transactions(std::string_view text);

/// Where the counters of a directory's device are. Paths are under the roots given to
/// find_block_device (normally /sys and /proc).
struct BlockDevice {
  std::string name;             ///< sysfs name, e.g. "loop3", "sda1", "dm-0"; "" when none
  std::string stat_path;        ///< .../class/block/NAME/stat
  /// Where flush requests are counted: the whole disk's stat for a partition (a flush goes to
  /// the disk, not to a range of it, so its count includes the disk's other partitions),
  /// otherwise stat_path.
  std::string flush_stat_path;
  std::string jbd2_info_path;   ///< .../fs/jbd2/NAME-8/info, or "" (no internal jbd2 journal)
  std::string why_not;          ///< when name is "": why there is no device to read
};

/// The block device under `dir` (which must exist): st_dev's /sys/dev/block/MAJ:MIN, or, where
/// st_dev is an anonymous device (btrfs, overlay, fuse), the block device its mount source
/// names in /proc/self/mountinfo. Never throws; a failure is a BlockDevice with why_not set
/// (e.g. "tmpfs is not on a block device"). The roots are for tests: a fake tree of the same
/// shape.
BlockDevice find_block_device(const std::string& dir, const std::string& sys_root = "/sys",
                              const std::string& proc_root = "/proc");

/// One sample of a device's counters.
struct DeviceSample {
  DiskStat disk;                                ///< of stat_path
  std::optional<std::uint64_t> flushes;         ///< of flush_stat_path; nullopt before 5.5
  std::optional<std::uint64_t> journal_commits; ///< jbd2 transactions; nullopt without jbd2
};

/// What a device did between two samples.
struct DeviceDelta {
  std::uint64_t bytes_written = 0;  ///< write sectors * 512
  std::uint64_t bytes_read = 0;     ///< read sectors * 512
  std::uint64_t write_ios = 0;
  std::optional<std::uint64_t> flushes;
  std::optional<std::uint64_t> journal_commits;
  DeviceDelta& operator+=(const DeviceDelta& o);
};

/// `after` minus `before` (counters that went backwards, e.g. a device re-created between the
/// samples, count as 0).
DeviceDelta operator-(const DeviceSample& after, const DeviceSample& before);

/// Reads the counters of one BlockDevice. Each sample opens and reads the files afresh (about
/// 10-30 microseconds; jbd2's info file is a snapshot taken at open).
class DeviceCounters {
 public:
  /// Throws walseg::Error("open"/"read") when dev has no stat file to read.
  explicit DeviceCounters(BlockDevice dev);
  const BlockDevice& device() const { return dev_; }
  /// Throws walseg::Error when a file that was readable at construction no longer is.
  DeviceSample sample() const;

 private:
  BlockDevice dev_;
};

}  // namespace walseg
