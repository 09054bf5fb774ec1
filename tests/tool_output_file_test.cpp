// The files the tool writes for the user (`bench --json`, `write --ack-log`) never become a
// WAL's files, whatever happens to their names during the run (src/bin/output_file.h).
// Break-it round 9: both were opened by name after being checked by name, so a symbolic link
// put in the name meanwhile was followed into a segment or another WAL's walseg.control.
#define BOOST_TEST_MODULE tool_output_file
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "tool_process.h"
#include "tool_test_util.h"

using namespace walseg_test;

namespace {

const std::string k1MB = " -c walseg.segment_size=1MB -c walseg.min_size=2MB";
const std::string kSeg1 = "/000000010000000000000001";

std::string slurp(const std::string& path) {
  std::ostringstream s;
  s << std::ifstream(path, std::ios::binary).rdbuf();
  return s.str();
}

/// Starts a bench whose create phase runs some seconds with `json` as its --json file and
/// returns once its first stdout line is out, so the JSON file was opened. Output goes to
/// dir/out and dir/err.
std::unique_ptr<ToolProcess> start_bench_under_way(const std::string& dir, const std::string& json) {
  auto p = std::make_unique<ToolProcess>(
      std::vector<std::string>{"bench", "--dir", dir, "--json", json, "--phases", "create", "--methods",
                               "zero_write", "--segments", "6", "--segment-size", "16MB"},
      dir + "/out", dir + "/err");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (slurp(dir + "/out").empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  BOOST_REQUIRE_MESSAGE(!slurp(dir + "/out").empty(), "bench printed nothing in 30 s");
  return p;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_output_file, ToolTest, *boost::unit_test::precondition(tool_built))

// F1: the JSON file was reopened by name when the run ended; a symbolic link to a segment put
// in its place mid-run had the segment truncated into JSON (500 acknowledged records lost).
BOOST_AUTO_TEST_CASE(BenchJsonWhoseNameIsReplacedMidRunIsNotFollowed) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 50 --record-size 1000" + k1MB).status == 0);
  const std::string segment = slurp(wal + kSeg1);
  const std::string json = dir + "/j.json";
  auto p = start_bench_under_way(dir, json);
  BOOST_REQUIRE(fs::exists(json));
  BOOST_REQUIRE(::symlink((wal + kSeg1).c_str(), (dir + "/link").c_str()) == 0);
  BOOST_REQUIRE(::rename((dir + "/link").c_str(), json.c_str()) == 0);
  const int raw = p->wait(120);
  BOOST_TEST((raw >= 0 && WIFEXITED(raw) && WEXITSTATUS(raw) == 1), slurp(dir + "/err"));
  BOOST_TEST(contains(slurp(dir + "/err"), "was replaced"), slurp(dir + "/err"));
  BOOST_TEST((slurp(wal + kSeg1) == segment));
  BOOST_TEST(run("recover --dir '" + wal + "'").status == 0);
}

// F2: the ack log was opened by name after the WAL's open, so a name re-pointed at another
// WAL's walseg.control in between was followed, and the acknowledgements appended there. A
// thread re-points the name again and again while runs start; each run either refuses or
// writes its own file, and the other WAL is never touched.
BOOST_AUTO_TEST_CASE(AnAckLogNameRepointedDuringTheOpenIsNotFollowed) {
  const std::string wal = dir + "/wal", other = dir + "/other";
  BOOST_REQUIRE(run("write --dir '" + other + "' --records 3" + k1MB).status == 0);
  // A WAL some megabytes long, so that its open (recovery) takes a while.
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3000 --record-size 1000" + k1MB).status == 0);
  const std::string control = slurp(other + "/walseg.control");
  const std::string acks = dir + "/acks", tmp = dir + "/acks.tmp";
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    while (!stop) {
      ::unlink(tmp.c_str());
      if (::symlink((other + "/walseg.control").c_str(), tmp.c_str()) == 0) ::rename(tmp.c_str(), acks.c_str());
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      ::unlink(acks.c_str());
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  int refused = 0, written = 0;
  for (int i = 0; i < 30; ++i) {
    auto r = run("write --dir '" + wal + "' --records 2 --ack-log '" + acks + "'" + k1MB);
    (r.status == 0 ? written : refused)++;
    if (r.status != 0) BOOST_TEST(contains(r.err, "--ack-log"), r.err);
    if (slurp(other + "/walseg.control") != control) break;
  }
  stop = true;
  flipper.join();
  BOOST_TEST_MESSAGE("runs written " << written << ", refused " << refused);
  BOOST_TEST((slurp(other + "/walseg.control") == control));
  BOOST_TEST(run("recover --dir '" + other + "'").status == 0);
  BOOST_TEST(run("recover --dir '" + wal + "'").status == 0);
}

// A hard link of a WAL's file outside its directory was appended to (the path check saw only
// the link's directory); and a file that is no ack log is not one to append to.
BOOST_AUTO_TEST_CASE(AnAckLogThatIsAWalFileUnderAnotherNameOrNoAckLogIsRefused) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 5" + k1MB).status == 0);
  const std::string segment = slurp(wal + kSeg1);
  BOOST_REQUIRE(::link((wal + kSeg1).c_str(), (dir + "/linked").c_str()) == 0);
  std::ofstream(dir + "/notes") << "my notes\n";
  for (const std::string name : {"linked", "notes"}) {
    auto r = run("write --dir '" + wal + "' --records 3 --ack-log '" + dir + "/" + name + "'" + k1MB);
    BOOST_TEST(r.status == 2, name << ": " << r.err);
  }
  BOOST_TEST((slurp(wal + kSeg1) == segment));
  BOOST_TEST(slurp(dir + "/notes") == "my notes\n");
  fs::remove(dir + "/linked");  // a segment with two names is refused by the WAL itself
  // An ack log is appended to, run after run.
  const std::string acks = dir + "/acks";
  for (int i = 0; i < 2; ++i)
    BOOST_TEST(run("write --dir '" + wal + "' --records 3 --ack-log '" + acks + "'" + k1MB).status == 0);
  const std::string log = slurp(acks);
  BOOST_TEST(log.rfind("start ", 0) == 0);
  BOOST_TEST(log.find("\nstart ") != std::string::npos, log);
  BOOST_TEST(run("recover --dir '" + wal + "'").status == 0);
}

// L1: any JSON document was replaced, a user's own included; only one bench wrote is.
BOOST_AUTO_TEST_CASE(BenchJsonReplacesOnlyADocumentBenchWrote) {
  const std::string bench = "bench --dir '" + dir + "' --phases create --segments 1 --segment-size 1MB "
                            "--methods none --json '";
  std::ofstream(dir + "/theirs.json") << "{\"mine\": 1}\n";
  auto r = run(bench + dir + "/theirs.json'");
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(slurp(dir + "/theirs.json") == "{\"mine\": 1}\n");
  BOOST_REQUIRE(run(bench + dir + "/ours.json'").status == 0);
  const std::string first = slurp(dir + "/ours.json");
  BOOST_TEST(contains(first, "\"tool\": \"walseg bench\""), first);
  r = run(bench + dir + "/ours.json'");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(contains(slurp(dir + "/ours.json"), "\"tool\": \"walseg bench\""));
}

// Break-it round 10 F4: text written into the --json file during the run (an empty file when
// bench opened it) was truncated away by the JSON at the end.
BOOST_AUTO_TEST_CASE(BenchJsonWrittenToDuringTheRunIsNotOverwritten) {
  const std::string json = dir + "/notes.json";
  std::ofstream(json).close();
  auto p = start_bench_under_way(dir, json);
  std::ofstream(json, std::ios::app) << "my important notes\n";
  const int raw = p->wait(120);
  BOOST_TEST((raw >= 0 && WIFEXITED(raw) && WEXITSTATUS(raw) == 1), slurp(dir + "/err"));
  BOOST_TEST(contains(slurp(dir + "/err"), "was written to during the run"), slurp(dir + "/err"));
  BOOST_TEST(slurp(json) == "my important notes\n");
}

// Break-it round 10 F8: "L/../a.log" with L a link was taken lexically as "./a.log", another
// file than the one the shell (and the kernel) name.
BOOST_AUTO_TEST_CASE(DotDotAfterALinkIsResolvedAsTheKernelDoes) {
  const std::string wal = dir + "/wal";
  fs::create_directories(dir + "/deep/sub");
  BOOST_REQUIRE(::symlink((dir + "/deep/sub").c_str(), (dir + "/L").c_str()) == 0);
  auto r = run("write --dir '" + wal + "' --records 2 --ack-log '" + dir + "/L/../a.log'" + k1MB);
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(fs::exists(dir + "/deep/a.log"));
  BOOST_TEST(!fs::exists(dir + "/a.log"));
}

// The new-user trial: a bench stopped by SIGTERM (exit 143) left the empty --json file it had
// made. It is removed now; an empty file the user made stays.
BOOST_AUTO_TEST_CASE(AnInterruptedBenchRemovesTheEmptyJsonFileItMadeOnly) {
  for (const bool users : {false, true}) {
    const std::string json = dir + (users ? "/users.json" : "/new.json");
    if (users) std::ofstream(json).close();
    auto p = start_bench_under_way(dir, json);
    BOOST_REQUIRE(::kill(p->pid(), SIGTERM) == 0);
    const int raw = p->wait(120);
    BOOST_TEST((raw >= 0 && WIFEXITED(raw) && WEXITSTATUS(raw) == 143), slurp(dir + "/err"));
    BOOST_TEST(fs::exists(json) == users, json);
  }
}

// Break-it round 21: a write refused when it opened the WAL (a busy lock, walseg.control a
// link, a --dir that cannot be made) left the empty --ack-log it had made; one the user made
// stays.
BOOST_AUTO_TEST_CASE(ARefusedWriteRemovesTheEmptyAckLogItMadeOnly) {
  const std::string wal = dir + "/wal";
  fs::create_directories(wal);
  BOOST_REQUIRE(::symlink("/nonexistent", (wal + "/walseg.control").c_str()) == 0);
  for (const bool users : {false, true}) {
    const std::string acks = dir + (users ? "/users.log" : "/new.log");
    if (users) std::ofstream(acks).close();
    auto r = run("write --dir '" + wal + "' --records 2 --ack-log '" + acks + "'" + k1MB);
    BOOST_TEST(r.status == 1, r.err);
    BOOST_TEST(fs::exists(acks) == users, acks << ": " << r.err);
  }
  BOOST_TEST(fs::is_symlink(wal + "/walseg.control"));
}

BOOST_AUTO_TEST_SUITE_END()
