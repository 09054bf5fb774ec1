#define BOOST_TEST_MODULE segment_manager
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/segment_manager.h: the preallocation pool, stalls, retire (recycle
// and remove), the recycle horizon in use, files the manager must never touch, and the syscall
// order that makes a handed-out segment durable (C13). Timeline cases (C20) are in
// segment_manager_timeline_test.cpp, error paths and C05 in segment_manager_error_test.cpp,
// crash points in segment_manager_crash_test.cpp.
//
// Method: 1 MB segments (the minimum) in a fresh directory under /var/tmp; the directory is
// inspected with readdir/stat/read, and expected names are spelled out by an independent
// formula (1 MB segments: 4096 per xlogid). Waiting is bounded (wait_ready with generous
// timeouts); nothing asserts how long anything took.

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "segment_manager_fixture.h"
#include "walseg/failpoint.h"
#include "walseg/io_trace.h"
#include "walseg/segment_manager.h"

using namespace walseg;
using namespace std::chrono_literals;

using namespace walseg_test;

BOOST_FIXTURE_TEST_SUITE(pool, ManagerFixture)

BOOST_AUTO_TEST_CASE(C11_bootstrap_of_an_empty_directory_makes_exactly_prealloc_segments_1_to_n) {
  cfg.prealloc_segments = 4;
  SegmentManager m(dir.path(), opts(true));
  BOOST_TEST(m.wait_ready(4, kWait) == 4u);
  BOOST_TEST(m.wait_ready(5, kSettle) == 4u);  // never more than asked
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {1, 2, 3, 4}), boost::test_tools::per_element());
  check_invariant_1(dir.path());

  // Moving into segment 1 makes the pool reach 5: N ahead of the writer, N + 1 in all.
  ReadySegment s = m.next_segment(1);
  BOOST_TEST(s.name == seg_name(1, 1));
  BOOST_TEST(m.wait_ready(4, kWait) == 4u);
  BOOST_TEST(m.wait_ready(5, kSettle) == 4u);
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {1, 2, 3, 4, 5}), boost::test_tools::per_element());
  check_invariant_1(dir.path());
  BOOST_TEST(m.stats().created_by_method["zero_write"] == 5u);
}

BOOST_AUTO_TEST_CASE(pool_refills_after_each_consumption_and_ready_segments_do_not_stall) {
  cfg.prealloc_segments = 3;
  SegmentManager m(dir.path(), opts(true));
  for (SegNo k = 1; k <= 6; ++k) {
    BOOST_TEST_CONTEXT("segment " << k) {
      BOOST_REQUIRE(m.wait_ready(3, kWait) == 3u);
      ReadySegment s = m.next_segment(k);
      BOOST_TEST(s.timeline == 1u);
      BOOST_TEST(s.segno == k);
      BOOST_TEST(s.name == seg_name(1, k));
      BOOST_TEST(s.path == dir / seg_name(1, k));
      BOOST_TEST(!s.stalled);
      BOOST_TEST(!s.recycled);
      BOOST_TEST(walseg_test::stat_path(s.path).st_size == static_cast<off_t>(kSeg));
    }
  }
  BOOST_TEST(m.wait_ready(3, kWait) == 3u);
  ManagerStats st = m.stats();
  BOOST_TEST(st.stalls == 0u);
  BOOST_TEST(st.stall.count == 0u);
  BOOST_TEST(st.created_by_method["zero_write"] == 9u);  // 1..6 handed out, 7..9 ready
  BOOST_TEST(st.create.count == 9u);
  BOOST_TEST(st.ready_ahead == 3u);
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
             boost::test_tools::per_element());
  check_invariant_1(dir.path());
}

