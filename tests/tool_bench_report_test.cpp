// Tests of what `walseg bench` reports beside its measurements (src/bin/bench_tables.cpp,
// cmd_bench.cpp's JSON): the tables print as pg_test_fsync's do (a phase's
// title before it measures, each row when measured, so a run that fails or is stopped still
// shows what it measured), the notes under a table say how to read it (when `allocated` was
// taken, ops/s as 1 / median), reference rows say what they are (in `used` and in the JSON's
// "reference"), the JSON has "syscalls" null where nothing counted them and the switch phase's
// manager counters. Failures
// are made with failpoints (fallocate answering EIO). Skipped when the tool has not been built.
#define BOOST_TEST_MODULE tool_bench_report
#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tool_test_util.h"

using namespace walseg_test;

namespace {

const nlohmann::json* row_of(const nlohmann::json& doc, const std::string& phase, const std::string& method) {
  for (const auto& r : doc["rows"])
    if (r["phase"] == phase && r["method"] == method) return &r;
  return nullptr;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_bench_report, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(Json_ReferenceRowsMarked_SyscallsNullWhereUncounted_SwitchCountersIncluded) {
  // The recycle row had "reference": false, every row "syscalls": 0 (counted or not), and the
  // switch phase's manager counters were printed but missing from the JSON.
  auto r = run("bench --dir '" + dir + "' --phases create,write,switch --methods sparse --segment-size 1MB"
               " --segments 2 --write-bytes 64kB --switch-boundaries 8 --json '" + dir + "/j.json'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/j.json"));
  for (const char* m : {"pg14_reference", "pg16_reference", "recycle"})
    BOOST_TEST((row_of(doc, "create", m) != nullptr && (*row_of(doc, "create", m))["reference"] == true), m);
  BOOST_TEST((*row_of(doc, "create", "sparse"))["reference"] == false);
  // One name for recycling in both tables, and it is a reference there too.
  BOOST_TEST(row_of(doc, "write", "recycled") == nullptr);
  BOOST_TEST_REQUIRE(row_of(doc, "write", "recycle") != nullptr);
  BOOST_TEST((*row_of(doc, "write", "recycle"))["reference"] == true);
  BOOST_TEST((*row_of(doc, "create", "recycle"))["syscalls"].is_null());  // a rename, not counted
  BOOST_TEST((*row_of(doc, "create", "sparse"))["syscalls"].get<int>() > 0);
  int switch_rows = 0;
  for (const auto& row : doc["rows"]) {
    if (row["phase"] == "write" || row["phase"] == "switch") BOOST_TEST(row["syscalls"].is_null(), row.dump());
    if (row["phase"] != "switch") continue;
    ++switch_rows;
    BOOST_TEST_REQUIRE(row.contains("manager"), row.dump());
    const auto& m = row["manager"];
    for (const char* key : {"created_by_method", "recycled", "removed", "stalls", "stall", "fill", "writer_switches"})
      BOOST_TEST(m.contains(key), key);
    BOOST_TEST(m["writer_switches"].get<int>() >= 8, m.dump());
  }
  BOOST_TEST(switch_rows == 6);
}

BOOST_AUTO_TEST_CASE(Tables_SayWhenAllocatedWasTakenAndOpsIsOneOverTheMedian_ReferencesSayWhatTheyAre) {
  // ops/s was n / the sum of the samples (1 / the mean), a statistic no column printed; the
  // `allocated` column did not say when it was measured; the references' `used` said
  // zero_write (pg14_reference, pg16_reference) or recycle, which are not what they do.
  auto r = run("bench --dir '" + dir + "' --phases create,write --methods sparse --segment-size 1MB --segments 3"
               " --write-bytes 64kB --json '" + dir + "/j.json'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/j.json"));
  for (const auto& row : doc["rows"]) {
    const double median = row["median_us"].get<double>();
    BOOST_TEST(std::abs(row["ops_per_s"].get<double>() - 1e6 / median) < 1e-6 * (1e6 / median), row.dump());
  }
  for (const char* m : {"pg14_reference", "pg16_reference", "recycle"}) BOOST_TEST_REQUIRE(row_of(doc, "create", m) != nullptr, m);
  BOOST_TEST_REQUIRE(row_of(doc, "write", "recycle") != nullptr);
  BOOST_TEST((*row_of(doc, "create", "pg14_reference"))["method_used"] == "zeros, 8kB writes");
  BOOST_TEST((*row_of(doc, "create", "pg16_reference"))["method_used"] == "zeros, 256kB pwritev");
  BOOST_TEST((*row_of(doc, "create", "recycle"))["method_used"] == "rename, no fill");
  BOOST_TEST((*row_of(doc, "write", "recycle"))["method_used"] == "recycled segment");
  BOOST_TEST(contains(r.out, "  * ops/s: 1 / median. allocated: st_blocks x 512 of each segment right after its creation;"), r.out);
  BOOST_TEST(contains(r.out, "right after its creation, before the commits"), r.out);
}

BOOST_AUTO_TEST_CASE(Progress_APhaseTitleComesBeforeItMeasures_RowsBeforeAFailureArePrinted) {
  // Tables were printed only after their whole phase: a 1 GB create ran 34 s without a line,
  // and a phase that failed at its second row showed nothing of its first. fallocate answering
  // EIO fails posix_fallocate (an error, never a fallback) and nothing else.
  ::setenv("WALSEG_FAILPOINTS", "fallocate=EIO*0", 1);
  auto c = run("bench --dir '" + dir + "' --phases create --methods posix_fallocate --segment-size 1MB --segments 2");
  auto a = run("bench --dir '" + dir + "' --phases append --methods zero_write,posix_fallocate --segment-size 1MB"
               " --segments 2 --write-bytes 64kB");
  ::unsetenv("WALSEG_FAILPOINTS");
  BOOST_TEST(c.status == 1, c.err);
  BOOST_TEST(contains(c.err, "fallocate"), c.err);
  BOOST_TEST(contains(c.out, "\nSegment creation (temp file, fill, fsync, rename, directory fsync)"), c.out);
  BOOST_TEST(contains(c.out, "(2 segments of 1MB per row, measured round-robin; the rows follow the last round)"), c.out);
  BOOST_TEST(a.status == 1, a.err);
  BOOST_TEST(contains(a.out, "\nWAL appends, one writer"), a.out);
  BOOST_TEST(contains(a.out, "\n  zero_write           pwrite"), a.out);  // measured before the failure
  BOOST_TEST(!contains(a.out, "\n  posix_fallocate"), a.out);
}

BOOST_AUTO_TEST_SUITE_END()
