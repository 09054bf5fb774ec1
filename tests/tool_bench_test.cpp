// Tests of `walseg bench` (src/bin/cmd_bench.cpp, bench_wal.cpp), run as a user would run it
// (tool_test_util.h), on the smallest runs that still exercise it: the header describes the
// phases asked for, and names walseg.direct_io when it is on; the append phase times only
// writing, with no segment made meanwhile; the switch phase writes real WAL, so its segments
// are retired and recycled without a warning, and a checkpoint's failure is its error. The measurements themselves are benchmarks
// (bench/), not tests. Skipped when the tool has not been built.
#define BOOST_TEST_MODULE tool_bench
#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tool_test_util.h"

using namespace walseg_test;

BOOST_FIXTURE_TEST_SUITE(tool_bench, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(SwitchPhaseAlone_HeaderGivesItsOwnSizesNotThePerMethodOnes) {
  // It printed "16MB segments, 10 per method; writes of 8kB, 4MB per segment" for a phase that
  // uses none of them.
  auto r = run("bench --dir '" + dir + "' --phases switch --switch-boundaries 8 --switch-segment-size 1MB");
  BOOST_TEST(r.status == 0, r.err);
  const std::string first = r.out.substr(0, r.out.find('\n'));
  BOOST_TEST(first == "walseg bench: 1MB segments, 8 boundaries; sync fdatasync", first);
}

BOOST_AUTO_TEST_CASE(SwitchPhase_SegmentsHoldRealWal_NoWarningAndRecycledRecycles) {
  // The phase wrote raw bytes into its segments, so the manager refused to retire them (a
  // WARNING per segment: 189 in a user's run) and `recycled` created every segment instead.
  auto r = run("bench --dir '" + dir + "' --phases switch --switch-boundaries 8 --switch-segment-size 1MB");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(!contains(r.err, "WARNING"), r.err);
  BOOST_TEST(!contains(r.out, "WARNING"), r.out);
  std::smatch m;
  BOOST_TEST_REQUIRE(std::regex_search(r.out, m, std::regex("\\n  recycled +created ([0-9]+) [^;]*; recycled ([0-9]+);")), r.out);
  BOOST_TEST(std::stoi(m[2]) >= 8, r.out);  // every timed boundary took a recycled segment
  BOOST_TEST(std::stoi(m[1]) <= 4, r.out);  // only the untimed warm-up created any
  BOOST_TEST_REQUIRE(std::regex_search(r.out, m, std::regex("\\n  unpooled +created [^;]*; recycled 0; removed ([0-9]+);")), r.out);
  BOOST_TEST(std::stoi(m[1]) >= 7, r.out);  // retired behind the writer, not refused
}

BOOST_AUTO_TEST_CASE(SwitchPhase_ACheckpointFailureIsTheRunsErrorNotATerminate) {
  // The phase's checkpointer had no catch: "terminate called after throwing an instance of
  // 'walseg::Error'", exit status 134. The second unlink of the run is the first checkpoint's
  // (the control file's temporary name; the first is the manager's start-up clean-up).
  ::setenv("WALSEG_FAILPOINTS", "unlink=EIO@2", 1);
  auto r = run("bench --dir '" + dir + "' --phases switch --switch-boundaries 8 --switch-segment-size 1MB");
  ::unsetenv("WALSEG_FAILPOINTS");
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "walseg: could not remove file"), r.err);
  BOOST_TEST(contains(r.err, "Input/output error"), r.err);
  BOOST_TEST(!contains(r.err, "terminate"), r.err);
}

BOOST_AUTO_TEST_CASE(DirectIo_HeaderSaysTheWalIsWrittenWithODirect) {
  auto r = run("bench --dir '" + dir + "' --phases append --methods sparse --segments 1 -c walseg.direct_io=on");
  BOOST_TEST(r.status == 0, r.err);
  const std::string first = r.out.substr(0, r.out.find('\n'));
  BOOST_TEST(contains(first, "1 per method"), first);
  BOOST_TEST(contains(first, "WAL writes with O_DIRECT (walseg.direct_io)"), first);
  auto off = run("bench --dir '" + dir + "' --phases append --methods sparse --segments 1");
  BOOST_TEST(!contains(off.out.substr(0, off.out.find('\n')), "O_DIRECT"));
}

BOOST_AUTO_TEST_CASE(AppendPhase_NoSegmentIsMadeWhileTheWriterIsMeasured) {
  // The pool was topped up to walseg.prealloc_segments ahead as the writer moved on, so fills
  // ran alongside the commits being timed: one here, and three 16 MB fills beside 64 MB of
  // commits in bench/append_vs_fio.sh's runs, a disk load fio and pg_test_fsync never carry.
  // Then, with 1 kB pages, the segments made beforehand fell short: the estimate of the WAL's
  // size left out the page headers (2 of 120 segments made while timed here).
  struct Case {
    std::uint64_t segments;
    std::string settings;
  };
  for (const Case& c : {Case{3, ""}, Case{120, "-c walseg.block_size=1024"}}) {
    BOOST_TEST_CONTEXT(c.segments << " segments " << c.settings) {
      auto r = run("bench --dir '" + dir + "' --phases append --methods zero_write --segment-size 1MB --segments " +
                   std::to_string(c.segments) + " " + c.settings + " --write-bytes 1MB --json '" + dir + "/rows.json'");
      BOOST_TEST_REQUIRE(r.status == 0, r.err);
      auto rows = nlohmann::json::parse(std::ifstream(dir + "/rows.json"))["rows"];
      BOOST_TEST_REQUIRE(rows.size() == 2u);  // pwrite and io_uring
      for (const auto& row : rows) {
        BOOST_TEST(row["phase"] == "append");
        BOOST_TEST(row["n"].get<std::uint64_t>() == c.segments * 1024 * 1024 / 8192);  // the commits timed
        BOOST_TEST(row["created_while_measuring"].get<std::uint64_t>() == 0u, row.dump());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(AppendPhase_APreallocatorFailureIsReportedAsItself) {
  // Segments not ready before the run were reported as "only 0 of 3 segments were ready ...
  // after 120 s", at once, when the preallocator had failed: its error is the one to give.
  ::setenv("WALSEG_FAILPOINTS", "fsync=EIO*0", 1);
  auto r = run("bench --dir '" + dir + "' --phases append --methods zero_write --segments 1");
  ::unsetenv("WALSEG_FAILPOINTS");
  BOOST_TEST(r.status == 1);
  BOOST_TEST(contains(r.err, "walseg: could not fsync file"), r.err);
  BOOST_TEST(contains(r.err, "Input/output error"), r.err);
  BOOST_TEST(!contains(r.err, "segments were ready"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