BOOST_AUTO_TEST_CASE(empty_pool_without_preallocator_creates_synchronously_and_counts_every_stall) {
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 3; ++k) {
    ReadySegment s = m.next_segment(k);
    BOOST_TEST(s.stalled);
    BOOST_TEST(!s.recycled);
    BOOST_TEST(walseg_test::stat_path(s.path).st_size == static_cast<off_t>(kSeg));
  }
  ManagerStats st = m.stats();
  BOOST_TEST(st.stalls == 3u);
  BOOST_TEST(st.stall.count == 3u);
  BOOST_TEST(st.created_by_method["zero_write"] == 3u);
  BOOST_TEST(st.ready_ahead == 0u);
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {1, 2, 3}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(prealloc_zero_leaves_the_pool_empty_and_next_segment_stalls) {
  cfg.prealloc_segments = 0;
  SegmentManager m(dir.path(), opts(true));
  BOOST_TEST(m.wait_ready(1, kSettle) == 0u);
  BOOST_TEST(segment_files(dir.path()).empty());
  ReadySegment s = m.next_segment(1);
  BOOST_TEST(s.stalled);
  BOOST_TEST(m.stats().stalls == 1u);
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(preallocator_never_makes_more_than_max_size_over_segment_size) {
  cfg.prealloc_segments = 8;
  cfg.min_size_bytes = 2 * kSeg;
  cfg.max_size_bytes = 3 * kSeg;
  cfg.recycle = false;
  SegmentManager m(dir.path(), opts(true));
  BOOST_TEST(m.wait_ready(3, kWait) == 3u);
  BOOST_TEST(m.wait_ready(8, kSettle) == 3u);
  BOOST_TEST(segment_files(dir.path()).size() == 3u);
  m.next_segment(1);  // still 3 segments in the directory: the bound holds
  BOOST_TEST(m.wait_ready(3, kSettle) == 2u);
  BOOST_TEST(segment_files(dir.path()).size() == 3u);
  m.retire(2);  // removes 1: room for one more
  BOOST_TEST(m.wait_ready(3, kWait) == 3u);
  BOOST_TEST(m.wait_ready(4, kSettle) == 3u);
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {2, 3, 4}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(method_actually_used_is_counted_per_method) {
  cfg.init_method = InitMethod::kPosixFallocate;  // ext4 under /var/tmp supports it
  SegmentManager m(dir.path(), opts(false));
  m.next_segment(1);
  m.next_segment(2);
  ManagerStats st = m.stats();
  BOOST_TEST(to_string(st.method) == "posix_fallocate");
  BOOST_TEST(st.created_by_method.size() == 1u);
  BOOST_TEST(st.created_by_method["posix_fallocate"] == 2u);
  BOOST_TEST(st.create.count == 2u);
  BOOST_TEST(st.fsync.count == 2u);
  BOOST_TEST(st.dir_fsync.count == 2u);
}

BOOST_AUTO_TEST_CASE(existing_complete_segments_are_handed_out_without_creation) {
  for (SegNo k = 3; k <= 5; ++k) plant_segment(dir / seg_name(1, k), 100 + k);
  SegmentManager m(dir.path(), opts(false));
  ReadySegment s = m.next_segment(4);
  BOOST_TEST(!s.stalled);
  BOOST_TEST(!s.recycled);
  BOOST_TEST(read_marker(s.path) == 104u);  // the planted file, not a new one
  BOOST_TEST(m.stats().created_by_method.empty());
}

BOOST_AUTO_TEST_CASE(shutdown_during_a_paced_fill_leaves_no_temporary_file) {
  // 64 MB segments filled at the pace of a writer that switches every 3 s: the fill of the
  // next segment is spread over about 0.3..1.8 s, so the destructor most likely lands in it.
  cfg.segment_size_bytes = 64 * kSeg;
  cfg.min_size_bytes = 4 * cfg.segment_size_bytes;
  cfg.max_size_bytes = 64 * cfg.segment_size_bytes;
  cfg.prealloc_segments = 1;
  auto m = std::make_unique<SegmentManager>(dir.path(), opts(true));
  BOOST_REQUIRE(m->wait_ready(1, 120s) == 1u);
  m->next_segment(1);
  BOOST_REQUIRE(m->wait_ready(1, 120s) == 1u);
  std::this_thread::sleep_for(3s);
  m->next_segment(2);  // now there is a rate to pace segment 3 against
  bool saw_temp = false;
  for (auto until = std::chrono::steady_clock::now() + 10s;
       !saw_temp && std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(5ms))
    for (const auto& n : list_names(dir.path()))
      if (n.rfind("xlogtemp.", 0) == 0) saw_temp = true;
  m.reset();
  BOOST_TEST_MESSAGE("a fill was " << (saw_temp ? "" : "not ") << "seen in progress at shutdown");
  check_invariant_1(dir.path(), 64 * kSeg);
  for (const auto& n : list_names(dir.path())) BOOST_TEST(n.rfind("xlogtemp.", 0) != 0);
  BOOST_TEST(path_exists(dir / seg_name(1, 1)));
  BOOST_TEST(path_exists(dir / seg_name(1, 2)));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(retire, ManagerFixture)

BOOST_AUTO_TEST_CASE(retire_with_recycle_off_removes_durably_and_counts_removals) {
  cfg.recycle = false;
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 4; ++k) m.next_segment(k);
  io_trace::start();
  m.retire(3);
  auto ev = io_trace::stop();
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {3, 4}), boost::test_tools::per_element());
  ManagerStats st = m.stats();
  BOOST_TEST(st.removed == 2u);
  BOOST_TEST(st.recycled == 0u);
  // Durable: a directory fsync after the last unlink.
  int last_unlink = -1, fsync_after = -1;
  for (int i = 0; i < static_cast<int>(ev.size()); ++i) {
    if (ev[i].op == "unlink" && ev[i].result_errno == 0) last_unlink = i;
    if (ev[i].op == "dir_fsync" && ev[i].path == dir.path() && i > last_unlink) fsync_after = i;
  }
  BOOST_TEST(last_unlink >= 0);
  BOOST_TEST(fsync_after > last_unlink);
}

