#define BOOST_TEST_MODULE segment_manager_timeline
#include <boost/test/unit_test.hpp>

// Case C20 for the segment manager (include/walseg/segment_manager.h): new and recycled
// segments carry the current timeline, and switch_timeline starts the new timeline's segment
// as a copy of the old one up to the switch point. Expected names are written out by hand
// (timeline 10 is 0000000A in a name and "10" in a message); contents are compared byte by
// byte with what the test itself wrote.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "segment_manager_fixture.h"
#include "walseg/failpoint.h"
#include "walseg/io_trace.h"

using namespace walseg;
using namespace walseg_test;

namespace {

/// kSeg bytes of a non-zero pattern that differs per segment.
std::vector<char> pattern(SegNo segno) {
  std::vector<char> v(kSeg);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<char>(1 + (i + segno * 13) % 200);
  return v;
}

void write_whole(const std::string& path, const std::vector<char>& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY);
  BOOST_REQUIRE(fd >= 0);
  BOOST_REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(timeline, ManagerFixture)

BOOST_AUTO_TEST_CASE(C20_after_set_timeline_10_new_segments_are_named_0000000A) {
  SegmentManager m(dir.path(), opts(false));
  m.next_segment(1);
  m.next_segment(2);
  m.set_timeline(10);
  ReadySegment s = m.next_segment(3);
  BOOST_TEST(s.timeline == 10u);
  BOOST_TEST(s.name == "0000000A0000000000000003");
  BOOST_TEST(s.path == dir / "0000000A0000000000000003");
  BOOST_TEST(segment_files(dir.path()) ==
                 (std::vector<std::string>{"000000010000000000000001", "000000010000000000000002",
                                           "0000000A0000000000000003"}),
             boost::test_tools::per_element());
  check_invariant_1(dir.path());
}

BOOST_AUTO_TEST_CASE(C20_preallocator_makes_new_timeline_segments_after_set_timeline) {
  SegmentManager m(dir.path(), opts(true));
  BOOST_REQUIRE(m.wait_ready(2, kWait) == 2u);  // 1 and 2 on timeline 1
  m.set_timeline(10);
  BOOST_REQUIRE(m.wait_ready(2, kWait) == 2u);  // 1 and 2 again, now on timeline 10
  ReadySegment s = m.next_segment(1);
  BOOST_TEST(!s.stalled);
  BOOST_TEST(s.name == "0000000A0000000000000001");
  BOOST_REQUIRE(m.wait_ready(2, kWait) == 2u);
  BOOST_TEST(segment_files(dir.path()) ==
                 (std::vector<std::string>{"000000010000000000000001", "000000010000000000000002",
                                           "0000000A0000000000000001", "0000000A0000000000000002",
                                           "0000000A0000000000000003"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(C20_retire_recycles_old_timeline_segments_onto_new_timeline_names) {
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 3; ++k) write_marker(m.next_segment(k).path, k);
  m.set_timeline(10);
  m.next_segment(4);
  m.retire(4);  // horizon 4 + 4 - 1 = 7: timeline 1's 1, 2, 3 become timeline 10's 5, 6, 7
  BOOST_TEST(segment_files(dir.path()) ==
                 (std::vector<std::string>{"0000000A0000000000000004", "0000000A0000000000000005",
                                           "0000000A0000000000000006", "0000000A0000000000000007"}),
             boost::test_tools::per_element());
  BOOST_TEST(read_marker(dir / "0000000A0000000000000005") == 1u);
  BOOST_TEST(read_marker(dir / "0000000A0000000000000007") == 3u);
  BOOST_TEST(m.stats().recycled == 3u);
  ReadySegment s = m.next_segment(5);
  BOOST_TEST(s.recycled);
  BOOST_TEST(s.name == "0000000A0000000000000005");
}

BOOST_AUTO_TEST_CASE(C20_switch_timeline_copies_the_old_segment_up_to_the_switch_point_then_zeros) {
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 3; ++k) write_whole(m.next_segment(k).path, pattern(k));
  const std::uint64_t offset = 300001;  // not page-aligned on purpose
  io_trace::start();
  ReadySegment s = m.switch_timeline(2, 3 * kSeg + offset);
  io_trace::record("test.returned", s.path, 0);
  auto ev = io_trace::stop();
  BOOST_TEST(s.timeline == 2u);
  BOOST_TEST(s.segno == 3u);
  BOOST_TEST(s.name == "000000020000000000000003");
  BOOST_TEST(s.path == dir / "000000020000000000000003");

  std::vector<char> got = read_all(s.path);
  std::vector<char> old = pattern(3);
  BOOST_REQUIRE(got.size() == kSeg);
  // The copy is the old bytes but for the timeline field of each page header (bytes 4..8 of
  // every 8 kB page), which carries the new timeline, 2.
  std::vector<char> want(old.begin(), old.begin() + offset);
  for (std::size_t page = 0; page < want.size(); page += 8192) {
    const char tli2[4] = {2, 0, 0, 0};
    std::copy(tli2, tli2 + 4, want.begin() + static_cast<std::ptrdiff_t>(page + 4));
  }
  BOOST_TEST(std::equal(want.begin(), want.end(), got.begin()));
  BOOST_TEST(std::all_of(got.begin() + offset, got.end(), [](char c) { return c == 0; }));
  BOOST_TEST(read_all(dir / "000000010000000000000003") == old);  // the old one is untouched

  // Installed durably like any new segment (C13): rename, then directory fsync, then return.
  int rename_at = -1, dir_fsync = -1, returned = -1;
  for (int i = 0; i < static_cast<int>(ev.size()); ++i) {
    if (ev[i].op == "rename" && ev[i].path == s.path) rename_at = i;
    if (ev[i].op == "dir_fsync" && rename_at >= 0 && dir_fsync < 0) dir_fsync = i;
    if (ev[i].op == "test.returned") returned = i;
  }
  BOOST_TEST(rename_at >= 0);
  BOOST_TEST(dir_fsync > rename_at);
  BOOST_TEST(returned > dir_fsync);

  // The writer carries on in the new timeline: 3 is the copy, 4 is new on timeline 2.
  ReadySegment again = m.next_segment(3);
  BOOST_TEST(again.name == "000000020000000000000003");
  BOOST_TEST(!again.stalled);
  BOOST_TEST(m.next_segment(4).name == "000000020000000000000004");
  BOOST_TEST(!path_exists(dir / "000000010000000000000004"));
  check_invariant_1(dir.path());
}

BOOST_AUTO_TEST_CASE(C20_switch_at_a_segment_boundary_gives_an_all_zero_segment) {
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 2; ++k) write_whole(m.next_segment(k).path, pattern(k));
  ReadySegment s = m.switch_timeline(2, 2 * kSeg);
  std::vector<char> got = read_all(s.path);
  BOOST_REQUIRE(got.size() == kSeg);
  // Nothing to copy: zeros but for the ready stamp that says the file is this WAL's.
  const auto stamp = decode_ready_stamp(reinterpret_cast<const std::byte*>(got.data()));
  BOOST_REQUIRE(stamp.has_value());
  BOOST_TEST(stamp->timeline == 2u);
  BOOST_TEST(stamp->page_addr == 2 * kSeg);
  BOOST_TEST(std::all_of(got.begin() + kReadyStampBytes, got.end(), [](char c) { return c == 0; }));
  BOOST_TEST(m.control().timeline == 2u);
  BOOST_TEST(m.control().oldest_lsn == 2 * kSeg);
}

BOOST_AUTO_TEST_CASE(C20_switch_to_timeline_10_names_it_in_hex_and_logs_it_in_decimal) {
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 3; ++k) write_whole(m.next_segment(k).path, pattern(k));
  ReadySegment s = m.switch_timeline(10, 3 * kSeg + 300000);  // LSN 0x3493E0
  BOOST_TEST(s.name == "0000000A0000000000000003");
  BOOST_TEST(logs.count(LogLevel::kLog, "switched to timeline 10 at 0/3493E0") == 1u);
  BOOST_TEST(logs.count(LogLevel::kLog, "starts with 300000 bytes of timeline 1") == 1u);
}

BOOST_AUTO_TEST_CASE(C20_history_partial_and_backup_files_survive_a_switch_and_retire) {
  const std::vector<std::string> kept = {"00000002.history", "000000010000000000000003.partial",
                                         "000000010000000000000001.00000028.backup"};
  for (std::size_t i = 0; i < kept.size(); ++i) walseg_test::write_bytes(dir / kept[i], 0, 100, 'h');
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 3; ++k) m.next_segment(k);
  m.switch_timeline(2, 3 * kSeg + 4096);
  m.next_segment(4);
  m.retire(4);
  for (const auto& n : kept) {
    BOOST_TEST_CONTEXT(n) {
      BOOST_REQUIRE(path_exists(dir / n));
      BOOST_TEST(read_all(dir / n) == std::vector<char>(100, 'h'));
    }
  }
}

