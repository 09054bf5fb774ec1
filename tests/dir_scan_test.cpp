#define BOOST_TEST_MODULE dir_scan
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/dir_scan.h: what the start-up scan keeps, removes, moves aside and
// leaves alone. Directories are built with plain syscalls (sparse ftruncate for 16 MB sizes:
// the scan looks at st_size only) and inspected afterwards with readdir/stat/read, so the
// expectations never come from the code under test. Contents and inode numbers are compared
// before and after to prove "left alone" and "moved aside with its content".

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "fs_test_util.h"
#include "walseg/dir_scan.h"
#include "walseg/directory.h"
#include "walseg/failpoint.h"
#include "walseg/io_trace.h"

using namespace walseg;
using walseg_test::error_is;
using walseg_test::list_names;
using walseg_test::path_exists;
using walseg_test::read_all;

namespace {

constexpr std::uint64_t k1MB = std::uint64_t{1} << 20;
constexpr std::uint64_t k16MB = 16 * k1MB;

/// Creates `name` with `size` bytes: the first min(size, 4096) bytes are `fill` (so content
/// can be compared), the rest a hole.
void make_file(const std::string& path, std::uint64_t size, char fill = 'x') {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  BOOST_REQUIRE_MESSAGE(fd >= 0, path);
  std::vector<char> head(std::min<std::uint64_t>(size, 4096), fill);
  BOOST_REQUIRE(::pwrite(fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()));
  BOOST_REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
  ::close(fd);
}

ino_t inode_of(const std::string& path) {
  struct stat st{};
  BOOST_REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_ino;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

struct ScanFixture : walseg_test::FreshDirFixture {
  Directory d = Directory::open(dir.path());
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(dir_scan, ScanFixture)

BOOST_AUTO_TEST_CASE(C20_scan_takes_only_strict_segment_names_and_leaves_other_wal_files_alone) {
  // The case's directory, for 16 MB segments (256 segments per xlogid, so a low part of 0x100
  // is out of range).
  const std::map<std::string, std::uint64_t> files = {
      {"000000010000000000000001", k16MB},                  // valid
      {"00000001000000000000000a", k16MB},                  // lower-case
      {"0000000A0000000000000002", k16MB},                  // timeline 10, valid
      {"000000010000000000000100", k16MB},                  // low part out of range
      {"00000001000000000000000", k16MB},                   // 23 characters
      {"000000020000000000000003.partial", k16MB},
      {"00000002.history", 40},
      {"000000010000000000000002.00000028.backup", 200},
      {"xlogtemp.1234", 8192},
      {"notes.txt", 10},
  };
  std::map<std::string, ino_t> inode;
  for (const auto& [name, size] : files) {
    make_file(dir / name, size, name[0]);
    inode[name] = inode_of(dir / name);
  }
  walseg_test::LogCapture logs;
  ScanReport r = scan_wal_directory(d, k16MB, false);

  BOOST_REQUIRE(r.segments.size() == 2u);
  BOOST_TEST(r.segments[0].timeline == 1u);
  BOOST_TEST(r.segments[0].segno == 1u);
  BOOST_TEST(r.segments[1].timeline == 10u);  // 0000000A is hex for 10
  BOOST_TEST(r.segments[1].segno == 2u);
  BOOST_TEST(r.removed_temps == std::vector<std::string>{"xlogtemp.1234"});
  BOOST_TEST(r.moved_aside.empty());
  const std::vector<std::string> alone = {
      "00000001000000000000000 (foreign file)",
      "000000010000000000000002.00000028.backup (backup history file)",
      "000000010000000000000100 (foreign file)",
      "00000001000000000000000a (foreign file)",
      "000000020000000000000003.partial (partial segment)",
      "00000002.history (timeline history file)",
      "notes.txt (foreign file)",
  };
  std::vector<std::string> got_alone = r.left_alone;  // the report's order is not specified
  std::sort(got_alone.begin(), got_alone.end());
  std::vector<std::string> want_alone = alone;
  std::sort(want_alone.begin(), want_alone.end());
  BOOST_TEST(got_alone == want_alone, boost::test_tools::per_element());

  // Everything but the temp file is still there, same inode, same size, same first bytes.
  for (const auto& [name, size] : files) {
    if (name == "xlogtemp.1234") {
      BOOST_TEST(!path_exists(dir / name));
      continue;
    }
    BOOST_TEST_CONTEXT(name) {
      BOOST_REQUIRE(path_exists(dir / name));
      BOOST_TEST(inode_of(dir / name) == inode[name]);
      auto st = walseg_test::stat_path(dir / name);
      BOOST_TEST(static_cast<std::uint64_t>(st.st_size) == size);
      BOOST_TEST(read_all(dir / name)[0] == name[0]);
    }
  }
  // Each foreign entry is reported once.
  BOOST_TEST(logs.count(LogLevel::kLog, "leaving \"" + dir.path() + "/notes.txt\" alone") == 1u);
  BOOST_TEST(logs.count(LogLevel::kLog, "removed leftover temporary file \"" + dir.path() +
                                            "/xlogtemp.1234\"") == 1u);
}

BOOST_AUTO_TEST_CASE(C10_wrong_size_segment_is_moved_aside_as_broken_with_its_content) {
  const std::string name = "000000010000000000000003";
  // 300000 bytes of a pattern, as a creation cut short by a full disk would leave.
  std::vector<char> content(300000);
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 + 1);
  {
    int fd = ::open((dir / name).c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    BOOST_REQUIRE(fd >= 0);
    BOOST_REQUIRE(::pwrite(fd, content.data(), content.size(), 0) == 300000);
    ::close(fd);
  }
  const ino_t ino = inode_of(dir / name);
  walseg_test::LogCapture logs;
  ScanReport r = scan_wal_directory(d, k1MB, false);

  BOOST_TEST(r.segments.empty());
  BOOST_TEST(r.moved_aside == std::vector<std::string>{name + " -> " + name + ".broken"});
  BOOST_TEST(!path_exists(dir / name));
  BOOST_REQUIRE(path_exists(dir / (name + ".broken")));
  BOOST_TEST(inode_of(dir / (name + ".broken")) == ino);
  BOOST_TEST(read_all(dir / (name + ".broken")) == content);
  BOOST_TEST(logs.count(LogLevel::kWarning, "has size 300000 bytes, expected 1048576") == 1u);
  BOOST_TEST(logs.count(LogLevel::kWarning, "\"" + dir.path() + "/" + name + "\"") == 1u);

  // A later scan leaves the moved-aside file alone as a foreign file.
  ScanReport again = scan_wal_directory(d, k1MB, false);
  BOOST_TEST(again.moved_aside.empty());
  BOOST_TEST(again.left_alone == std::vector<std::string>{name + ".broken (foreign file)"});
  BOOST_TEST(read_all(dir / (name + ".broken")) == content);
}

BOOST_AUTO_TEST_CASE(C10_broken_name_already_taken_moves_aside_to_broken_1_and_keeps_both) {
  const std::string name = "000000010000000000000005";
  make_file(dir / (name + ".broken"), 100, 'o');         // from an earlier start
  make_file(dir / (name + ".broken.1"), 0, 'z');  // and another
  make_file(dir / name, 2 * k1MB, 'n');                  // too long this time
  ScanReport r = scan_wal_directory(d, k1MB, false);
  BOOST_TEST(r.moved_aside == std::vector<std::string>{name + " -> " + name + ".broken.2"});
  BOOST_TEST(read_all(dir / (name + ".broken"))[0] == 'o');
  BOOST_TEST(walseg_test::stat_path(dir / (name + ".broken")).st_size == 100);
  BOOST_TEST(walseg_test::stat_path(dir / (name + ".broken.2")).st_size ==
             static_cast<off_t>(2 * k1MB));
  BOOST_TEST(read_all(dir / (name + ".broken.2"))[0] == 'n');
  BOOST_TEST(!path_exists(dir / name));
}

BOOST_AUTO_TEST_CASE(complete_segments_are_reported_sorted_by_timeline_then_segment) {
  for (const char* n : {"000000020000000000000001", "000000010000000000000FFF",
                        "000000010000000100000000", "000000010000000000000002"})
    make_file(dir / n, k1MB);
  ScanReport r = scan_wal_directory(d, k1MB, false);
  // 1 MB segments: 4096 per xlogid, so 00000001 00000000 = segment 4096.
  std::vector<std::string> got;  // "timeline/segno"
  for (const auto& s : r.segments) got.push_back(std::to_string(s.timeline) + "/" + std::to_string(s.segno));
  std::vector<std::string> want = {"1/2", "1/4095", "1/4096", "2/1"};
  BOOST_TEST(got == want, boost::test_tools::per_element());
  BOOST_TEST(r.removed_temps.empty());
  BOOST_TEST(r.moved_aside.empty());
  BOOST_TEST(r.left_alone.empty());
}

BOOST_AUTO_TEST_CASE(append_mode_keeps_short_segments_and_moves_aside_only_oversized_ones) {
  make_file(dir / "000000010000000000000001", 0);
  make_file(dir / "000000010000000000000002", 12345);
  make_file(dir / "000000010000000000000003", k1MB);
  make_file(dir / "000000010000000000000004", k1MB + 4096);
  ScanReport r = scan_wal_directory(d, k1MB, true);
  BOOST_TEST(r.segments.size() == 3u);
  BOOST_TEST(r.moved_aside ==
             std::vector<std::string>{"000000010000000000000004 -> 000000010000000000000004.broken"});
  // The same directory in fixed-size mode: the two short ones are not complete.
  ScanReport fixed = scan_wal_directory(d, k1MB, false);
  BOOST_TEST(fixed.segments.size() == 1u);
  BOOST_TEST(fixed.moved_aside.size() == 2u);
}

BOOST_AUTO_TEST_CASE(C11_temp_leftovers_of_both_spellings_are_removed_other_xlogtemp_names_kept) {
  make_file(dir / "xlogtemp.99999", k1MB);      // PostgreSQL's spelling
  make_file(dir / "xlogtemp.99999.7", 4096);    // walseg's counter spelling
  make_file(dir / "xlogtemp.0123", 10);         // leading zero: not our pattern
  make_file(dir / "xlogtemp.abc", 10);
  BOOST_REQUIRE(::mkdir((dir / "xlogtemp.5").c_str(), 0700) == 0);  // not a regular file
  ScanReport r = scan_wal_directory(d, k1MB, false);
  BOOST_TEST(r.removed_temps == (std::vector<std::string>{"xlogtemp.99999", "xlogtemp.99999.7"}),
             boost::test_tools::per_element());
  BOOST_TEST(list_names(dir.path()) ==
                 (std::vector<std::string>{"xlogtemp.0123", "xlogtemp.5", "xlogtemp.abc"}),
             boost::test_tools::per_element());
  BOOST_TEST(contains(r.left_alone, "xlogtemp.5 (not a regular file)"));
  BOOST_TEST(contains(r.left_alone, "xlogtemp.abc (foreign file)"));
}

BOOST_AUTO_TEST_CASE(symlinks_named_like_segments_or_temps_are_left_alone_with_their_targets) {
  walseg_test::TempDir outside;
  make_file(outside / "target", k1MB, 't');
  BOOST_REQUIRE(::symlink((outside / "target").c_str(), (dir / "000000010000000000000001").c_str()) == 0);
  BOOST_REQUIRE(::symlink((outside / "target").c_str(), (dir / "xlogtemp.42").c_str()) == 0);
  ScanReport r = scan_wal_directory(d, k1MB, false);
  BOOST_TEST(r.segments.empty());
  BOOST_TEST(r.removed_temps.empty());
  BOOST_TEST(r.left_alone == (std::vector<std::string>{"000000010000000000000001 (not a regular file)",
                                                       "xlogtemp.42 (not a regular file)"}),
             boost::test_tools::per_element());
  BOOST_TEST(path_exists(dir / "000000010000000000000001"));
  BOOST_TEST(path_exists(dir / "xlogtemp.42"));
  BOOST_TEST(read_all(outside / "target")[0] == 't');
}

BOOST_AUTO_TEST_CASE(lock_and_auto_cache_files_are_not_reported) {
  make_file(dir / "walseg.lock", 6);
  make_file(dir / "walseg.auto", 100);
  ScanReport r = scan_wal_directory(d, k1MB, false);
  BOOST_TEST(r.left_alone.empty());
  BOOST_TEST(path_exists(dir / "walseg.lock"));
  BOOST_TEST(path_exists(dir / "walseg.auto"));
}

BOOST_AUTO_TEST_CASE(C13_removals_and_renames_are_followed_by_one_directory_fsync) {
  make_file(dir / "xlogtemp.1", 10);
  make_file(dir / "000000010000000000000001", 10);
  make_file(dir / "000000010000000000000002", k1MB);
  io_trace::start();
  scan_wal_directory(d, k1MB, false);
  auto ev = io_trace::stop();
  int last_change = -1, dir_fsyncs = 0, dir_fsync_at = -1;
  for (int i = 0; i < static_cast<int>(ev.size()); ++i) {
    if (ev[i].op == "unlink" || ev[i].op == "rename") last_change = i;
    if (ev[i].op == "dir_fsync") {
      ++dir_fsyncs;
      dir_fsync_at = i;
      BOOST_TEST(ev[i].path == dir.path());
    }
  }
  BOOST_TEST(last_change >= 0);
  BOOST_TEST(dir_fsyncs == 1);
  BOOST_TEST(dir_fsync_at > last_change);
}

BOOST_AUTO_TEST_CASE(clean_directory_is_scanned_without_any_change_or_fsync) {
  make_file(dir / "000000010000000000000001", k1MB);
  make_file(dir / "notes.txt", 1);
  io_trace::start();
  scan_wal_directory(d, k1MB, false);
  auto ev = io_trace::stop();
  for (const auto& e : ev) {
    BOOST_TEST(e.op != "unlink");
    BOOST_TEST(e.op != "rename");
    BOOST_TEST(e.op != "dir_fsync");
  }
}

// ---------------------------------------------------------------------------------------------
// Error paths: each checks errno and the message text, and that nothing was lost.
// ---------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(failed_move_aside_reports_the_rename_and_keeps_the_file) {
  const std::string name = "000000010000000000000003";
  make_file(dir / name, 5000, 'w');
  failpoint::arm("rename", {failpoint::Kind::kErrno, EIO, 0, 1, 1});
  BOOST_CHECK_EXCEPTION(
      scan_wal_directory(d, k1MB, false), Error,
      error_is(EIO, {"could not rename file \"" + dir.path() + "/" + name + "\" to \"" +
                         dir.path() + "/" + name + ".broken\"",
                     "Input/output error"}));
  BOOST_TEST(walseg_test::stat_path(dir / name).st_size == 5000);
  BOOST_TEST(!path_exists(dir / (name + ".broken")));
}

BOOST_AUTO_TEST_CASE(failed_temp_removal_reports_the_unlink_with_its_path) {
  make_file(dir / "xlogtemp.77", 10);
  failpoint::arm("unlink", {failpoint::Kind::kErrno, EIO, 0, 1, 1});
  BOOST_CHECK_EXCEPTION(scan_wal_directory(d, k1MB, false), Error,
                        error_is(EIO, {"could not remove file \"" + dir.path() + "/xlogtemp.77\"",
                                       "Input/output error"}));
  BOOST_TEST(path_exists(dir / "xlogtemp.77"));
}

BOOST_AUTO_TEST_CASE(failed_directory_fsync_after_cleanup_is_reported_with_the_directory) {
  make_file(dir / "xlogtemp.77", 10);
  failpoint::arm("dir_fsync", {failpoint::Kind::kErrno, EIO, 0, 1, 1});
  BOOST_CHECK_EXCEPTION(scan_wal_directory(d, k1MB, false), Error,
                        error_is(EIO, {"could not fsync directory \"" + dir.path() + "\"",
                                       "Input/output error"}));
}

BOOST_AUTO_TEST_SUITE_END()