BOOST_AUTO_TEST_CASE(recycle_renames_to_the_lowest_free_future_names_within_the_horizon) {
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 5; ++k) write_marker(m.next_segment(k).path, k);
  // First retire: no distance yet, so the horizon is redo + min_size - 1 = 4 + 4 - 1 = 7.
  // Writer at 5: free future names 6 and 7 take segments 1 and 2; 3 is removed.
  m.retire(4);
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {4, 5, 6, 7}), boost::test_tools::per_element());
  BOOST_TEST(read_marker(dir / seg_name(1, 6)) == 1u);
  BOOST_TEST(read_marker(dir / seg_name(1, 7)) == 2u);
  ManagerStats st = m.stats();
  BOOST_TEST(st.recycled == 2u);
  BOOST_TEST(st.removed == 1u);
  BOOST_TEST(st.recycle.count == 2u);

  ReadySegment s6 = m.next_segment(6);
  BOOST_TEST(s6.recycled);
  BOOST_TEST(!s6.stalled);
  ReadySegment s7 = m.next_segment(7);
  BOOST_TEST(s7.recycled);
  ReadySegment s8 = m.next_segment(8);
  BOOST_TEST(!s8.recycled);
  BOOST_TEST(s8.stalled);
  st = m.stats();
  BOOST_TEST(st.stalls == 6u);  // 1..5 and 8 were created on demand
  BOOST_TEST(st.created_by_method["zero_write"] == 6u);
  check_invariant_1(dir.path());
}

BOOST_AUTO_TEST_CASE(recycle_fills_free_names_only_and_never_renames_over_an_existing_segment) {
  for (SegNo k : {1, 2, 3, 4, 5, 7}) plant_segment(dir / seg_name(1, k), k);
  const ino_t ino7 = walseg_test::stat_path(dir / seg_name(1, 7)).st_ino;
  SegmentManager m(dir.path(), opts(false));
  BOOST_TEST(!m.next_segment(5).stalled);
  m.retire(4);  // horizon 7: only 6 is free, so 1 -> 6, and 2, 3 are removed
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {4, 5, 6, 7}), boost::test_tools::per_element());
  BOOST_TEST(read_marker(dir / seg_name(1, 6)) == 1u);
  BOOST_TEST(read_marker(dir / seg_name(1, 7)) == 7u);
  BOOST_TEST(walseg_test::stat_path(dir / seg_name(1, 7)).st_ino == ino7);
  BOOST_TEST(m.stats().recycled == 1u);
  BOOST_TEST(m.stats().removed == 2u);
  BOOST_TEST(!m.next_segment(7).recycled);  // the planted 7 was never a recycled file
}

