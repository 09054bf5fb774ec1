// `walseg bench` works only in what it made, whatever is swapped into its scratch directory
// while it runs (break-it round 10). A second thread plays the other process: it waits for a
// row's directory or segment to appear and moves something of the user's into its place.
// The swaps race with bench, so each case runs a few times; on the old code most runs lost
// the user's WAL or file, on the fixed code none may.
#define BOOST_TEST_MODULE tool_bench_swap
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tool_process.h"
#include "tool_test_util.h"

using namespace walseg_test;

namespace {

std::string slurp(const std::string& path) {
  std::ostringstream s;
  s << std::ifstream(path, std::ios::binary).rdbuf();
  return s.str();
}

std::string scratch_in(const std::string& parent) {
  for (const auto& e : fs::directory_iterator(parent))
    if (e.path().filename().string().rfind("walseg-bench-", 0) == 0) return e.path().string();
  return "";
}

// Waits (up to 60 s, or until bench ends) for `rel` under bench's scratch directory in
// `parent`; returns its path, "" if it never came.
std::string wait_for(const std::string& parent, const std::string& rel, const std::atomic<bool>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done && std::chrono::steady_clock::now() < deadline) {
    const std::string s = scratch_in(parent);
    std::error_code ec;
    if (!s.empty() && fs::exists(fs::symlink_status(s + "/" + rel, ec))) return s + "/" + rel;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return "";
}

/// Runs `bench()` while a second thread moves the file `mine` onto `rel` under bench's
/// scratch directory in `parent` the moment that name appears. Returns where the file was
/// moved, "" when bench was done with the name first.
template <class Bench>
std::string race_file_onto(const std::string& parent, const std::string& rel, const std::string& mine, Bench bench) {
  std::atomic<bool> done{false};
  std::string moved_to;
  std::thread racer([&] {
    const std::string target = wait_for(parent, rel, done);
    if (!target.empty() && ::rename(mine.c_str(), target.c_str()) == 0) moved_to = target;
  });
  bench();
  done = true;
  racer.join();
  return moved_to;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_bench_swap, ToolTest, *boost::unit_test::precondition(tool_built))

// F1: the WAL phases re-opened their row directory by path after checking it, so a link to
// the user's WAL put in its place had bench's checkpoints retire the user's segments (5000 of
// 5000 acknowledged records lost).
BOOST_AUTO_TEST_CASE(ARowDirectorySwappedForALinkToAWalLeavesThatWalAlone) {
  const std::string wal = dir + "/userwal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3000 --record-size 1kB -c walseg.segment_size=1MB").status == 0);
  const std::string control = slurp(wal + "/walseg.control");
  for (int i = 0; i < 3; ++i) {
    const std::string parent = dir + "/b" + std::to_string(i);
    fs::create_directories(parent);
    std::atomic<bool> done{false};
    std::thread racer([&] {
      // The scratch directory comes first; then the row's directory is moved away (not
      // removed: bench may be working in it) the moment it exists, and the link put there.
      std::string scratch;
      while (!done && (scratch = scratch_in(parent)).empty()) std::this_thread::yield();
      const std::string row = scratch + "/commit/1-pwrite";
      while (!done && ::renameat2(AT_FDCWD, row.c_str(), AT_FDCWD, (parent + "/away").c_str(), RENAME_NOREPLACE) != 0) {
      }
      if (!done) (void)::symlink(wal.c_str(), row.c_str());
    });
    auto r = run("bench --dir '" + parent + "' --phases commit --segment-size 1MB --clients 1 --commit-seconds 1");
    done = true;
    racer.join();
    BOOST_TEST_CONTEXT("run " << i << ": " << r.err) {
      BOOST_TEST((slurp(wal + "/walseg.control") == control), "the user's control file was rewritten");
      auto rec = run("recover --dir '" + wal + "'");
      BOOST_TEST(rec.status == 0, rec.out << rec.err);
      BOOST_TEST(contains(rec.out, "records: 3000"), rec.out);
    }
  }
}

// F2: the write phase removed each round's segment by name, so a user's file moved onto that
// name while the commits ran was removed; and it re-opened the segment by path.
BOOST_AUTO_TEST_CASE(AFileMovedOntoAWritePhaseSegmentIsLeftAlone) {
  int kept = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string parent = dir + "/w" + std::to_string(i);
    fs::create_directories(parent);
    const std::string mine = dir + "/mine" + std::to_string(i) + ".txt";
    std::ofstream(mine) << "my notes " << i << "\n";
    Result r;
    const std::string moved_to = race_file_onto(parent, "write/zero_write/000000010000000000000001", mine, [&] {
      r = run("bench --dir '" + parent + "' --phases write --methods zero_write --segment-size 16MB --segments 2"
              " --write-bytes 4MB");
    });
    if (moved_to.empty()) continue;  // bench was done with the segment first: nothing to check
    BOOST_TEST_CONTEXT("run " << i << ": " << r.err) {
      // The user's file is where it was moved, with its bytes, and bench named it as left.
      BOOST_TEST(slurp(moved_to) == "my notes " + std::to_string(i) + "\n");
      BOOST_TEST(contains(r.err, "000000010000000000000001"), r.err);
      ++kept;
    }
  }
  BOOST_TEST_MESSAGE("runs in which the file was moved in time: " << kept);
}

// Round 11 F4: the create phase's recycle row renames each of its segments seconds after
// making it, by name: a user's file moved onto the last one's name was renamed, and bench then
// said it had left it "untouched". Now the rename takes only the segment bench made.
BOOST_AUTO_TEST_CASE(AFileMovedOntoARecycleRowSegmentIsNotRenamed) {
  int moved = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string parent = dir + "/r" + std::to_string(i);
    fs::create_directories(parent);
    const std::string mine = dir + "/notes" + std::to_string(i) + ".txt";
    std::ofstream(mine) << "my notes " << i << "\n";
    Result r;
    const std::string moved_to = race_file_onto(parent, "create/recycle/00000001000000000000000A", mine, [&] {
      r = run("bench --dir '" + parent + "' --phases create --methods zero_write --segment-size 1MB --segments 10");
    });
    if (moved_to.empty()) continue;
    ++moved;
    BOOST_TEST_CONTEXT("run " << i << ": " << r.err) {
      BOOST_TEST(slurp(moved_to) == "my notes " + std::to_string(i) + "\n");  // where it was put, as it was
      BOOST_TEST(!contains(r.err, "untouched, what walseg bench did not make: create/recycle/000000010000000000000014"),
                 r.err);
    }
  }
  BOOST_TEST_MESSAGE("runs in which the file was moved in time: " << moved);
}

BOOST_AUTO_TEST_SUITE_END()