BOOST_AUTO_TEST_CASE(max_size_bound_counts_old_timeline_segments_still_on_disk) {
  // walseg.max_size bounds the directory, and a timeline switch does not empty it: the old
  // timeline's segments stay until retired, so the pool must not add the new timeline's on top.
  cfg.prealloc_segments = 8;
  cfg.min_size_bytes = 2 * kSeg;
  cfg.max_size_bytes = 3 * kSeg;
  cfg.recycle = false;
  SegmentManager m(dir.path(), opts(true));
  BOOST_REQUIRE(m.wait_ready(3, kWait) == 3u);
  m.set_timeline(10);
  BOOST_TEST(m.wait_ready(1, kSettle) == 0u);
  BOOST_TEST(segment_files(dir.path()).size() == 3u);
  m.retire(4);  // the old timeline's 1..3 are removed: room for the new timeline's
  BOOST_TEST(m.wait_ready(3, kWait) == 3u);
  BOOST_TEST(segment_files(dir.path()) ==
                 (std::vector<std::string>{"0000000A0000000000000001", "0000000A0000000000000002",
                                           "0000000A0000000000000003"}),
             boost::test_tools::per_element());
}

// ---------------------------------------------------------------------------------------------
// Error paths: each checks errno and the message text, and that nothing was switched.
// ---------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(switch_without_the_old_segment_fails_with_enoent_and_switches_nothing) {
  SegmentManager m(dir.path(), opts(false));
  m.next_segment(1);
  BOOST_CHECK_EXCEPTION(
      m.switch_timeline(2, 7 * kSeg + 100), Error,
      error_is(ENOENT, {"could not open file \"" + (dir / "000000010000000000000007") + "\"",
                        "No such file or directory"}));
  BOOST_TEST(!path_exists(dir / "000000020000000000000007"));
  BOOST_TEST(m.next_segment(2).name == "000000010000000000000002");  // still timeline 1
  check_invariant_1(dir.path());
}

