#define BOOST_TEST_MODULE fs_info
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/fs_info.h on the filesystems this machine really has: the test
// directory under /var/tmp (a disk filesystem) and /dev/shm (tmpfs) when present. Expected values
// come from statfs(2)/statvfs(2) and /proc/self/mountinfo read here, independently.

#include <sys/statfs.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "fs_test_util.h"
#include "walseg/error.h"
#include "walseg/fs_info.h"

using namespace walseg;
using walseg_test::error_is;

namespace {

// fstype of the mountinfo entry whose mount point is exactly `mp` (last one wins, as stacked).
std::string mountinfo_fstype(const std::string& mp) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line, found;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string w; ls >> w;) f.push_back(w);
    for (std::size_t i = 6; i + 1 < f.size(); ++i)
      if (f[i] == "-" && f[4] == mp) found = f[i + 1];
  }
  return found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fs_info_suite)

BOOST_AUTO_TEST_CASE(test_directory_facts_match_statfs_and_the_mount_table) {
  walseg_test::TempDir dir;
  struct statfs sf{};
  BOOST_REQUIRE(::statfs(dir.path().c_str(), &sf) == 0);
  FsInfo info = fs_info(dir.path());
  BOOST_TEST_MESSAGE("test dir " << dir.path() << ": " << info.type_name << " on "
                                 << info.device << " at " << info.mount_point << " ("
                                 << info.mount_options << ")");
  BOOST_TEST(info.block_size == static_cast<std::uint64_t>(sf.f_bsize));
  BOOST_TEST(info.total_bytes == static_cast<std::uint64_t>(sf.f_blocks) * sf.f_frsize);
  // Free space moves while other tests run (fs_cases allocates 1 GiB); 2 GiB is still far below
  // the reserved-blocks gap that would show f_bfree used in place of f_bavail on a large disk.
  std::uint64_t free_now = static_cast<std::uint64_t>(sf.f_bavail) * sf.f_frsize;
  BOOST_TEST(info.free_bytes + (2ull << 30) >= free_now);
  BOOST_TEST(info.free_bytes <= free_now + (2ull << 30));
  BOOST_REQUIRE(!info.mount_point.empty());
  BOOST_TEST(dir.path().rfind(info.mount_point == "/" ? "/" : info.mount_point + "/", 0) == 0u);
  BOOST_TEST(info.type_name == mountinfo_fstype(info.mount_point));
  if (sf.f_type == 0xEF53) {
    BOOST_TEST((info.type == FsType::kExt4));
    BOOST_TEST(!info.copy_on_write);
  }
  BOOST_TEST(!info.memory_backed);
  BOOST_TEST(!info.device.empty());
}

BOOST_AUTO_TEST_CASE(dev_shm_is_reported_as_memory_backed_tmpfs) {
  struct statfs sf{};
  if (::statfs("/dev/shm", &sf) != 0 || sf.f_type != 0x01021994) {
    BOOST_TEST_MESSAGE("SKIP: /dev/shm missing or not tmpfs here");
    return;
  }
  FsInfo info = fs_info("/dev/shm");
  BOOST_TEST((info.type == FsType::kTmpfs));
  BOOST_TEST(info.type_name == "tmpfs");
  BOOST_TEST(info.memory_backed);
  BOOST_TEST(!info.copy_on_write);
  BOOST_TEST(info.mount_point == "/dev/shm");
  BOOST_TEST(info.block_size == static_cast<std::uint64_t>(sf.f_bsize));
  BOOST_TEST(info.total_bytes == static_cast<std::uint64_t>(sf.f_blocks) * sf.f_frsize);
  BOOST_TEST(info.mount_options.find("rw") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(fs_type_names_are_the_documented_ones) {
  BOOST_TEST(fs_type_name(FsType::kExt4) == std::string("ext4"));
  BOOST_TEST(fs_type_name(FsType::kXfs) == std::string("xfs"));
  BOOST_TEST(fs_type_name(FsType::kBtrfs) == std::string("btrfs"));
  BOOST_TEST(fs_type_name(FsType::kTmpfs) == std::string("tmpfs"));
  BOOST_TEST(fs_type_name(FsType::kNfs) == std::string("nfs"));
  BOOST_TEST(fs_type_name(FsType::kZfs) == std::string("zfs"));
  BOOST_TEST(fs_type_name(FsType::kOverlay) == std::string("overlay"));
  BOOST_TEST(fs_type_name(FsType::kOther) == std::string("other"));
}

// ---- error paths ----

BOOST_AUTO_TEST_CASE(missing_path_throws_enoent_naming_it_and_statfs) {
  walseg_test::TempDir dir;
  BOOST_CHECK_EXCEPTION(fs_info(dir / "missing"), Error,
                        error_is(ENOENT, {"could not statfs file \"" + dir / "missing" +
                                          "\": No such file or directory"}));
}

BOOST_AUTO_TEST_SUITE_END()
