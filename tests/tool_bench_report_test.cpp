// Tests of what `walseg bench` reports beside its measurements (src/bin/bench_tables.cpp,
// bench_advice.cpp, cmd_bench.cpp's JSON): the tables print as pg_test_fsync's do (a phase's
// title before it measures, each row when measured, so a run that fails or is stopped still
// shows what it measured), the notes under a table say how to read it (when `allocated` was
// taken, ops/s as 1 / median), reference rows say what they are (in `used` and in the JSON's
// "reference"), the JSON has "syscalls" null where nothing counted them and the switch phase's
// manager counters, and the verdict ends with what to set for PostgreSQL, PostgreSQL with the
// extension and the tool, each value following from the rows by its stated rule. Failures
// are made with failpoints (fallocate answering EIO). Skipped when the tool has not been built.
#define BOOST_TEST_MODULE tool_bench_report
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tool_test_util.h"

using namespace walseg_test;

namespace {

const nlohmann::json* row_of(const nlohmann::json& doc, const std::string& phase, const std::string& method) {
  for (const auto& r : doc["rows"])
    if (r["phase"] == phase && r["method"] == method) return &r;
  return nullptr;
}

// The auto rule (include/walseg/auto_method.h), written out again from README's words so that a
// copy of the code's mistake cannot pass: {name, creation median, commit p10} in candidate
// order; p10 within 20% of the best, then creation within max(cheapest + 1000, 2 x cheapest)
// of the cheapest of those, then the first.
struct Cand {
  std::string name;
  double create_us, p10_us;
};
std::string rule(const std::vector<Cand>& cs) {
  double best = 1e300;
  for (const auto& c : cs) best = std::min(best, c.p10_us);
  double cheapest = 1e300;
  for (const auto& c : cs)
    if (c.p10_us <= 1.2 * best) cheapest = std::min(cheapest, c.create_us);
  const double bound = std::max(cheapest + 1000, 2 * cheapest);
  for (const auto& c : cs)
    if (c.p10_us <= 1.2 * best && c.create_us <= bound) return c.name;
  return "";
}

// How many times auto's probe ran: its LOG line, one per decision.
std::size_t auto_probes(const std::string& err) {
  std::size_t probes = 0;
  for (std::size_t at = 0; (at = err.find("walseg.init_method = auto chose", at)) != std::string::npos; ++at) ++probes;
  return probes;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_bench_report, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(Verdict_EndsWithWhatToSetForEachHost_FromTheRows) {
  // The verdict named a walseg.init_method and stopped: a DBA was left to translate it into
  // wal_init_zero and wal_recycle, and the extension's settings.
  auto r = run("bench --dir '" + dir + "' --phases create,write,switch --methods zero_write,sparse,none"
               " --segment-size 1MB --segments 3 --write-bytes 256kB --switch-boundaries 8 --json '" + dir + "/j.json'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/j.json"));
  const auto& v = doc["verdict"];
  BOOST_TEST_REQUIRE(v.contains("what_to_set"), v.dump());
  const auto& set = v["what_to_set"];
  // PostgreSQL alone: wal_init_zero by the rule over its two fills, zeros (created as
  // pg15_reference, committing as zero_write) and a hole (sparse).
  const auto* pg15 = row_of(doc, "create", "pg15_reference");
  const auto* zw = row_of(doc, "write", "zero_write");
  const auto* sc = row_of(doc, "create", "sparse");
  const auto* sw = row_of(doc, "write", "sparse");
  BOOST_TEST_REQUIRE((pg15 && zw && sc && sw));
  const std::string pg = rule({{"on", (*pg15)["median_us"].get<double>(), (*zw)["p10_us"].get<double>()},
                               {"off", (*sc)["median_us"].get<double>(), (*sw)["p10_us"].get<double>()}});
  BOOST_TEST(set["postgresql"]["wal_init_zero"] == pg, set.dump());
  // Not copy-on-write here: recycling is on everywhere.
  const std::string recycle = doc["filesystem"]["copy_on_write"].get<bool>() ? "" : "on";
  if (!recycle.empty()) {
    BOOST_TEST(set["postgresql"]["wal_recycle"] == recycle);
    BOOST_TEST(set["walseg"]["walseg.recycle"] == recycle);
  }
  // The tool takes the verdict; the extension the verdict unless it makes short files.
  const std::string both = v["both"].get<std::string>();
  BOOST_TEST(set["walseg"]["walseg.init_method"] == both);
  const std::string ext = set["postgresql_with_extension"]["walseg.init_method"].get<std::string>();
  BOOST_TEST(ext != "none");
  if (both != "none") BOOST_TEST(ext == both);
  // prealloc_segments: kept at 2 unless the pooled switch run waited for a segment.
  const auto* pooled = [&]() -> const nlohmann::json* {
    for (const auto& row : doc["rows"])
      if (row["phase"] == "switch" && row.value("config", "") == "pooled") return &row;
    return nullptr;
  }();
  BOOST_TEST_REQUIRE(pooled != nullptr);
  BOOST_TEST_REQUIRE(pooled->contains("manager"), pooled->dump());
  const bool stalled = (*pooled)["manager"]["stalls"].get<int>() > 0;
  BOOST_TEST(set["postgresql_with_extension"]["walseg.prealloc_segments"] == (stalled ? "4" : "2"), set.dump());
  // The same, in words, after the verdict's lines.
  const auto at = r.out.find("What to set on this filesystem");
  BOOST_TEST_REQUIRE(at != std::string::npos, r.out);
  BOOST_TEST(at > r.out.find("both: walseg.init_method = "), r.out);
  const std::string tail = r.out.substr(at);
  BOOST_TEST(contains(tail, "PostgreSQL without the extension:"), tail);
  BOOST_TEST(contains(tail, "wal_init_zero = " + pg + "  ("), tail);
  BOOST_TEST(contains(tail, "PostgreSQL with the extension:"), tail);
  BOOST_TEST(contains(tail, "walseg.init_method = " + ext + "  ("), tail);
  BOOST_TEST(contains(tail, "the walseg tool:"), tail);
  if (!recycle.empty()) BOOST_TEST(contains(tail, "wal_recycle = on  ("), tail);
  // A choice that reserves no space says what a full disk then does (new-user trial 16).
  const std::string why_pg = set["postgresql"]["why"]["wal_init_zero"].get<std::string>();
  BOOST_TEST(contains(why_pg, "a full disk fails a commit's WAL write (in PostgreSQL a PANIC)") == (pg == "off"),
             why_pg);
  const std::string why_tool = set["walseg"]["why"]["walseg.init_method"].get<std::string>();
  BOOST_TEST(contains(why_tool, "reserves no space") == (both == "sparse" || both == "none"), why_tool);
}

BOOST_AUTO_TEST_CASE(Json_ReferenceRowsMarked_SyscallsNullWhereUncounted_SwitchCountersIncluded) {
  // The recycle row had "reference": false, every row "syscalls": 0 (counted or not), and the
  // switch phase's manager counters were printed but missing from the JSON.
  auto r = run("bench --dir '" + dir + "' --phases create,write,switch --methods sparse --segment-size 1MB"
               " --segments 2 --write-bytes 64kB --switch-boundaries 8 --json '" + dir + "/j.json'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/j.json"));
  for (const char* m : {"pg13_reference", "pg15_reference", "recycle"})
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
  // zero_write (pg13_reference, pg15_reference) or recycle, which are not what they do.
  auto r = run("bench --dir '" + dir + "' --phases create,write --methods sparse --segment-size 1MB --segments 3"
               " --write-bytes 64kB --json '" + dir + "/j.json'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/j.json"));
  for (const auto& row : doc["rows"]) {
    const double median = row["median_us"].get<double>();
    BOOST_TEST(std::abs(row["ops_per_s"].get<double>() - 1e6 / median) < 1e-6 * (1e6 / median), row.dump());
  }
  for (const char* m : {"pg13_reference", "pg15_reference", "recycle"}) BOOST_TEST_REQUIRE(row_of(doc, "create", m) != nullptr, m);
  BOOST_TEST_REQUIRE(row_of(doc, "write", "recycle") != nullptr);
  BOOST_TEST((*row_of(doc, "create", "pg13_reference"))["method_used"] == "zeros, 8kB writes");
  BOOST_TEST((*row_of(doc, "create", "pg15_reference"))["method_used"] == "zeros, 256kB pwritev");
  BOOST_TEST((*row_of(doc, "create", "recycle"))["method_used"] == "rename, no fill");
  BOOST_TEST((*row_of(doc, "write", "recycle"))["method_used"] == "recycled segment");
  BOOST_TEST(contains(r.out, "  * ops/s: 1 / median. allocated: st_blocks x 512 of each segment right after its creation;"), r.out);
  BOOST_TEST(contains(r.out, "right after its creation, before the commits"), r.out);
  // Issue 17: a saved document did not say which build measured it, when, or on which kernel.
  auto v = run("--version");
  BOOST_TEST(doc["version"].get<std::string>() == v.out.substr(v.out.find(' ') + 1, v.out.find('\n') - v.out.find(' ') - 1),
             v.out);
  const std::string at = doc["started_at"].get<std::string>();
  BOOST_TEST(std::regex_match(at, std::regex("20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z")), at);
  std::tm tm{};
  BOOST_TEST_REQUIRE(::strptime(at.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) != nullptr);
  const double age_s = std::difftime(std::time(nullptr), ::timegm(&tm));
  BOOST_TEST((age_s >= 0 && age_s < 600), at << " is " << age_s << " s ago");
  BOOST_TEST(doc["kernel"].get<std::string>().rfind("Linux ", 0) == 0, doc["kernel"].dump());
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

