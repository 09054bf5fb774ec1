#define BOOST_TEST_MODULE measure_loop
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/measure_loop.h, the create-then-commit loop of `walseg bench`,
// walseg_bench() and auto's probe: the order of creations and commits, the samples' shapes,
// the hooks' own times, and (in the marked section) that a failure releases the round's
// files and is the error reported. Real files in a fresh directory; failures come from the
// inputs (a hook that throws, a file opened read-only), not from mocks.

#include <fcntl.h>
#include <sys/stat.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fs_test_util.h"
#include "walseg/error.h"
#include "walseg/measure_loop.h"

using namespace walseg;
using walseg_test::FreshDirFixture;

namespace {

// Series k makes "s<k>.<round>" (O_CREAT) and logs every event in `log`.
struct Recorder : FreshDirFixture {
  std::vector<std::string> log;
  int open_flags = O_RDWR | O_CREAT;
  MeasureSeries series(int k) {
    return MeasureSeries{
        .create =
            [this, k](int round, double*) {
              log.push_back("create " + std::to_string(k) + "." + std::to_string(round));
              return File::open(dir / name(k, round), open_flags, 0600);
            },
        .release =
            [this, k](int round, File& f) {
              log.push_back("release " + std::to_string(k) + "." + std::to_string(round) +
                            " size " + std::to_string(f.stat().st_size));
              f.close();
            }};
  }
  static std::string name(int k, int round) { return "s" + std::to_string(k) + "." + std::to_string(round); }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(measure_loop, Recorder)

BOOST_AUTO_TEST_CASE(every_round_creates_each_series_then_commits_round_robin_then_releases) {
  auto out = measure_create_commit({series(0), series(1)},
                                   MeasurePlan{.rounds = 2, .commit_bytes = 3 * 4096, .record_bytes = 4096});
  BOOST_TEST_REQUIRE(out.size() == 2u);
  for (const auto& s : out) {
    BOOST_TEST(s.create_us.size() == 2u);  // one per round
    BOOST_TEST(s.commit_us.size() == 6u);  // 3 commits per round
  }
  // The commits wrote each file up to commit_bytes before it was released.
  const std::vector<std::string> expected = {
      "create 0.0", "create 1.0", "release 0.0 size 12288", "release 1.0 size 12288",
      "create 0.1", "create 1.1", "release 0.1 size 12288", "release 1.1 size 12288"};
  BOOST_TEST(log == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_record_that_would_end_past_commit_bytes_is_not_written) {
  auto out = measure_create_commit({series(0)}, MeasurePlan{.commit_bytes = 10000, .record_bytes = 4096});
  BOOST_TEST(out[0].commit_us.size() == 2u);  // 4096 and 8192 end by 10000; 12288 would not
}

BOOST_AUTO_TEST_CASE(no_commit_bytes_measures_creations_only_and_a_hooks_own_time_wins) {
  std::vector<MeasureSeries> s = {MeasureSeries{.create = [](int round, double* own_us) {
                                                  *own_us = 100.0 + round;
                                                  return File();
                                                },
                                                .release = {}}};
  auto out = measure_create_commit(s, MeasurePlan{.rounds = 3});
  BOOST_TEST(out[0].commit_us.empty());
  BOOST_TEST(out[0].create_us == (std::vector<double>{100, 101, 102}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(check_runs_before_every_creation_and_every_turn_of_commits) {
  int checks = 0;
  measure_create_commit({series(0), series(1)},
                        MeasurePlan{.commit_bytes = 2 * 4096, .record_bytes = 4096, .check = [&] { ++checks; }});
  BOOST_TEST(checks == 4);  // 2 creations + 2 turns
}

BOOST_AUTO_TEST_CASE(around_commit_brackets_each_commit_of_its_series_with_the_write_in_between) {
  std::vector<std::string> seen;
  auto s0 = series(0);
  measure_create_commit({s0, series(1)},
                        MeasurePlan{.commit_bytes = 2 * 4096, .record_bytes = 4096,
                                    .around_commit = [&](std::size_t k, bool after) {
                                      struct stat st{};
                                      ::stat((dir / name(static_cast<int>(k), 0)).c_str(), &st);
                                      seen.push_back(std::to_string(k) + (after ? " after " : " before ") +
                                                     std::to_string(st.st_size));
                                    }});
  // Before each commit the file is as the last commit left it, after it one record longer.
  const std::vector<std::string> expected = {"0 before 0",    "0 after 4096", "1 before 0",    "1 after 4096",
                                             "0 before 4096", "0 after 8192", "1 before 4096", "1 after 8192"};
  BOOST_TEST(seen == expected, boost::test_tools::per_element());
}

// ---- Error paths -------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_failing_creation_releases_the_files_already_made_and_is_rethrown) {
  std::vector<MeasureSeries> s = {series(0), MeasureSeries{.create = [](int, double*) -> File {
                                                             throw std::runtime_error("no space");
                                                           },
                                                           .release = {}}};
  BOOST_CHECK_EXCEPTION(measure_create_commit(s, MeasurePlan{.commit_bytes = 4096}), std::runtime_error,
                        [](const std::runtime_error& e) { return std::string(e.what()) == "no space"; });
  BOOST_TEST(log == (std::vector<std::string>{"create 0.0", "release 0.0 size 0"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_failing_commit_is_the_error_and_a_failing_release_does_not_hide_it) {
  ::close(::open((dir / name(0, 0)).c_str(), O_CREAT | O_WRONLY, 0600));
  open_flags = O_RDONLY;  // the commit's pwrite fails with EBADF
  std::vector<MeasureSeries> s = {series(0)};
  s[0].release = [](int, File&) { throw std::runtime_error("release failed"); };
  BOOST_CHECK_EXCEPTION(measure_create_commit(s, MeasurePlan{.commit_bytes = 4096, .record_bytes = 4096}), Error,
                        [](const Error& e) {
                          return e.code().value() == EBADF && std::string(e.what()).find("could not write") != std::string::npos;
                        });
}

BOOST_AUTO_TEST_CASE(a_stop_from_check_ends_the_measurement_after_releasing) {
  int checks = 0;
  BOOST_CHECK_THROW(measure_create_commit({series(0)}, MeasurePlan{.rounds = 5,
                                                                   .check =
                                                                       [&] {
                                                                         if (++checks == 2) throw std::runtime_error("stop");
                                                                       }}),
                    std::runtime_error);
  BOOST_TEST(log == (std::vector<std::string>{"create 0.0", "release 0.0 size 0"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
