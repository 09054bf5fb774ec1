#define BOOST_TEST_MODULE device_stats
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/device_stats.h: the stat and jbd2 parsers on texts of the kernel's
// formats, the device lookup on fake sysfs/procfs trees of the real shape (a partition, a whole
// disk, a filesystem without a device), and, as root, on loop-mounted ext4 and btrfs images,
// where a known write must show up in the counters.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fs_test_util.h"
#include "walseg/device_stats.h"

namespace fs = std::filesystem;
using walseg::BlockDevice;
using walseg::DeviceCounters;
using walseg::DeviceSample;

namespace {

// A line of /sys/block/DEV/stat from a 6.x kernel: 17 fields.
constexpr const char* kStat17 =
    "    4810     1553   328627     2477   700693   185514 24212012   210811        3   141660   327955"
    "        0        0        0        0   197498   114666\n";

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A fake /sys whose /sys/dev/block/MAJ:MIN (of `dev`) links to DISK/PART or DISK (part empty).
void fake_sys(const fs::path& root, dev_t dev, const std::string& disk, const std::string& part) {
  const fs::path disk_dir = root / "devices/virtual/block" / disk;
  write_file(disk_dir / "stat", "1 0 8 0 10 0 80 0 0 0 0 0 0 0 0 77 0\n");
  fs::path target = disk_dir;
  if (!part.empty()) {
    target = disk_dir / part;
    write_file(target / "stat", "1 0 8 0 4 0 32 0 0 0 0 0 0 0 0 0 0\n");
    write_file(target / "partition", "1\n");
  }
  fs::create_directories(root / "dev/block");
  fs::create_symlink(target, root / "dev/block" / (std::to_string(major(dev)) + ":" + std::to_string(minor(dev))));
}

dev_t dev_of(const std::string& path) {
  struct stat st{};
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_dev;
}

bool root_with(const char* tool) {
  return ::geteuid() == 0 && std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// An image file of `mb` MiB made by `mkfs` and loop-mounted at a fresh directory; unmounted and
// removed on destruction.
struct LoopMount {
  walseg_test::TempDir dir;
  std::string mnt = dir / "mnt";
  bool mounted = false;
  LoopMount(const std::string& mkfs, int mb, const std::string& opts = "") {
    const std::string img = dir / "fs.img";
    fs::create_directory(mnt);
    const std::string cmd = "truncate -s " + std::to_string(mb) + "M " + img + " && " + mkfs + " " + img +
                            " >/dev/null 2>&1 && mount -o loop" + opts + " " + img + " " + mnt;
    BOOST_REQUIRE_MESSAGE(std::system(cmd.c_str()) == 0, cmd);
    mounted = true;
  }
  ~LoopMount() {
    if (mounted) (void)std::system(("umount " + mnt).c_str());
  }
};

// Writes `bytes` non-zero bytes to a new file in `dir` and fdatasyncs it.
void write_and_sync(const std::string& dir, std::size_t bytes) {
  const int fd = ::open((dir + "/f").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  BOOST_REQUIRE(fd >= 0);
  std::vector<char> buf(bytes, 'x');
  BOOST_REQUIRE(::write(fd, buf.data(), buf.size()) == static_cast<ssize_t>(buf.size()));
  BOOST_REQUIRE(::fdatasync(fd) == 0);
  ::close(fd);
}

bool is_tmpfs(const char* path) {
  struct statfs sf{};
  return ::statfs(path, &sf) == 0 && static_cast<long>(sf.f_type) == 0x01021994;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(parsing)

BOOST_AUTO_TEST_CASE(seventeen_field_stat_gives_sectors_and_flushes) {
  const auto st = walseg::parse_disk_stat(kStat17);
  BOOST_REQUIRE(st);
  BOOST_TEST(st->read_ios == 4810u);
  BOOST_TEST(st->read_sectors == 328627u);
  BOOST_TEST(st->write_ios == 700693u);
  BOOST_TEST(st->write_sectors == 24212012u);
  BOOST_TEST(st->in_flight == 3u);
  BOOST_TEST(st->has_flush);
  BOOST_TEST(st->flush_ios == 197498u);  // field 16, not 15 (discard ticks) or 17 (flush ticks)
}

BOOST_AUTO_TEST_CASE(eleven_and_fifteen_field_stats_have_no_flush_count) {
  for (const char* text : {"1 2 3 4 5 6 7 8 9 10 11\n", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"}) {
    const auto st = walseg::parse_disk_stat(text);
    BOOST_REQUIRE(st);
    BOOST_TEST(st->write_sectors == 7u);
    BOOST_TEST(!st->has_flush);
  }
}

BOOST_AUTO_TEST_CASE(short_or_non_numeric_stat_is_rejected) {
  BOOST_TEST(!walseg::parse_disk_stat("1 2 3 4 5 6 7 8 9 10"));
  BOOST_TEST(!walseg::parse_disk_stat("1 2 3 4 5 6 x 8 9 10 11"));
  BOOST_TEST(!walseg::parse_disk_stat("1 2 3 4 5 6 -7 8 9 10 11"));
  BOOST_TEST(!walseg::parse_disk_stat(""));
}

BOOST_AUTO_TEST_CASE(jbd2_info_first_line_gives_transactions) {
  const std::string info =
      "5236 transactions (5212 requested), each up to 8192 blocks\n"
      "average: \n  0ms waiting for transaction\n  12 handles per transaction\n";
  BOOST_TEST(walseg::parse_jbd2_transactions(info).value_or(0) == 5236u);
  BOOST_TEST(!walseg::parse_jbd2_transactions("average: 5236 transactions\n"));
  BOOST_TEST(!walseg::parse_jbd2_transactions("x transactions (1 requested)\n"));
  // A count on a later line is not the first line's.
  BOOST_TEST(!walseg::parse_jbd2_transactions("average:\n5 transactions\n"));
}

BOOST_AUTO_TEST_CASE(delta_is_sectors_times_512_and_never_negative) {
  DeviceSample a, b;
  a.disk.write_sectors = 100;
  b.disk.write_sectors = 108;
  a.disk.read_sectors = 50;  // went backwards: a re-created device
  b.disk.read_sectors = 10;
  a.flushes = 3;
  b.flushes = 5;
  b.journal_commits = 9;  // only one side has it: not measurable
  const auto d = b - a;
  BOOST_TEST(d.bytes_written == 8u * 512u);
  BOOST_TEST(d.bytes_read == 0u);
  BOOST_TEST(d.flushes.value_or(99) == 2u);
  BOOST_TEST(!d.journal_commits);
  walseg::DeviceDelta sum{.flushes = 1};
  sum += d;
  BOOST_TEST(sum.flushes.value_or(99) == 3u);
  sum += walseg::DeviceDelta{};  // a delta without flushes makes the sum unmeasurable
  BOOST_TEST(!sum.flushes);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(lookup)

BOOST_AUTO_TEST_CASE(partition_reads_its_own_sectors_and_its_disks_flushes) {
  walseg_test::TempDir t;
  fake_sys(t / "sys", dev_of(t.path()), "sdz", "sdz1");
  write_file(fs::path(t / "proc") / "fs/jbd2/sdz1-8/info", "7 transactions (7 requested), each up to 1024 blocks\n");
  const BlockDevice d = walseg::find_block_device(t.path(), t / "sys", t / "proc");
  BOOST_TEST(d.name == "sdz1");
  BOOST_TEST(d.stat_path.ends_with("/sdz/sdz1/stat"));
  BOOST_TEST(d.flush_stat_path.ends_with("/sdz/stat"));
  BOOST_TEST(d.jbd2_info_path == t / "proc/fs/jbd2/sdz1-8/info");
  const DeviceSample s = DeviceCounters(d).sample();
  BOOST_TEST(s.disk.write_sectors == 32u);        // the partition's
  BOOST_TEST(s.flushes.value_or(0) == 77u);       // the disk's
  BOOST_TEST(s.journal_commits.value_or(0) == 7u);
}

BOOST_AUTO_TEST_CASE(whole_disk_counts_its_own_flushes_and_has_no_journal_without_jbd2) {
  walseg_test::TempDir t;
  fake_sys(t / "sys", dev_of(t.path()), "vdq", "");
  fs::create_directories(fs::path(t / "proc") / "fs/jbd2/vdq1-8");  // another device's journal
  const BlockDevice d = walseg::find_block_device(t.path(), t / "sys", t / "proc");
  BOOST_TEST(d.name == "vdq");
  BOOST_TEST(d.flush_stat_path == d.stat_path);
  BOOST_TEST(d.jbd2_info_path.empty());
  const DeviceSample s = DeviceCounters(d).sample();
  BOOST_TEST(s.disk.write_sectors == 80u);
  BOOST_TEST(!s.journal_commits);
}

BOOST_AUTO_TEST_CASE(no_device_says_why_and_cannot_be_sampled) {
  walseg_test::TempDir t;
  fs::create_directories(fs::path(t / "sys") / "dev/block");  // nothing for this st_dev
  write_file(fs::path(t / "proc") / "self/mountinfo", "");
  const BlockDevice d = walseg::find_block_device(t.path(), t / "sys", t / "proc");
  BOOST_TEST(d.name.empty());
  BOOST_TEST(d.why_not.find("in the mount table") != std::string::npos, d.why_not);
  BOOST_CHECK_THROW(DeviceCounters{d}, walseg::Error);
  const BlockDevice gone = walseg::find_block_device(t / "missing");
  BOOST_TEST(gone.why_not.find("could not stat") != std::string::npos, gone.why_not);
}

BOOST_AUTO_TEST_CASE(tmpfs_is_not_on_a_block_device,
                     *boost::unit_test::precondition([](auto) { return is_tmpfs("/dev/shm"); })) {
  const BlockDevice d = walseg::find_block_device("/dev/shm");
  BOOST_TEST(d.name.empty());
  BOOST_TEST(d.why_not.find("tmpfs") != std::string::npos, d.why_not);
}

// Root only: the counters of a real loop device move by at least what was written and synced.
BOOST_AUTO_TEST_CASE(loop_ext4_counts_a_synced_write_a_flush_and_a_journal_commit,
                     *boost::unit_test::precondition([](auto) { return root_with("mkfs.ext4"); })) {
  LoopMount m("mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0", 64);
  const BlockDevice d = walseg::find_block_device(m.mnt);
  BOOST_TEST_REQUIRE(d.name.starts_with("loop"), d.name << " " << d.why_not);
  BOOST_TEST(d.flush_stat_path == d.stat_path);
  BOOST_TEST_REQUIRE(!d.jbd2_info_path.empty());
  DeviceCounters c(d);
  const DeviceSample before = c.sample();
  constexpr std::size_t kBytes = 1 << 20;
  write_and_sync(m.mnt, kBytes);  // a new file: its size and extent go through the journal
  const auto delta = c.sample() - before;
  BOOST_TEST(delta.bytes_written >= kBytes);
  BOOST_TEST(delta.journal_commits.value_or(0) >= 1u);
  BOOST_TEST(delta.flushes.value_or(0) >= 1u);
}

// Root only: btrfs's st_dev is anonymous; the mount table's source names the loop device.
BOOST_AUTO_TEST_CASE(loop_btrfs_is_found_through_the_mount_source,
                     *boost::unit_test::precondition([](auto) { return root_with("mkfs.btrfs"); })) {
  LoopMount m("mkfs.btrfs -q -f", 160);
  struct stat st{};
  BOOST_REQUIRE(::stat(m.mnt.c_str(), &st) == 0);
  BOOST_TEST(major(st.st_dev) == 0u);  // the case this test is about
  const BlockDevice d = walseg::find_block_device(m.mnt);
  BOOST_TEST_REQUIRE(d.name.starts_with("loop"), d.name << " " << d.why_not);
  BOOST_TEST(d.jbd2_info_path.empty());
  DeviceCounters c(d);
  const DeviceSample before = c.sample();
  write_and_sync(m.mnt, 1 << 20);
  BOOST_TEST((c.sample() - before).bytes_written >= (1u << 20));
}

BOOST_AUTO_TEST_SUITE_END()