BOOST_AUTO_TEST_CASE(second_retire_uses_the_distance_estimate_for_its_horizon) {
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 8; ++k) write_marker(m.next_segment(k).path, k);
  // retire(6): horizon 6 + 4 - 1 = 9; writer at 8: only 9 is free. 1 -> 9; 2..5 removed.
  m.retire(6);
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {6, 7, 8, 9}), boost::test_tools::per_element());
  BOOST_TEST(read_marker(dir / seg_name(1, 9)) == 1u);
  BOOST_TEST(m.stats().recycled == 1u);
  BOOST_TEST(m.stats().removed == 4u);
  BOOST_TEST(m.next_segment(9).recycled);
  for (SegNo k = 10; k <= 12; ++k) m.next_segment(k);
  // retire(8): distance (8 - 6) segments = 2 MB; 2 * 1.9 * 1.1 = 4.18 -> ceil(12.18) = 13,
  // above the minimum 8 + 3 = 11. Writer at 12: only 13 is free. 6 -> 13, 7 removed.
  // (Without the distance the horizon would be 11 and both would be removed.)
  m.retire(8);
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {8, 9, 10, 11, 12, 13}),
             boost::test_tools::per_element());
  BOOST_TEST(read_marker(dir / seg_name(1, 13)) == 6u);
  BOOST_TEST(m.stats().recycled == 2u);
  BOOST_TEST(m.stats().removed == 5u);
}

BOOST_AUTO_TEST_CASE(retire_before_the_writer_reports_its_position_recycles_only_above_first_needed) {
  // After a restart the directory holds 5..12 and the first call is a checkpoint's
  // retire(8), before the writer asked for any segment. Recycled names must be future ones,
  // never at or below a segment being retired.
  for (SegNo k = 5; k <= 12; ++k) plant_segment(dir / seg_name(1, k), k);
  SegmentManager m(dir.path(), opts(false));
  BOOST_CHECK_NO_THROW(m.retire(8));
  // horizon 8 + 4 - 1 = 11, all of 8..12 exist: nothing is free, 5..7 are removed.
  BOOST_TEST(segment_files(dir.path()) == names_of(1, {8, 9, 10, 11, 12}),
             boost::test_tools::per_element());
  for (SegNo k = 8; k <= 12; ++k) BOOST_TEST(read_marker(dir / seg_name(1, k)) == k);
  BOOST_TEST(m.stats().removed == 3u);
  BOOST_TEST(m.stats().recycled == 0u);
}

BOOST_AUTO_TEST_CASE(C10_C20_files_walseg_did_not_make_are_never_recycled_renamed_or_removed) {
  for (SegNo k = 1; k <= 3; ++k) plant_segment(dir / seg_name(1, k), k);
  // Not strict segment names, other WAL files, and segment names walseg did not fill: of
  // another timeline, and of this one but below the WAL's oldest needed segment (1).
  const std::vector<std::string> foreign = {
      "00000001000000000000000a",                   // lower-case, 1 MB
      "000000010000000000001000",                   // low part 0x1000 out of range for 1 MB
      "00000001.history", "000000010000000000000002.partial",
      "000000010000000000000001.00000028.backup", "notes.txt",
      seg_name(1, 0), seg_name(2, 1), seg_name(2, 9)};
  std::map<std::string, ino_t> ino;
  for (std::size_t i = 0; i < foreign.size(); ++i) {
    plant_foreign(dir / foreign[i], 900 + i);
    ino[foreign[i]] = walseg_test::stat_path(dir / foreign[i]).st_ino;
  }
  SegmentManager m(dir.path(), opts(false));
  BOOST_TEST(m.scan_report().foreign.size() + m.scan_report().left_alone.size() == foreign.size());
  m.next_segment(4);
  m.retire(4);  // recycles 1..3 to 5..7 (horizon 7)
  m.retire(4);  // nothing more to do
  m.set_timeline(2);
  m.retire(20);  // every segment of either timeline below 20 is no longer needed
  BOOST_TEST(m.stats().recycled + m.stats().removed == 7u);  // 1..7 of timeline 1, all walseg's
  for (std::size_t i = 0; i < foreign.size(); ++i) {
    BOOST_TEST_CONTEXT(foreign[i]) {
      BOOST_REQUIRE(path_exists(dir / foreign[i]));
      BOOST_TEST(walseg_test::stat_path(dir / foreign[i]).st_ino == ino[foreign[i]]);
      BOOST_TEST(read_marker(dir / foreign[i]) == 900 + i);
    }
  }
}