// The new-user trial: two default runs, both with `other: yes` in their Device I/O tables, gave
// opposite advice, and neither verdict said its figures were disturbed. A second writer on the
// same disk runs through the write phase here.
BOOST_AUTO_TEST_CASE(AVerdictMeasuredBesideAnotherWriterSaysSo) {
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    const int fd = ::open((dir + "/other-writer").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return;
    const std::string block(64 * 1024, 'w');
    for (off_t off = 0; !stop; off = (off + 65536) % (8 << 20))
      if (::pwrite(fd, block.data(), block.size(), off) < 0 || ::fdatasync(fd) != 0) break;
    ::close(fd);
  });
  auto r = run("bench --dir '" + dir + "' --phases create,write --methods zero_write,sparse --segment-size 1MB"
               " --segments 2 --write-bytes 512kB --json '" + dir + "/j.json'");
  stop = true;
  writer.join();
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/j.json"));
  bool flagged = false;
  for (const auto& row : doc["rows"]) flagged = flagged || row.value("device_other_io", false);
  if (!flagged) {
    BOOST_TEST_MESSAGE("skipped: no row saw the other writer (no block-device counters here?)");
    return;
  }
  BOOST_TEST((doc["verdict"]["other_io_during"] == nlohmann::json::array({"write"})), doc["verdict"].dump());
  BOOST_TEST(contains(r.out, "caution: something else used the disk while the write phase measured"), r.out);
}

