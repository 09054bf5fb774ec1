// Tests of `walseg bench`'s scratch directory (src/bin/bench_scratch.cpp, cmd_bench.cpp,
// bench_stop.cpp), run as a user would run it (tool_process.h): the scratch is a fresh
// directory of its own, never one that was already there; only what bench made is removed,
// at the end and when it is interrupted (SIGINT, SIGTERM, its reader gone); an interrupted
// bench stops promptly and exits 128 + the signal's number. Runs are the smallest that still
// keep bench busy long enough to be interrupted. Skipped when the tool has not been built.
#define BOOST_TEST_MODULE tool_bench_scratch
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tool_process.h"
#include "tool_test_util.h"

using namespace walseg_test;

namespace {

// Every path under `dir`, relative to it, sorted.
std::vector<std::string> tree(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    names.push_back(fs::relative(e.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += n + " ";
  return s;
}

std::string slurp(const std::string& path) {
  std::ostringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

// The scratch directory a running bench made in `parent` ("" until it appears).
std::string wait_for_scratch(const std::string& parent, const std::string& except = "", double timeout_s = 10) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    for (const auto& e : fs::directory_iterator(parent)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("walseg-bench-", 0) == 0 && name != except) return e.path().string();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

std::vector<std::string> args_of(const std::string& dir, std::vector<std::string> more) {
  std::vector<std::string> a = {"bench", "--dir", dir, "--segment-size", "1MB"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_bench_scratch, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(ADirectoryWithTheOldNamePattern_IsNeitherUsedNorTouched) {
  // bench used walseg-bench-<pid> whether it existed or not (left by an interrupted run, and
  // pids are reused), then removed everything in it.
  const std::string parent = dir + "/p";
  fs::create_directory(parent);
  ToolProcess p(args_of(parent, {"--phases", "create", "--segments", "2"}), dir + "/out", dir + "/err",
                {.paused = true});
  const std::string old_name = "walseg-bench-" + std::to_string(p.pid());
  const std::string theirs = parent + "/" + old_name;
  fs::create_directory(theirs);
  std::ofstream(theirs + "/results.txt") << "last week's numbers\n";
  p.resume();
  const int status = p.wait(60);
  BOOST_TEST(describe_status(status) == "exit 0", describe_status(status) + "; " + slurp(dir + "/err"));
  BOOST_TEST((tree(parent) == std::vector<std::string>{old_name, old_name + "/results.txt"}));
  BOOST_TEST(slurp(theirs + "/results.txt") == "last week's numbers\n");
}

BOOST_AUTO_TEST_CASE(SigintOrSigtermDuringARun_StopsPromptlyRemovesTheScratchAndExits128PlusSigno) {
  // The default action killed bench and left its scratch directory (65-96 MB) behind.
  struct Case {
    int signo;
    int status;
    std::vector<std::string> phase;  // a commit loop, and a fill loop
  };
  const std::vector<Case> cases = {
      {SIGINT, 130, {"--phases", "commit", "--clients", "1", "--commit-seconds", "20"}},
      // Seconds of fills in a few GB (5000 1MB segments of every method needed 34GB free,
      // which a CI machine need not have): the last --segment-size counts.
      {SIGTERM, 143, {"--phases", "create", "--methods", "zero_write", "--segments", "40", "--segment-size", "16MB"}},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("signal " << c.signo) {
      const std::string parent = dir + "/p" + std::to_string(c.signo);
      fs::create_directory(parent);
      // New-user trial 17: an interrupted run's --json file was not there, without a word.
      const std::string json = dir + "/r" + std::to_string(c.signo) + ".json";
      std::vector<std::string> args = c.phase;
      args.insert(args.end(), {"--json", json});
      ToolProcess p(args_of(parent, args), dir + "/out", dir + "/err");
      BOOST_TEST_REQUIRE(!wait_for_scratch(parent).empty());
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      BOOST_TEST_REQUIRE(describe_status(p.wait(0)) == "still running");
      const auto sent = std::chrono::steady_clock::now();
      p.signal(c.signo);
      const int status = p.wait(30);
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
      BOOST_TEST(describe_status(status) == "exit " + std::to_string(c.status),
                 describe_status(status) + "; " + slurp(dir + "/err"));
      BOOST_TEST(took < 5.0);
      BOOST_TEST(tree(parent).empty(), joined(tree(parent)));
      BOOST_TEST(contains(slurp(dir + "/err"), "interrupted"), slurp(dir + "/err"));
      BOOST_TEST(contains(slurp(dir + "/err"), "--json \"" + json + "\" not written"), slurp(dir + "/err"));
      BOOST_TEST(!fs::exists(json));
    }
  }
}

BOOST_AUTO_TEST_CASE(ReaderGone_BenchPipedIntoHeadExits141AndLeavesNothing) {
  // `walseg bench | head -1`: SIGPIPE killed bench at its next line and left the scratch.
  const std::string parent = dir + "/p";
  fs::create_directory(parent);
  ToolProcess p(args_of(parent, {"--phases", "create", "--segments", "4"}), dir + "/out", dir + "/err",
                {.pipe_stdout = true});
  BOOST_TEST(contains(p.read_line(), "walseg bench:"));
  p.close_stdout();
  const int status = p.wait(60);
  BOOST_TEST(describe_status(status) == "exit 141", describe_status(status) + "; " + slurp(dir + "/err"));
  BOOST_TEST(tree(parent).empty(), joined(tree(parent)));
}

BOOST_AUTO_TEST_CASE(FilesPlantedInTheScratchDuringTheRun_SurviveAndTheDirectoryIsLeftWithAMessage) {
  // The end of the run removed the scratch directory recursively, with whatever was in it.
  const std::string parent = dir + "/p";
  fs::create_directory(parent);
  ToolProcess p(args_of(parent, {"--phases", "commit", "--clients", "1", "--commit-seconds", "1"}),
                dir + "/out", dir + "/err");
  const std::string scratch = wait_for_scratch(parent);
  BOOST_TEST_REQUIRE(!scratch.empty());
  std::ofstream(scratch + "/notes.txt") << "mine\n";
  // A file inside a directory bench made and works in.
  for (int i = 0; i < 250 && !fs::exists(scratch + "/commit"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::ofstream(scratch + "/commit/also-mine.txt") << "mine too\n";
  const int status = p.wait(60);
  BOOST_TEST(describe_status(status) == "exit 0", describe_status(status) + "; " + slurp(dir + "/err"));
  const std::string name = fs::path(scratch).filename().string();
  BOOST_TEST((tree(parent) == std::vector<std::string>{name, name + "/commit", name + "/commit/also-mine.txt",
                                                       name + "/notes.txt"}));
  BOOST_TEST(slurp(scratch + "/notes.txt") == "mine\n");
  const std::string err = slurp(dir + "/err");
  BOOST_TEST(contains(err, "\"" + scratch + "\""), err);
  BOOST_TEST(contains(err, "notes.txt"), err);
  BOOST_TEST(contains(err, "commit/also-mine.txt"), err);
}

BOOST_AUTO_TEST_CASE(ADirectoryReplacedByALinkDuringTheRun_NothingWhereItPointsIsRemoved) {
  // Break-it finding: the cleanup checked only the last component of each path, so a bench
  // directory moved away and replaced by a link to another tree had walseg-named files
  // removed from that tree.
  const std::string parent = dir + "/p", victim = dir + "/victim";
  fs::create_directories(victim + "/1-pwrite");
  for (const char* f : {"/1-pwrite/000000010000000000000001", "/1-pwrite/walseg.control", "/notes.txt"})
    std::ofstream(victim + f) << "theirs\n";
  fs::create_directory(parent);
  ToolProcess p(args_of(parent, {"--phases", "commit", "--clients", "1", "--commit-seconds", "2"}),
                dir + "/out", dir + "/err");
  const std::string scratch = wait_for_scratch(parent);
  BOOST_TEST_REQUIRE(!scratch.empty());
  for (int i = 0; i < 500 && !fs::exists(scratch + "/commit/1-pwrite"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  BOOST_REQUIRE(fs::exists(scratch + "/commit/1-pwrite"));
  fs::rename(scratch + "/commit", dir + "/commit.moved");
  fs::create_directory_symlink(victim, scratch + "/commit");
  // Bench may go on or stop ("a file that is not a directory is in its place"), but it ends by
  // itself and leaves what the link points to as it was.
  const int status = p.wait(60);
  BOOST_TEST((describe_status(status) == "exit 0" || describe_status(status) == "exit 1"),
             describe_status(status) + "; " + slurp(dir + "/err"));
  for (const char* f : {"/1-pwrite/000000010000000000000001", "/1-pwrite/walseg.control", "/notes.txt"})
    BOOST_TEST(slurp(victim + f) == "theirs\n", f);
}

BOOST_AUTO_TEST_CASE(ASignalIgnoredWhenBenchStarts_StaysIgnoredAndTheRunFinishes) {
  // Under nohup (SIGHUP ignored) or in a non-interactive shell's background job (SIGINT
  // ignored), bench blocked the signal anyway, took it by sigtimedwait and stopped.
  for (int signo : {SIGINT, SIGHUP}) {
    BOOST_TEST_CONTEXT("signal " << signo) {
      const std::string parent = dir + "/p" + std::to_string(signo);
      fs::create_directory(parent);
      ToolProcess p(args_of(parent, {"--phases", "commit", "--clients", "1", "--commit-seconds", "1"}), dir + "/out",
                    dir + "/err", {.ignore = {signo}});
      BOOST_TEST_REQUIRE(!wait_for_scratch(parent).empty());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      p.signal(signo);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      p.signal(signo);
      const int status = p.wait(60);
      BOOST_TEST(describe_status(status) == "exit 0", describe_status(status) + "; " + slurp(dir + "/err"));
      BOOST_TEST(!contains(slurp(dir + "/err"), "interrupted"), slurp(dir + "/err"));
      BOOST_TEST(contains(slurp(dir + "/out"), "Group commit"), slurp(dir + "/out"));
      BOOST_TEST(tree(parent).empty(), joined(tree(parent)));
    }
  }
}

BOOST_AUTO_TEST_CASE(FilesUnderWalsegNamesPlantedInTheScratch_AreLeftNamedAndNotCalledRemoved) {
  // The cleanup removed every regular file named as walseg names its own, whoever made it, and
  // the message said "everything bench made in it was removed" next to what it left.
  const std::string parent = dir + "/p";
  fs::create_directory(parent);
  ToolProcess p(args_of(parent, {"--phases", "commit", "--clients", "1", "--commit-seconds", "1"}),
                dir + "/out", dir + "/err");
  const std::string scratch = wait_for_scratch(parent);
  BOOST_TEST_REQUIRE(!scratch.empty());
  for (const char* f : {"/000000010000000000000001", "/walseg.lock", "/walseg.control"})
    std::ofstream(scratch + f) << "mine\n";
  const int status = p.wait(60);
  BOOST_TEST(describe_status(status) == "exit 0", describe_status(status) + "; " + slurp(dir + "/err"));
  const std::string err = slurp(dir + "/err");
  for (const char* f : {"/000000010000000000000001", "/walseg.lock", "/walseg.control"}) {
    BOOST_TEST(slurp(scratch + f) == "mine\n", f);
    BOOST_TEST(contains(err, std::string(f).substr(1)), err);
  }
  BOOST_TEST(contains(err, "\"" + scratch + "\""), err);
  BOOST_TEST(!contains(err, "removed"), err);
  const std::string name = fs::path(scratch).filename().string();
  BOOST_TEST((tree(parent) == std::vector<std::string>{name, name + "/000000010000000000000001",
                                                       name + "/walseg.control", name + "/walseg.lock"}),
             joined(tree(parent)));
}

BOOST_AUTO_TEST_CASE(ADirectorySwappedIntoThePlaceOfOneOfBenchs_IsNotEnteredAndIsNamed) {
  // The cleanup checked that each step of its walk was a real directory, not that it was the
  // one bench made: another directory renamed into the place of one of bench's between two
  // phases had its walseg-named files removed.
  const std::string parent = dir + "/p", theirs = dir + "/theirs";
  const std::vector<std::string> files = {"/1-pwrite/000000010000000000000001", "/1-pwrite/walseg.control",
                                          "/1-pwrite/walseg.lock", "/000000010000000000000002"};
  fs::create_directories(theirs + "/1-pwrite");
  for (const auto& f : files) std::ofstream(theirs + f) << "theirs\n";
  fs::create_directory(parent);
  ToolProcess p(args_of(parent, {"--phases", "commit", "--clients", "1", "--commit-seconds", "2"}),
                dir + "/out", dir + "/err");
  const std::string scratch = wait_for_scratch(parent);
  BOOST_TEST_REQUIRE(!scratch.empty());
  for (int i = 0; i < 500 && !fs::exists(scratch + "/commit/1-pwrite"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  BOOST_REQUIRE(fs::exists(scratch + "/commit/1-pwrite"));
  fs::rename(scratch + "/commit", dir + "/commit.moved");
  fs::rename(theirs, scratch + "/commit");
  // Bench may go on or stop (the next phase directory cannot be made in a directory it did not
  // make), but it ends by itself and leaves the directory put in place of its own as it was.
  const int status = p.wait(60);
  const std::string err = slurp(dir + "/err");
  BOOST_TEST((describe_status(status) == "exit 0" || describe_status(status) == "exit 1"),
             describe_status(status) + "; " + err);
  for (const auto& f : files) BOOST_TEST(slurp(scratch + "/commit" + f) == "theirs\n", f);
  BOOST_TEST(contains(err, "\"" + scratch + "/commit\" is not the directory walseg bench made"), err);
  BOOST_TEST(!contains(err, "removed"), err);
}

BOOST_AUTO_TEST_CASE(AScratchLeftByAKilledRun_IsNeitherReusedNorEmptiedByTheNextRun) {
  // SIGKILL leaves no chance to clean up: what it left must survive every later run as it is.
  const std::string parent = dir + "/p";
  fs::create_directory(parent);
  std::string old_scratch;
  {
    // The untimed first step of the phase writes the segments its recycle row renames.
    ToolProcess killed(args_of(parent, {"--phases", "create", "--segments", "50"}), dir + "/out", dir + "/err");
    old_scratch = wait_for_scratch(parent);
    BOOST_TEST_REQUIRE(!old_scratch.empty());
    for (int i = 0; i < 500 && !fs::exists(old_scratch + "/create/recycle/000000010000000000000002"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    killed.signal(SIGKILL);
    BOOST_TEST(describe_status(killed.wait(30)) == "killed by signal 9");
  }
  const std::vector<std::string> before = tree(parent);
  BOOST_TEST_REQUIRE(contains(joined(before), "create/recycle/000000010000000000000001"), before.size() << " paths");
  ToolProcess next(args_of(parent, {"--phases", "create", "--segments", "2"}), dir + "/out", dir + "/err");
  const std::string new_scratch = wait_for_scratch(parent, fs::path(old_scratch).filename().string());
  BOOST_TEST(!new_scratch.empty());
  BOOST_TEST(new_scratch != old_scratch);
  const int status = next.wait(60);
  BOOST_TEST(describe_status(status) == "exit 0", describe_status(status) + "; " + slurp(dir + "/err"));
  const std::vector<std::string> after = tree(parent);
  BOOST_TEST((after == before), before.size() << " paths before, " << after.size() << " after");
}

BOOST_AUTO_TEST_CASE(KeepOption_KeepsEverything) {
  auto r = run("bench --dir '" + dir + "/p' --segment-size 1MB --phases create --segments 1 --keep");
  BOOST_TEST(r.status == 0, r.err);
  const std::string scratch = wait_for_scratch(dir + "/p", "", 0.1);
  BOOST_TEST_REQUIRE(!scratch.empty());
  BOOST_TEST(contains(r.out, "kept " + scratch));
  BOOST_TEST(fs::exists(scratch + "/create/zero_write/000000010000000000000001"));
}

// New-user trial 3: a run that ended well removed its scratch directory without a word, so a
// user looking for the segments it made had to read README to learn there are none.
BOOST_AUTO_TEST_CASE(ARunThatEndsWell_SaysItRemovedItsScratchDirectory) {
  fs::create_directory(dir + "/p");
  auto r = run("bench --dir '" + dir + "/p' --segment-size 1MB --phases create --methods none --segments 1");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  std::smatch m;
  BOOST_TEST_REQUIRE(std::regex_search(r.out, m, std::regex("\nremoved the scratch directory (\\S+) \\(--keep keeps it\\)\n$")), r.out);
  BOOST_TEST(fs::path(m[1].str()).parent_path() == fs::path(dir + "/p"), r.out);
  BOOST_TEST(fs::path(m[1].str()).filename().string().rfind("walseg-bench-", 0) == 0u, r.out);
  BOOST_TEST(!fs::exists(m[1].str()));
  BOOST_TEST(wait_for_scratch(dir + "/p", "", 0.1).empty());
}

BOOST_AUTO_TEST_SUITE_END()
