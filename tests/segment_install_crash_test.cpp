#define BOOST_TEST_MODULE segment_install_crash
#include <boost/test/unit_test.hpp>

// Case C11: a process killed at any point of create_segment never leaves a final segment name on
// an incomplete file. Method: fork a child that arms a `crash` failpoint (an _exit(86) on the
// spot, which leaves the files exactly as kill -9 would) at one kill point and calls
// create_segment; the parent then lists the directory with readdir(2) and stat(2)s every entry.
// Allowed outcomes: no segment name, or a segment name on a complete, fully allocated file; any
// other entry must be the child's own temporary file (xlogtemp.<child pid>[.<n>]). Power loss
// (dropping unsynced data) is not simulated here; the syscall order that makes it safe is
// asserted in segment_install_test.cpp (C13).

#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fs_test_util.h"
#include "walseg/failpoint.h"
#include "walseg/segment_install.h"
#include "walseg/segment_name.h"

using namespace walseg;
using walseg_test::allocated_bytes;
using walseg_test::list_names;
using walseg_test::stat_path;

namespace {

constexpr std::uint64_t kSize = 32 * kMiB;  // two 16 MiB pwritev calls: crash @2 is mid-fill
const std::string kSeg = "000000010000000000000001";

enum class Expect { kNoSegment, kCompleteSegment };

struct KillPoint {
  const char* failpoint;
  std::uint64_t nth;
  InitMethod method;
  Expect expect;
  std::uint64_t temp_size;  // size the leftover temporary file must have (kNoSegment only)
};

// Runs create_segment in a child that crashes at `kp`; returns the child's pid.
pid_t crash_child(const std::string& dir, const KillPoint& kp) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  // Child: no Boost assertions here, only an exit status.
  try {
    failpoint::disarm_all();
    failpoint::arm(kp.failpoint, {failpoint::Kind::kCrash, 0, 0, kp.nth, 1});
    Directory d = Directory::open(dir);
    AllocOptions o;
    o.method = kp.method;
    o.direct_io = false;
    create_segment(d, kSeg, kSize, o);
    ::_exit(0);  // the kill point was never reached
  } catch (...) {
    ::_exit(2);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(C11_kill_at_each_creation_step_leaves_no_segment_or_a_complete_one) {
  const KillPoint points[] = {
      {"create.after_open", 1, InitMethod::kZeroWrite, Expect::kNoSegment, 0},
      {"pwritev", 2, InitMethod::kZeroWrite, Expect::kNoSegment, 16 * kMiB},  // half the fill
      {"fallocate", 1, InitMethod::kPosixFallocate, Expect::kNoSegment, 0},
      {"create.after_fill", 1, InitMethod::kZeroWrite, Expect::kNoSegment, kSize},
      {"create.after_fsync", 1, InitMethod::kZeroWrite, Expect::kNoSegment, kSize},
      {"create.after_fsync", 1, InitMethod::kPosixFallocate, Expect::kNoSegment, kSize},
      {"create.after_rename", 1, InitMethod::kZeroWrite, Expect::kCompleteSegment, 0},
      {"create.after_rename", 1, InitMethod::kPosixFallocate, Expect::kCompleteSegment, 0},
      {"create.after_dir_fsync", 1, InitMethod::kZeroWrite, Expect::kCompleteSegment, 0},
  };
  failpoint::disarm_all();
  for (const auto& kp : points) {
    BOOST_TEST_CONTEXT("kill at " << kp.failpoint << " @" << kp.nth << " during "
                                  << to_string(kp.method)) {
      walseg_test::TempDir dir;
      pid_t pid = crash_child(dir.path(), kp);
      BOOST_REQUIRE(pid > 0);
      int status = 0;
      BOOST_REQUIRE(::waitpid(pid, &status, 0) == pid);
      BOOST_REQUIRE(WIFEXITED(status));
      BOOST_TEST(WEXITSTATUS(status) == failpoint::kCrashExitStatus);

      std::size_t segments = 0, temps = 0;
      for (const std::string& n : list_names(dir.path())) {
        auto st = stat_path(dir / n);
        if (walseg_test::looks_like_segment_name(n)) {
          ++segments;
          BOOST_TEST(n == kSeg);
          BOOST_TEST(st.st_size == static_cast<off_t>(kSize), n << " is " << st.st_size);
          BOOST_TEST(allocated_bytes(st) >= kSize);
          continue;
        }
        auto temp = parse_temp_file_name(n);
        BOOST_TEST(temp.has_value(), "unexpected leftover " << n);
        if (!temp) continue;
        ++temps;
        BOOST_TEST(temp->pid == static_cast<std::uint32_t>(pid));
        BOOST_TEST(st.st_size == static_cast<off_t>(kp.temp_size));
      }
      if (kp.expect == Expect::kNoSegment) {
        BOOST_TEST(segments == 0u);
        BOOST_TEST(temps == 1u);
      } else {
        BOOST_TEST(segments == 1u);
        BOOST_TEST(temps == 0u);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(C11_after_a_crash_the_next_creation_of_the_same_segment_succeeds) {
  failpoint::disarm_all();
  walseg_test::TempDir dir;
  pid_t pid = crash_child(dir.path(), {"create.after_fill", 1, InitMethod::kZeroWrite,
                                       Expect::kNoSegment, kSize});
  int status = 0;
  BOOST_REQUIRE(::waitpid(pid, &status, 0) == pid);
  BOOST_REQUIRE(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == failpoint::kCrashExitStatus);
  // The leftover temp carries the dead child's pid, so a new process never collides with it.
  Directory d = Directory::open(dir.path());
  AllocOptions o;
  o.method = InitMethod::kPosixFallocate;
  create_segment(d, kSeg, kSize, o);
  auto st = stat_path(dir / kSeg);
  BOOST_TEST(st.st_size == static_cast<off_t>(kSize));
  BOOST_TEST(list_names(dir.path()).size() == 2u);  // the segment and the dead child's temp
}
