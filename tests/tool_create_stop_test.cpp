// `walseg create` stopped by a signal (issue 19's leftovers): SIGTERM or SIGINT killed it
// mid-fill, leaving xlogtemp.<pid> in the WAL directory for the next writer to clear and no
// word of how many segments were made. Now it stops between segments: the one being filled is
// finished and installed, the run says how far it got, and it exits 128 + the signal.
#define BOOST_TEST_MODULE tool_create_stop
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "tool_process.h"
#include "tool_test_util.h"

using namespace walseg_test;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
  std::ostringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

constexpr std::uintmax_t kSegment = 1u << 20;

// Every entry of the WAL directory: segments of full size only, nothing under another name
// but walseg's own files.
void expect_only_complete_segments(const std::string& wal, long made) {
  long segments = 0;
  for (const auto& e : fs::directory_iterator(wal)) {
    const std::string name = e.path().filename();
    if (name == "walseg.control" || name == "walseg.lock") continue;
    BOOST_TEST(std::regex_match(name, std::regex("[0-9A-F]{24}")), "left in the directory: " << name);
    BOOST_TEST(fs::file_size(e.path()) == kSegment, name);
    ++segments;
  }
  BOOST_TEST(segments == made);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_create_stop, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(ASignalStopsBetweenSegmentsAndSaysHowFarItGot) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    BOOST_TEST_CONTEXT("signal " << sig) {
      const std::string wal = dir + "/wal" + std::to_string(sig);
      ToolProcess p({"create", "--dir", wal, "--method", "zero_write", "--count", "3000", "--segment-size",
                     "1MB", "-c", "walseg.segment_size=1MB"},
                    dir + "/out", dir + "/err");
      // Signalled once a segment was made (the signals are taken from then on), however slow
      // the machine; the next fill is then likely in progress.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(50);
      while (!contains(slurp(dir + "/out"), "000000010000000000000001") && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      p.signal(sig);
      const int raw = p.wait(60);
      const int status = raw >= 0 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
      const std::string err = slurp(dir + "/err");
      BOOST_TEST(status == 128 + sig, err);
      std::smatch m;
      BOOST_TEST_REQUIRE(std::regex_search(err, m, std::regex("interrupted by SIG[A-Z]+ after ([0-9]+) of 3000 "
                                                              "segments; each made is complete and installed")),
                         err);
      const long made = std::stol(m[1]);
      BOOST_TEST(made >= 1);
      expect_only_complete_segments(wal, made);
      // The directory stays a WAL the next writer takes as it is.
      Result r = run("recover --dir '" + wal + "'");
      BOOST_TEST(r.status == 0, r.out << r.err);
    }
  }
}

// `create ... | head -1`: a reader gone is a stop like SIGPIPE, not "cannot write to file".
BOOST_AUTO_TEST_CASE(AClosedStdoutStopsItLikeSigpipe) {
  const std::string wal = dir + "/wal";
  ToolProcess::Options o;
  o.pipe_stdout = true;
  ToolProcess p({"create", "--dir", wal, "--method", "zero_write", "--count", "3000", "--segment-size", "1MB",
                 "-c", "walseg.segment_size=1MB"},
                dir + "/out", dir + "/err", o);
  p.close_stdout();
  const int raw = p.wait(60);
  const int status = raw >= 0 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  const std::string err = slurp(dir + "/err");
  BOOST_TEST(status == 128 + SIGPIPE, err);
  std::smatch m;
  BOOST_TEST_REQUIRE(std::regex_search(err, m, std::regex("stopped: its standard output was closed after ([0-9]+) of")), err);
  expect_only_complete_segments(wal, std::stol(m[1]));
}

BOOST_AUTO_TEST_SUITE_END()