BOOST_AUTO_TEST_CASE(invariant_6_full_size_foreign_content_below_the_wal_is_never_recycled_or_removed) {
  // Bug: retire() recycled full-size segment-named files whose content was PostgreSQL 14's,
  // another system's or not WAL at all, and removed a foreign file named for another
  // timeline. Here the WAL starts at segment 5, so the files below it are in no one's way.
  walseg::WalControl c = walseg_test::test_control(kSeg);
  c.oldest_lsn = 5 * kSeg;
  walseg_test::put_control(dir.path(), c);
  for (SegNo k = 5; k <= 8; ++k) plant_segment(dir / seg_name(1, k), k);
  std::vector<std::byte> xs(kSeg, std::byte{'X'});
  walseg_test::put_file(dir / seg_name(1, 1), xs.data(), xs.size(), kSeg);  // all 'X'
  walseg_test::put_wal_segment(dir / seg_name(1, 2), walseg_test::test_control(kSeg, 42), 1, 2);  // another system
  {
    std::array<std::byte, walseg::kLongPageHeaderBytes> b{};
    walseg::PageHeader h = walseg_test::first_page_of(c, 1, 3);
    h.magic = 0xD10D;  // PostgreSQL 14's page magic
    walseg::encode_page_header(h, b.data());
    walseg_test::put_file(dir / seg_name(1, 3), b.data(), b.size(), kSeg);
  }
  walseg_test::put_wal_segment(dir / seg_name(3, 4), walseg_test::test_control(kSeg, 42), 3, 4);
  const std::vector<std::string> theirs = {seg_name(1, 1), seg_name(1, 2), seg_name(1, 3), seg_name(3, 4)};
  std::map<std::string, std::vector<char>> before;
  for (const auto& n : theirs) before[n] = walseg_test::read_all(dir / n);
  SegmentManager m(dir.path(), opts(false));
  BOOST_TEST(m.scan_report().foreign.size() == theirs.size());
  m.next_segment(8);
  m.retire(7);  // 5 and 6 are retired; none of theirs
  BOOST_TEST(m.stats().recycled + m.stats().removed == 2u);
  for (const auto& n : theirs) {
    BOOST_TEST_CONTEXT(n) {
      BOOST_REQUIRE(path_exists(dir / n));
      BOOST_TEST((walseg_test::read_all(dir / n) == before[n]));
    }
  }
}

