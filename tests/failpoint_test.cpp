#define BOOST_TEST_MODULE failpoint
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/failpoint.h: arming in code and from WALSEG_FAILPOINTS text, the
// @N / *K window, call counting, and the `crash` kind (run in a forked child, which must exit
// with status 86 as a kill -9 would leave things). Malformed specifications must be refused
// with EINVAL naming the entry, never half-understood.

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "fs_test_util.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"

using namespace walseg;
using walseg_test::error_is;

namespace {

struct DisarmFixture {
  DisarmFixture() { failpoint::disarm_all(); }
  ~DisarmFixture() { failpoint::disarm_all(); }
};

// Which of the first n calls of `name` the armed failpoint affects (1-based).
std::vector<int> affected_calls(const std::string& name, int n) {
  std::vector<int> out;
  for (int i = 1; i <= n; ++i)
    if (failpoint::hit(name)) out.push_back(i);
  return out;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(failpoints, DisarmFixture)

BOOST_AUTO_TEST_CASE(nothing_armed_means_no_hit_and_no_count) {
  BOOST_TEST(!failpoint::hit("fsync").has_value());
  BOOST_TEST(failpoint::calls("fsync") == 0u);
}

BOOST_AUTO_TEST_CASE(errno_spec_at_second_call_for_two_calls_affects_calls_2_and_3) {
  failpoint::arm_from_string("fsync=EIO@2*2");
  BOOST_TEST(affected_calls("fsync", 6) == (std::vector<int>{2, 3}),
             boost::test_tools::per_element());
  BOOST_TEST(failpoint::calls("fsync") == 6u);
  failpoint::arm_from_string("fsync=EIO@2*2");  // re-arming resets the count
  BOOST_TEST(failpoint::calls("fsync") == 0u);
  auto s = failpoint::hit("fsync");
  BOOST_TEST(!s.has_value());
  s = failpoint::hit("fsync");
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(static_cast<int>(s->kind) == static_cast<int>(failpoint::Kind::kErrno));
  BOOST_TEST(s->errnum == EIO);
}

BOOST_AUTO_TEST_CASE(default_window_is_the_first_call_only) {
  failpoint::arm_from_string("rename=EXDEV");
  BOOST_TEST(affected_calls("rename", 4) == (std::vector<int>{1}), boost::test_tools::per_element());
  BOOST_TEST(!failpoint::hit("unrelated").has_value());
}

BOOST_AUTO_TEST_CASE(times_zero_affects_every_call_from_the_nth_on) {
  failpoint::arm_from_string("fallocate=EINTR@3*0");
  BOOST_TEST(affected_calls("fallocate", 7) == (std::vector<int>{3, 4, 5, 6, 7}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(several_entries_and_empty_entries_all_arm) {
  failpoint::arm_from_string(";pwrite=short:512*0;;dir_fsync=ENOSPC@4;");
  auto p = failpoint::hit("pwrite");
  BOOST_REQUIRE(p.has_value());
  BOOST_TEST(static_cast<int>(p->kind) == static_cast<int>(failpoint::Kind::kShort));
  BOOST_TEST(p->short_bytes == 512u);
  BOOST_TEST(p->times == 0u);
  BOOST_TEST(affected_calls("dir_fsync", 5) == (std::vector<int>{4}),
             boost::test_tools::per_element());
  auto d = failpoint::hit("dir_fsync");  // call 6: out of window
  BOOST_TEST(!d.has_value());
}

BOOST_AUTO_TEST_CASE(every_listed_errno_name_parses_to_its_value) {
  const std::pair<const char*, int> names[] = {
      {"EIO", EIO},         {"ENOSPC", ENOSPC}, {"EINTR", EINTR},   {"EINVAL", EINVAL},
      {"EOPNOTSUPP", EOPNOTSUPP}, {"ENOSYS", ENOSYS}, {"EBADF", EBADF}, {"EFBIG", EFBIG},
      {"ENOMEM", ENOMEM},   {"EDQUOT", EDQUOT}, {"EROFS", EROFS},   {"EXDEV", EXDEV}};
  for (auto [name, value] : names) {
    failpoint::arm_from_string(std::string("open=") + name);
    auto s = failpoint::hit("open");
    BOOST_REQUIRE(s.has_value());
    BOOST_TEST(s->errnum == value, name);
  }
}

BOOST_AUTO_TEST_CASE(disarm_one_leaves_the_others_armed) {
  failpoint::arm("a", {failpoint::Kind::kErrno, EIO, 0, 1, 0});
  failpoint::arm("b", {failpoint::Kind::kErrno, EIO, 0, 1, 0});
  failpoint::disarm("a");
  failpoint::disarm("never-armed");
  BOOST_TEST(!failpoint::hit("a").has_value());
  BOOST_TEST(failpoint::hit("b").has_value());
  failpoint::disarm_all();
  BOOST_TEST(!failpoint::hit("b").has_value());
}

BOOST_AUTO_TEST_CASE(arm_from_environment_reads_walseg_failpoints) {
  ::setenv("WALSEG_FAILPOINTS", "fdatasync=EIO@2", 1);
  failpoint::arm_from_environment();
  ::unsetenv("WALSEG_FAILPOINTS");
  BOOST_TEST(affected_calls("fdatasync", 3) == (std::vector<int>{2}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(crash_spec_exits_the_process_with_status_86_at_the_nth_call) {
  pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    failpoint::arm_from_string("create.after_fill=crash@2");
    failpoint::hit("create.after_fill");  // call 1: survives
    ::_exit(1 + (failpoint::hit("create.after_fill") ? 1 : 0));  // call 2 must not return
  }
  int status = 0;
  BOOST_REQUIRE(::waitpid(pid, &status, 0) == pid);
  BOOST_REQUIRE(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == failpoint::kCrashExitStatus);
  BOOST_TEST(failpoint::kCrashExitStatus == 86);
}

// ---- error paths: malformed specifications ----

BOOST_AUTO_TEST_CASE(malformed_specs_throw_einval_naming_the_entry) {
  const std::pair<const char*, const char*> bad[] = {
      {"fsync", "expected name=SPEC"},
      {"=EIO", "expected name=SPEC"},
      {"fsync=", "unknown errno name"},
      {"fsync=EFOO", "unknown errno name"},
      {"fsync=eio", "unknown errno name"},
      {"fsync=EIO@0", "@N counts from 1"},
      {"fsync=EIO@", "missing number"},
      {"fsync=EIO*", "missing number"},
      {"fsync=EIO@x", "not a number"},
      {"fsync=EIO@-1", "not a number"},
      {"fsync=EIO*2@3", "not a number"},  // the window is written @N then *K
      {"pwrite=short:", "missing number"},
      {"pwrite=short:4k", "not a number"},
      {"fsync= EIO", "unknown errno name"},
  };
  for (auto [text, why] : bad) {
    BOOST_TEST_CONTEXT("spec " << text) {
      BOOST_CHECK_EXCEPTION(failpoint::arm_from_string(text), Error,
                            error_is(EINVAL, {std::string("invalid failpoint specification \"") +
                                                  text + "\": " + why}));
    }
  }
}

BOOST_AUTO_TEST_CASE(malformed_second_entry_names_that_entry_not_the_first) {
  BOOST_CHECK_EXCEPTION(failpoint::arm_from_string("fsync=EIO;rename=EBOGUS@2"), Error,
                        error_is(EINVAL, {"\"rename=EBOGUS@2\""}));
}

BOOST_AUTO_TEST_CASE(numbers_that_overflow_64_bits_are_refused_not_wrapped) {
  // 2^64 would wrap to 0 (short:0 = "no progress", treated as disk full) if not checked.
  BOOST_CHECK_EXCEPTION(failpoint::arm_from_string("pwrite=short:18446744073709551616"), Error,
                        error_is(EINVAL, {"pwrite=short:18446744073709551616"}));
  BOOST_CHECK_EXCEPTION(failpoint::arm_from_string("fsync=EIO@18446744073709551617"), Error,
                        error_is(EINVAL, {"fsync=EIO@18446744073709551617"}));
  BOOST_TEST(!failpoint::hit("pwrite").has_value());
  failpoint::arm_from_string("pwrite=short:18446744073709551615");  // the largest is fine
  auto s = failpoint::hit("pwrite");
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->short_bytes == 18446744073709551615u);
}

BOOST_AUTO_TEST_SUITE_END()
