#define BOOST_TEST_MODULE segment_manager_crash
#include <boost/test/unit_test.hpp>

// Case C11 for the segment manager: a process killed at any step of creating (on demand or in
// the background preallocator), recycling or removing a segment leaves a directory that the
// next open turns back into a consistent one.
//
// Method: a fork()ed child opens a SegmentManager, arms a `crash` failpoint (an _exit(86) on
// the spot, leaving files exactly as kill -9 would) at one step and runs the operation. The
// parent checks the child died there (status 86), lists what the crash left, reopens the
// directory and checks the install protocol's promise (every final segment name is a complete file of exactly
// segment_size bytes; temporary leftovers removed by the reopen's scan) and that the reopened
// manager carries on. Power loss (dropping what was not fsynced) is not simulated here; the
// syscall order that makes it safe is asserted by the C13 tests in segment_manager_test.cpp.

#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "segment_manager_fixture.h"
#include "walseg/failpoint.h"

using namespace walseg;
using namespace walseg_test;

namespace {

struct KillPoint {
  const char* failpoint;
  std::uint64_t nth;
  bool temp_left;                      // the crash leaves a temporary file behind
  std::vector<SegNo> segments_after;   // segment numbers (timeline 1) the crash leaves
};

std::vector<std::string> temp_files(const std::string& dir) {
  std::vector<std::string> v;
  for (const auto& n : list_names(dir))
    if (n.rfind("xlogtemp.", 0) == 0) v.push_back(n);
  return v;
}

std::vector<std::string> names(const std::vector<SegNo>& segnos) {
  std::vector<std::string> v;
  for (SegNo s : segnos) v.push_back(seg_name(1, s));
  return v;
}

/// Runs `body` in a child; returns its exit status (86 = crashed at the failpoint, 0 = the
/// failpoint was never reached, 2 = an exception).
int run_child(const std::function<void()>& body) {
  pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    try {
      failpoint::disarm_all();
      body();
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  int status = 0;
  BOOST_REQUIRE(::waitpid(pid, &status, 0) == pid);
  BOOST_REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

failpoint::Spec crash_at(std::uint64_t nth) { return {failpoint::Kind::kCrash, 0, 0, nth, 1}; }

struct CrashFixture : ManagerFixture {
  /// What the crash left, then the reopen: complete final names and the temp clean-up.
  void check_after_crash(const KillPoint& kp, const std::string& path) {
    BOOST_TEST(segment_files(path) == names(kp.segments_after), boost::test_tools::per_element());
    BOOST_TEST(temp_files(path).size() == (kp.temp_left ? 1u : 0u));
    for (const auto& n : segment_files(path))
      BOOST_TEST(static_cast<std::uint64_t>(stat_path(path + "/" + n).st_size) == kSeg);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(crash, CrashFixture)

const std::vector<KillPoint> kCreateSteps = {
    // The child has segment 1 and crashes while creating segment 2 on demand.
    {"create.after_open", 1, true, {1}},
    {"pwrite", 2, true, {1}},  // second of four 256 kB chunks: mid-fill
    {"alloc.half_fill", 1, true, {1}},
    {"create.after_fill", 1, true, {1}},
    {"fsync", 1, true, {1}},  // before the file's fsync
    {"create.after_fsync", 1, true, {1}},
    {"rename", 1, true, {1}},  // before the rename
    {"create.after_rename", 1, false, {1, 2}},
    {"dir_fsync", 1, false, {1, 2}},  // renamed, directory not yet fsynced
    {"create.after_dir_fsync", 1, false, {1, 2}},
};

BOOST_AUTO_TEST_CASE(C11_crash_at_each_step_of_an_on_demand_creation_leaves_invariant_1_after_reopen) {
  for (const KillPoint& kp : kCreateSteps) {
    BOOST_TEST_CONTEXT("crash at " << kp.failpoint << " @" << kp.nth) {
      walseg_test::TempDir d;
      int status = run_child([&] {
        SegmentManager m(d.path(), opts(false));
        m.next_segment(1);
        failpoint::arm(kp.failpoint, crash_at(kp.nth));
        m.next_segment(2);
      });
      BOOST_TEST(status == failpoint::kCrashExitStatus);
      check_after_crash(kp, d.path());
      SegmentManager m(d.path(), opts(false));
      BOOST_TEST(m.scan_report().removed_temps.size() == (kp.temp_left ? 1u : 0u));
      BOOST_TEST(temp_files(d.path()).empty());
      check_invariant_1(d.path());
      ReadySegment s = m.next_segment(2);  // the writer carries on
      BOOST_TEST(stat_path(s.path).st_size == static_cast<off_t>(kSeg));
    }
  }
}

BOOST_AUTO_TEST_CASE(C11_crash_at_each_step_of_a_background_creation_leaves_invariant_1_after_reopen) {
  // The preallocator of a fresh directory creates segment 1 first. The directory's control
  // file is made beforehand (its replacement's syscalls would count too), and the lock
  // file's PID is the first "pwrite" of the process, so the fill's second chunk is pwrite @3;
  // the new lock file's directory fsync is the first "dir_fsync", the segment's the second.
  const std::vector<KillPoint> steps = {
      {"create.after_open", 1, true, {}},    {"pwrite", 3, true, {}},
      {"alloc.half_fill", 1, true, {}},      {"create.after_fill", 1, true, {}},
      {"fsync", 1, true, {}},                {"create.after_fsync", 1, true, {}},
      {"rename", 1, true, {}},
      {"create.after_rename", 1, false, {1}}, {"dir_fsync", 2, false, {1}},
      {"create.after_dir_fsync", 2, false, {1, 2}},  // after segment 2's installation
  };
  for (const KillPoint& kp : steps) {
    BOOST_TEST_CONTEXT("crash at " << kp.failpoint << " @" << kp.nth) {
      walseg_test::TempDir d;
      control_of(d.path());
      int status = run_child([&] {
        failpoint::arm(kp.failpoint, crash_at(kp.nth));
        SegmentManager m(d.path(), opts(true));
        m.wait_ready(2, kWait);
      });
      BOOST_TEST(status == failpoint::kCrashExitStatus);
      check_after_crash(kp, d.path());
      SegmentManager m(d.path(), opts(true));
      BOOST_TEST(m.scan_report().removed_temps.size() == (kp.temp_left ? 1u : 0u));
      BOOST_TEST(m.wait_ready(2, kWait) == 2u);
      BOOST_TEST(segment_files(d.path()) == names({1, 2}), boost::test_tools::per_element());
      check_invariant_1(d.path());
    }
  }
}

BOOST_AUTO_TEST_CASE(C11_crash_at_each_step_of_recycling_leaves_invariant_1_and_no_lost_segment) {
  // retire(4) with 1..5 present and the writer at 5: first the control file's oldest LSN
  // moves to segment 4 (exchange, unlink of the old control file, directory fsync), then
  // horizon 7, so 1 -> 6, 2 -> 7, 3 removed; each rename is followed by a directory fsync, the
  // removal by one more.
  const std::vector<KillPoint> steps = {
      {"rename", 1, false, {1, 2, 3, 4, 5}},     // the control file's exchange
      {"unlink", 1, false, {1, 2, 3, 4, 5}},     // exchanged: the old one under the temporary name
      {"dir_fsync", 1, false, {1, 2, 3, 4, 5}},  // control file replaced, not yet durable
      {"rename", 2, false, {1, 2, 3, 4, 5}},
      {"dir_fsync", 2, false, {2, 3, 4, 5, 6}},
      {"rename", 3, false, {2, 3, 4, 5, 6}},
      {"dir_fsync", 3, false, {3, 4, 5, 6, 7}},
      {"unlink", 2, false, {3, 4, 5, 6, 7}},
      {"dir_fsync", 4, false, {4, 5, 6, 7}},
  };
  for (const KillPoint& kp : steps) {
    BOOST_TEST_CONTEXT("crash at " << kp.failpoint << " @" << kp.nth) {
      walseg_test::TempDir d;
      int status = run_child([&] {
        SegmentManager m(d.path(), opts(false));
        for (SegNo k = 1; k <= 5; ++k) write_marker(m.next_segment(k).path, k);
        failpoint::arm(kp.failpoint, crash_at(kp.nth));
        m.retire(4);
      });
      BOOST_TEST(status == failpoint::kCrashExitStatus);
      check_after_crash(kp, d.path());
      // A renamed segment keeps its bytes: 6 was 1, 7 was 2.
      if (path_exists(d / seg_name(1, 6))) BOOST_TEST(read_marker(d / seg_name(1, 6)) == 1u);
      if (path_exists(d / seg_name(1, 7))) BOOST_TEST(read_marker(d / seg_name(1, 7)) == 2u);
      // Reopened before the writer reports its position, the checkpoint's retire finishes the job.
      SegmentManager m(d.path(), opts(false));
      BOOST_CHECK_NO_THROW(m.retire(4));
      BOOST_TEST(segment_files(d.path()) == names({4, 5, 6, 7}), boost::test_tools::per_element());
      check_invariant_1(d.path());
    }
  }
}

BOOST_AUTO_TEST_CASE(C11_crash_at_each_step_of_removal_leaves_invariant_1) {
  // The control file first (exchange, unlink of the old control file, directory fsync).
  const std::vector<KillPoint> steps = {
      {"rename", 1, false, {1, 2, 3, 4}},
      {"unlink", 1, false, {1, 2, 3, 4}},
      {"unlink", 2, false, {1, 2, 3, 4}},
      {"unlink", 3, false, {2, 3, 4}},
      {"dir_fsync", 2, false, {3, 4}},  // both unlinked, directory not yet fsynced
  };
  for (const KillPoint& kp : steps) {
    BOOST_TEST_CONTEXT("crash at " << kp.failpoint << " @" << kp.nth) {
      walseg_test::TempDir d;
      cfg.recycle = false;
      int status = run_child([&] {
        SegmentManager m(d.path(), opts(false));
        for (SegNo k = 1; k <= 4; ++k) m.next_segment(k);
        failpoint::arm(kp.failpoint, crash_at(kp.nth));
        m.retire(3);
      });
      BOOST_TEST(status == failpoint::kCrashExitStatus);
      check_after_crash(kp, d.path());
      SegmentManager m(d.path(), opts(false));
      BOOST_CHECK_NO_THROW(m.retire(3));
      BOOST_TEST(segment_files(d.path()) == names({3, 4}), boost::test_tools::per_element());
      check_invariant_1(d.path());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