BOOST_AUTO_TEST_CASE(invariant_8_a_foreign_file_with_a_name_the_wal_needs_makes_opening_fail_untouched) {
  for (SegNo k = 1; k <= 3; ++k) plant_segment(dir / seg_name(1, k), k);
  // A segment name of the wrong size (a creation cut short by a full disk in another tool,
  // case C10) where the writer goes next: never used, moved aside or replaced.
  std::vector<char> short_content(500000);
  for (std::size_t i = 0; i < short_content.size(); ++i) short_content[i] = static_cast<char>(i % 251);
  walseg_test::put_file(dir / seg_name(1, 4), reinterpret_cast<const std::byte*>(short_content.data()),
                        short_content.size(), short_content.size());
  // A refused open removes nothing, not even walseg's own leftovers, and leaves no lock file
  // it made.
  const std::vector<std::byte> zeros(100);  // what a fill cut short leaves
  walseg_test::put_file(dir / "xlogtemp.99", zeros.data(), zeros.size(), zeros.size());
  const auto names_before = walseg_test::list_names(dir.path());
  BOOST_CHECK_EXCEPTION(
      SegmentManager(dir.path(), opts(false)), Error,
      walseg_test::error_is(EINVAL, {"file \"" + dir.path() + "/" + seg_name(1, 4) + "\"",
                                     "has the name of a segment this WAL may still need",
                                     "move it out of the directory"}));
  BOOST_TEST(walseg_test::list_names(dir.path()) == names_before, boost::test_tools::per_element());
  BOOST_TEST((walseg_test::read_all(dir / seg_name(1, 4)) == short_content));
  // Once it is moved away, the directory opens and the writer gets a segment of its own there.
  BOOST_REQUIRE(::rename((dir / seg_name(1, 4)).c_str(), (dir / "moved-away").c_str()) == 0);
  SegmentManager m(dir.path(), opts(false));
  BOOST_TEST(m.next_segment(4).stalled);
  // The temporary file is older than the lock file this opening made (the refused one removed
  // its own): walseg cannot tell it from a file that was there before it used the directory,
  // so it stays (break-it round 10 F5), for the user to remove.
  BOOST_TEST(walseg_test::path_exists(dir / "xlogtemp.99"));
  BOOST_REQUIRE(::unlink((dir / "xlogtemp.99").c_str()) == 0);
  check_invariant_1(dir.path());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(durability, ManagerFixture)

/// Index of the first event matching op and path at or after `from`, or -1.
int find_event(const std::vector<io_trace::Event>& ev, const std::string& op,
               const std::string& path, int from = 0) {
  for (int i = from; i < static_cast<int>(ev.size()); ++i)
    if (ev[i].op == op && ev[i].path == path && ev[i].result_errno == 0) return i;
  return -1;
}

BOOST_AUTO_TEST_CASE(C13_dir_fsync_precedes_handout_of_a_segment_created_on_an_empty_pool) {
  SegmentManager m(dir.path(), opts(false));
  io_trace::start();
  ReadySegment s = m.next_segment(1);
  io_trace::record("test.returned", s.path, 0);
  auto ev = io_trace::stop();
  // The temp file: the one renamed to the final name, found as the last file fsynced before it.
  int rename_at = find_event(ev, "rename", dir / seg_name(1, 1));
  BOOST_REQUIRE(rename_at >= 0);
  int temp_fsync = -1;
  for (int i = 0; i < rename_at; ++i)
    if (ev[i].op == "fsync" && ev[i].path.find("/xlogtemp.") != std::string::npos) temp_fsync = i;
  BOOST_TEST(temp_fsync >= 0);
  int dir_fsync = find_event(ev, "dir_fsync", dir.path(), rename_at + 1);
  int returned = find_event(ev, "test.returned", s.path);
  BOOST_TEST(temp_fsync < rename_at);
  BOOST_TEST(dir_fsync > rename_at);
  BOOST_TEST(returned > dir_fsync);
  // No write into the file after its fsync.
  for (int i = temp_fsync + 1; i < rename_at; ++i)
    BOOST_TEST((ev[i].op != "pwrite" && ev[i].op != "pwritev"), "write after fsync: " << ev[i].op);
}

BOOST_AUTO_TEST_CASE(C13_dir_fsync_precedes_handout_of_a_segment_made_by_the_preallocator) {
  io_trace::start();
  SegmentManager m(dir.path(), opts(true));
  BOOST_REQUIRE(m.wait_ready(2, kWait) == 2u);
  ReadySegment s = m.next_segment(1);
  io_trace::record("test.returned", s.path, 0);
  auto ev = io_trace::stop();
  BOOST_TEST(!s.stalled);
  int rename_at = find_event(ev, "rename", s.path);
  BOOST_REQUIRE(rename_at >= 0);
  int dir_fsync = find_event(ev, "dir_fsync", dir.path(), rename_at + 1);
  int returned = find_event(ev, "test.returned", s.path);
  BOOST_TEST(dir_fsync > rename_at);
  BOOST_TEST(returned > dir_fsync);
}

BOOST_AUTO_TEST_CASE(C13_recycled_segment_is_renamed_then_dir_fsynced_before_it_is_handed_out) {
  SegmentManager m(dir.path(), opts(false));
  for (SegNo k = 1; k <= 5; ++k) m.next_segment(k);
  io_trace::start();
  m.retire(4);  // 1 -> 6, 2 -> 7
  ReadySegment s = m.next_segment(6);
  io_trace::record("test.returned", s.path, 0);
  auto ev = io_trace::stop();
  BOOST_TEST(s.recycled);
  int rename_at = find_event(ev, "rename", dir / seg_name(1, 6));
  BOOST_REQUIRE(rename_at >= 0);
  int dir_fsync = find_event(ev, "dir_fsync", dir.path(), rename_at + 1);
  int returned = find_event(ev, "test.returned", s.path);
  BOOST_TEST(dir_fsync > rename_at);
  BOOST_TEST(returned > dir_fsync);
  // And the rename of 7 has its own directory fsync after it.
  int rename7 = find_event(ev, "rename", dir / seg_name(1, 7));
  BOOST_REQUIRE(rename7 >= 0);
  BOOST_TEST(find_event(ev, "dir_fsync", dir.path(), rename7 + 1) > rename7);
}

BOOST_AUTO_TEST_SUITE_END()