// New-user trial 14: with --methods none,posix_fallocate the verdict put auto's zero_write down
// to "its probe measures 4MB files", though --methods had left zero_write out of the run.
BOOST_AUTO_TEST_CASE(TheVerdictSaysWhenAutosChoiceWasNotAmongTheMethods) {
  auto r = run("bench --dir '" + dir + "' --phases create,write --methods none,sparse --segments 1 --segment-size 1MB"
               " --json '" + dir + "/m.json'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/m.json"));
  BOOST_TEST_REQUIRE(doc["verdict"].contains("auto"), doc["verdict"].dump());
  const std::string chose = doc["verdict"]["auto"]["method"];
  if (chose == "none" || chose == "sparse") {
    BOOST_TEST(!contains(r.out, "is not among this run's --methods"), r.out);
  } else {
    BOOST_TEST(contains(r.out, "its probe tries every method, and " + chose + " is not among this run's --methods"), r.out);
    BOOST_TEST(!contains(r.out, "its probe measures"), r.out);
  }
}

// New-user trial 14: "(1 segments of 16MB per row".
BOOST_AUTO_TEST_CASE(OneSegmentIsSingular) {
  auto one = run("bench --dir '" + dir + "' --phases create --methods none --segments 1 --segment-size 1MB");
  BOOST_TEST(one.status == 0, one.err);
  BOOST_TEST(contains(one.out, "(1 segment of 1MB per row,"), one.out);
}