BOOST_AUTO_TEST_CASE(switch_to_the_current_timeline_is_refused_with_einval) {
  SegmentManager m(dir.path(), opts(false));
  m.next_segment(1);
  BOOST_CHECK_EXCEPTION(m.switch_timeline(1, kSeg + 10), Error,
                        error_is(EINVAL, {"cannot switch to timeline 1: it is the current timeline"}));
}

BOOST_AUTO_TEST_CASE(switch_never_replaces_a_leftover_segment_of_the_new_timeline) {
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 3; ++k) m.next_segment(k);
  plant_segment(dir / "000000020000000000000003", 777);  // from an earlier, interrupted switch
  BOOST_CHECK_EXCEPTION(m.switch_timeline(2, 3 * kSeg + 10), Error,
                        error_is(EEXIST, {"000000020000000000000003", "file exists"}));
  BOOST_TEST(read_marker(dir / "000000020000000000000003") == 777u);
  BOOST_TEST(m.next_segment(4).name == "000000010000000000000004");  // not switched
}

BOOST_AUTO_TEST_CASE(switch_whose_directory_fsync_fails_leaves_no_new_segment_and_no_switch) {
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 3; ++k) m.next_segment(k);
  failpoint::arm("dir_fsync", {failpoint::Kind::kErrno, EIO, 0, 1, 1});
  BOOST_CHECK_EXCEPTION(m.switch_timeline(2, 3 * kSeg + 10), Error,
                        error_is(EIO, {"could not fsync directory \"" + dir.path() + "\"",
                                       "Input/output error"}));
  BOOST_TEST(!path_exists(dir / "000000020000000000000003"));
  BOOST_TEST(m.next_segment(4).name == "000000010000000000000004");
  check_invariant_1(dir.path());
}

BOOST_AUTO_TEST_SUITE_END()