// Review: the verdict's line about auto probed a second time, after the commit phase had run on
// the first probe's choice (twice the cost, and at times another answer beside the rows).
BOOST_AUTO_TEST_CASE(TheVerdictsAutoLineReusesTheProbeTheCommitPhaseRanOn) {
  auto r = run("bench --dir '" + dir + "' --phases create,write,commit --methods zero_write,posix_fallocate --segments 2"
               " --segment-size 1MB --clients 1 --commit-seconds 0.2 -c walseg.init_method=auto --json '" + dir +
               "/v.json'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(auto_probes(r.err) == 1u, r.err);
  BOOST_TEST(contains(r.out, "probing this directory (the probe before the switch and commit phases), chooses"), r.out);
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/v.json"));
  BOOST_TEST_REQUIRE(doc["verdict"].contains("auto"), doc["verdict"].dump());
  for (const auto& row : doc["rows"])
    if (row["phase"] == "commit") BOOST_TEST(row["method"] == doc["verdict"]["auto"]["method"], row.dump());
}

// The new-user trial: with walseg.init_method = auto the switch phase's unpooled and pooled
// runs each probed, and ran zero_write and posix_fallocate. auto is now decided once.
BOOST_AUTO_TEST_CASE(AutoIsProbedOnceForTheSwitchAndCommitPhases) {
  auto r = run("bench --dir '" + dir + "' --phases switch,commit --switch-boundaries 8 --clients 1 --commit-seconds 0.2"
               " -c walseg.init_method=auto --json '" + dir + "/j.json'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(auto_probes(r.err) == 1u, r.err);
  BOOST_TEST(contains(r.out, "for the switch and commit phases, probed once for all of them"), r.out);
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/j.json"));
  std::set<std::string> methods;
  for (const auto& row : doc["rows"])
    if (row["phase"] == "commit" || (row["phase"] == "switch" && row["config"] != "recycled")) methods.insert(row["method"]);
  BOOST_TEST(methods.size() == 1u, doc["rows"].dump());
}

// New-user trial 3: the JSON said segment_size, write_size and sync_method only, so two runs with
// other methods, phases, client counts or walseg.io_method could not be told apart from it.
BOOST_AUTO_TEST_CASE(TheJsonSaysEverythingTheRunWasAskedFor) {
  auto r = run("bench --dir '" + dir + "' --phases create,write,create --methods sparse,none,sparse --segments 2"
               " --segment-size 1MB --write-bytes 64kB --clients 3,1 --commit-seconds 0.5 --switch-boundaries 9 --switch-segment-size 2MB"
               " -c walseg.io_method=io_uring -c walseg.prealloc_segments=5 --json '" + dir + "/s.json'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/s.json"));
  BOOST_TEST_REQUIRE(doc.contains("settings"), doc.dump());
  const auto& s = doc["settings"];
  BOOST_TEST(s["phases"] == nlohmann::json({"create", "write"}), s.dump());
  BOOST_TEST(s["methods"] == nlohmann::json({"sparse", "none"}), s.dump());
  BOOST_TEST(s["segments"] == 2);
  BOOST_TEST(s["segment_size"] == 1048576);
  BOOST_TEST(s["clients"] == nlohmann::json({3, 1}), s.dump());
  BOOST_TEST(s["commit_seconds"].get<double>() == 0.5);
  BOOST_TEST(s["switch_boundaries"] == 9);
  BOOST_TEST(s["switch_segment_size"] == 2097152);
  BOOST_TEST(s["walseg"]["walseg.io_method"]["value"] == "io_uring", s.dump());
  BOOST_TEST(s["walseg"]["walseg.io_method"]["source"] == "command line", s.dump());
  BOOST_TEST(s["walseg"]["walseg.prealloc_segments"]["value"] == "5", s.dump());
  BOOST_TEST(s["walseg"]["walseg.segment_size"]["value"] == "1MB", s.dump());
  // Every setting `walseg show` lists, with the value it shows.
  auto shown = run("show all -c walseg.io_method=io_uring -c walseg.prealloc_segments=5 -c walseg.segment_size=1MB");
  BOOST_TEST_REQUIRE(shown.status == 0, shown.err);
  std::size_t names = 0;
  for (const auto& [name, v] : s["walseg"].items()) {
    ++names;
    BOOST_TEST(std::regex_search(shown.out, std::regex("(^|\\n) " + name + " +\\| " + v["value"].get<std::string>() + " +\\|")),
               name << " " << v.dump() << "\n" << shown.out);
  }
  BOOST_TEST(contains(shown.out, "(" + std::to_string(names) + " rows)"), shown.out);
  // The Device I/O table printed JSON's `null` where a figure was not measured (no jbd2 journal);
  // the other tables print "-".
  const auto table = r.out.find("\nDevice I/O of these commits");
  BOOST_TEST_REQUIRE(table != std::string::npos, r.out);
  BOOST_TEST(!contains(r.out.substr(table), "null"), r.out);
}

// New-user trial 3: the switch, commit and append phases' scratch WALs each put a "LOG:  created
// walseg.control in .../switch/pooled" line on stderr, between the tables, about nothing the
// user made. Their WARNINGs (about the filesystem) still print.
BOOST_AUTO_TEST_CASE(TheScratchWalsOfThePhasesLogNothing) {
  auto r = run("bench --dir '" + dir + "' --phases switch,commit,append --switch-boundaries 8 --clients 1"
               " --commit-seconds 0.2 --segment-size 1MB -c walseg.init_method=sparse");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(!contains(r.err, "LOG:  created walseg.control"), r.err);
  BOOST_TEST(!contains(r.err, "LOG:  WAL in "), r.err);
  // A write outside bench still says it made a WAL.
  auto w = run("write --dir '" + dir + "/w' --records 1 -c walseg.segment_size=1MB -c walseg.min_size=2MB");
  BOOST_TEST_REQUIRE(w.status == 0, w.err);
  BOOST_TEST(contains(w.err, "LOG:  created walseg.control"), w.err);
}

BOOST_AUTO_TEST_SUITE_END()
