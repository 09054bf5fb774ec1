// `walseg write` stopped by a signal (issue 17): SIGINT or SIGTERM killed it with no word of
// what had been acknowledged or where the WAL ends, and without the clean end that makes the
// durable point the end of WAL. Now it ends after the commits in progress, prints the summary,
// says what stopped it, and exits 128 + the signal; every acknowledged commit reads back.
#define BOOST_TEST_MODULE tool_write_stop
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "tool_process.h"
#include "tool_test_util.h"

using namespace walseg_test;

namespace {

std::string slurp(const std::string& path) {
  std::ostringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

long number_after(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern + "([0-9]+)"))) return -1;
  return std::stol(m[1]);
}

// A tmpfs of `size` (mount's -o size=) at dir/name, unmounted at the end of the scope; root only
// (mounted() false otherwise, and the test is skipped).
class SmallTmpfs {
 public:
  SmallTmpfs(const std::string& dir, const std::string& name, const std::string& size) : mnt_(dir + "/" + name) {
    if (::geteuid() != 0) return;
    fs::create_directories(mnt_);
    mounted_ = std::system(("mount -t tmpfs -o size=" + size + " tmpfs '" + mnt_ + "'").c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (mounted_) (void)std::system(("umount '" + mnt_ + "'").c_str());
  }
  bool mounted() const { return mounted_; }
  const std::string& path() const { return mnt_; }

 private:
  std::string mnt_;
  bool mounted_ = false;
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_write_stop, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(ASignalEndsTheRunWithItsSummaryAndACleanEnd) {
  // SIGPIPE too, sent by kill with stdout a file: no output was closed (break-it round 27 L3).
  for (int sig : {SIGINT, SIGTERM, SIGPIPE}) {
    BOOST_TEST_CONTEXT("signal " << sig) {
      const std::string wal = dir + "/wal" + std::to_string(sig);
      const std::string acks = wal + ".ack";
      ToolProcess p({"write", "--dir", wal, "--seconds", "60", "--clients", "2", "--ack-log", acks, "-c",
                     "walseg.segment_size=1MB"},
                    dir + "/out", dir + "/err");
      // Signalled once commits are being acknowledged (the signals are taken from then on),
      // however slow the machine.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(50);
      while (!contains(slurp(acks), "\nack ") && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      p.signal(sig);
      const int raw = p.wait(30);
      const int status = raw >= 0 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
      const std::string out = slurp(dir + "/out"), err = slurp(dir + "/err");
      BOOST_TEST(status == 128 + sig, err);
      BOOST_TEST(contains(err, "interrupted by SIG"), err);
      BOOST_TEST(!contains(err, "standard output was closed"), err);
      BOOST_TEST(contains(out, "WAL now ends at"), out);
      const long commits = number_after(out, "^");
      BOOST_TEST(commits > 0, out);
      // Every acknowledged commit is a record, and the end is clean (the durable point).
      Result r = run("recover --dir '" + wal + "'");
      BOOST_TEST(r.status == 0, r.out << r.err);
      BOOST_TEST(number_after(r.out, "records: ") >= commits, r.out);
      BOOST_TEST(contains(r.out, "corruption: no"), r.out);
    }
  }
}

// The new-user trial of this session: `walseg write --seconds 3 | true` exited 1 with only
// "cannot write to file: Broken pipe", no summary and no word of what stopped it, though
// README promised the signal's way (exit 141), as `bench | head -1` does.
BOOST_AUTO_TEST_CASE(AClosedStdoutEndsTheRunLikeSigpipeWithTheSummaryOnStderr) {
  for (bool sigpipe_ignored : {false, true}) {
    BOOST_TEST_CONTEXT("SIGPIPE ignored: " << sigpipe_ignored) {
      const std::string wal = dir + "/wal" + std::to_string(sigpipe_ignored);
      ToolProcess::Options o;
      o.pipe_stdout = true;
      if (sigpipe_ignored) o.ignore = {SIGPIPE};
      ToolProcess p({"write", "--dir", wal, "--seconds", "60", "-c", "walseg.segment_size=1MB"}, dir + "/out",
                    dir + "/err", o);
      p.close_stdout();  // as `| true`: the reader is gone before the first commit
      const int raw = p.wait(30);
      const int status = raw >= 0 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
      const std::string err = slurp(dir + "/err");
      BOOST_TEST(status == 128 + SIGPIPE, err);
      BOOST_TEST(contains(err, "stopped: its standard output was closed after"), err);
      BOOST_TEST(!contains(err, "SIGPIPE"), err);  // round 23 L1: no signal was sent
      BOOST_TEST(contains(err, "WAL now ends at"), err);
      BOOST_TEST(!contains(err, "Broken pipe"), err);
      BOOST_TEST(!contains(err, "p50 0, p99 0, max 0"), err);  // no commit is no latency (was printed as zeros)
      Result r = run("recover --dir '" + wal + "'");
      BOOST_TEST(r.status == 0, r.out << r.err);
      BOOST_TEST(contains(r.out, "corruption: no"), r.out);
    }
  }
}

// New-user trial 14: with stdout on a full disk the summary was lost with the error ("cannot
// write to stdout"), so nothing said what was acknowledged or where the WAL ends.
BOOST_AUTO_TEST_CASE(AStdoutThatCannotBeWrittenStillGetsTheSummarySaidOnStderr) {
  const std::string wal = dir + "/wal";
  const std::string cmd = "'" + tool_path().string() + "' write --dir '" + wal +
                          "' --records 5 -c walseg.segment_size=1MB -c walseg.min_size=2MB >/dev/full 2>'" + dir +
                          "/err'";
  const int raw = std::system(cmd.c_str());
  const std::string err = slurp(dir + "/err");
  BOOST_TEST((WIFEXITED(raw) && WEXITSTATUS(raw) == 1), err);
  BOOST_TEST(contains(err, "5 commits of 100 bytes"), err);
  BOOST_TEST(contains(err, "WAL now ends at"), err);
  BOOST_TEST(contains(err, "could not write the summary to stdout: No space left on device"), err);
  // create's table too (break-it round 27 L2: "cannot write to file" named no file).
  const std::string c = "'" + tool_path().string() + "' create --dir '" + dir + "/c' --count 3 --method zero_write " +
                        "--segment-size 1MB >/dev/full 2>'" + dir + "/err'";
  const int craw = std::system(c.c_str());
  const std::string cerr = slurp(dir + "/err");
  BOOST_TEST((WIFEXITED(craw) && WEXITSTATUS(craw) == 1), cerr);
  BOOST_TEST(contains(cerr, "could not write the table to stdout after 1 of 3 segments"), cerr);
  BOOST_TEST(contains(cerr, "No space left on device"), cerr);
}

// The new-user trial: on a full filesystem `write` exited 1 with the ENOSPC error alone, no
// count of what was acknowledged and no end of WAL (recover later found 510 records). A
// tmpfs of 12 MB (root only) fills in well under a second.
BOOST_AUTO_TEST_CASE(AnErrorStillSaysWhatWasAcknowledgedAndWhereTheWalEnds) {
  const SmallTmpfs small(dir, "small", "12m");
  if (!small.mounted()) {
    BOOST_TEST_MESSAGE("skipped: mounting a tmpfs needs root");
    return;
  }
  const std::string& mnt = small.path();
  auto r = run("write --dir '" + mnt + "/wal' --seconds 20 --record-size 64kB -c walseg.segment_size=1MB");
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "No space left on device"), r.err);
  std::smatch m;
  BOOST_TEST_REQUIRE(std::regex_search(r.err, m, std::regex("stopped by the error below after ([0-9]+) acknowledged "
                                                            "commits; each is in the WAL, which ends at ([0-9A-F]+/[0-9A-F]+)")),
                     r.err);
  BOOST_TEST(contains(r.out, m[1].str() + " commits of 65536 bytes"), r.out);
  auto rec = run("recover --dir '" + mnt + "/wal'");
  BOOST_TEST(contains(rec.out, "records: " + m[1].str() + "\n"), rec.out);
  BOOST_TEST(contains(rec.out, "end of WAL: " + m[2].str() + "\n"), rec.out);
}

// Break-it round 38 L1: an ack log on a full filesystem got a line cut short, and other clients'
// lines could follow it. Lines are written one at a time; a torn one is cut off again, and none
// follows a failure: the log ends with its last whole line. A 4 kB tmpfs holds about 100 lines.
BOOST_AUTO_TEST_CASE(AnAckLogOnAFullFilesystemEndsWithAWholeLine) {
  const SmallTmpfs tiny(dir, "tiny", "4k");
  if (!tiny.mounted()) {
    BOOST_TEST_MESSAGE("skipped: mounting a tmpfs needs root");
    return;
  }
  const std::string& mnt = tiny.path();
  auto r = run("write --dir '" + dir + "/wal' --records 2000 --clients 4 --ack-log '" + mnt +
               "/acks' -c walseg.segment_size=1MB");
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, mnt + "/acks"), r.err);
  BOOST_TEST(contains(r.err, "No space left on device"), r.err);
  const std::string acks = slurp(mnt + "/acks");
  BOOST_TEST_REQUIRE(!acks.empty());
  BOOST_TEST(acks.back() == '\n', "the log ends in a torn line: ..." << acks.substr(acks.size() - std::min<std::size_t>(acks.size(), 60)));
  std::istringstream lines(acks);
  int whole = 0;
  for (std::string l; std::getline(lines, l);) {
    BOOST_TEST(std::regex_match(l, std::regex("(start|ack) [0-9]+ [0-9]+ [0-9]+( [0-9]+)?")), l);
    ++whole;
  }
  BOOST_TEST(whole > 10);
  // Every acknowledgement it holds is a record of the WAL.
  auto rec = run("recover --dir '" + dir + "/wal'");
  BOOST_TEST(rec.status == 0, rec.err);
}

// Break-it round 30 (LOW): past a file-size limit (ulimit -f) SIGXFSZ killed `write` with a
// core dump and no word. As PostgreSQL's postmaster, the tool ignores SIGXFSZ: the write fails
// with EFBIG, named with its path, and every commit acknowledged before it is a record.
BOOST_AUTO_TEST_CASE(AFileSizeLimitIsAFailedWriteNamedWithItsPathNotADeath) {
  const std::string wal = dir + "/wal", acks = dir + "/acks";
  // Append mode: segments grow as they are written, so the limit is met mid-run (600 blocks
  // of 512 bytes or 1 kB, the shell's unit: below a 1 MB segment either way).
  const std::string cmd = "ulimit -c 0; ulimit -f 600; '" + tool_path().string() + "' write --dir '" + wal +
                          "' --records 3000 --record-size 1000 --ack-log '" + acks +
                          "' -c walseg.segment_size=1MB -c walseg.init_method=none >'" + dir + "/out' 2>'" + dir +
                          "/err'";
  const int raw = std::system(cmd.c_str());
  const std::string err = slurp(dir + "/err");
  BOOST_TEST(WIFEXITED(raw), "killed: status " << raw << "; " << err);
  BOOST_TEST((WIFEXITED(raw) && WEXITSTATUS(raw) == 1), err);
  BOOST_TEST(contains(err, "File too large"), err);
  BOOST_TEST(contains(err, wal + "/00000001000000000000000"), err);
  long acked = 0;
  std::istringstream lines(slurp(acks));
  for (std::string l; std::getline(lines, l);) acked += l.rfind("ack ", 0) == 0;
  BOOST_TEST(acked > 0);
  Result r = run("recover --dir '" + wal + "'");
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST(number_after(r.out, "records: ") >= acked, r.out);
}

// Break-it round 30 (LOW): under a memory limit (ulimit -v) the preallocator's first fill
// called abort() when its zero buffer could not be allocated, and a bad_alloc in any of the
// run's threads ended the process the same way. Whatever the limit, a run now ends with its
// exit status and a message, never by a signal; where it acknowledged commits, they are there.
BOOST_AUTO_TEST_CASE(AMemoryLimitEndsTheRunWithAMessageNotAnAbort) {
  for (int kb = 18000; kb <= 40000; kb += 1000) {
    BOOST_TEST_CONTEXT("ulimit -v " << kb) {
      const std::string wal = dir + "/wal" + std::to_string(kb);
      const std::string cmd = "ulimit -c 0; ulimit -v " + std::to_string(kb) + "; '" + tool_path().string() +
                              "' write --dir '" + wal + "' --records 10 --clients 2 -c walseg.segment_size=1MB " +
                              "-c walseg.io_method=io_uring >'" + dir + "/out' 2>'" + dir + "/err'";
      const int raw = std::system(cmd.c_str());
      const std::string err = slurp(dir + "/err");
      BOOST_TEST(WIFEXITED(raw), "ended by a signal: status " << raw << "; " << err);
      if (WIFEXITED(raw) && WEXITSTATUS(raw) != 0) {
        BOOST_TEST(WEXITSTATUS(raw) == 1, err);
        BOOST_TEST(contains(err, "walseg: "), err);
      }
    }
  }
}

// Break-it round 33 L2: the catch added for a thread's EAGAIN also took walseg's own errors,
// and a busy directory's flock fails with EWOULDBLOCK (EAGAIN): every "in use by process N"
// refusal began "could not start a thread" and blamed ulimit.
BOOST_AUTO_TEST_CASE(ABusyDirectoryIsSaidToBeInUseNotAThreadLimit) {
  const std::string wal = dir + "/wal", acks = dir + "/acks";
  ToolProcess p({"write", "--dir", wal, "--seconds", "60", "--ack-log", acks, "-c", "walseg.segment_size=1MB"},
                dir + "/first.out", dir + "/first.err");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(50);
  while (!contains(slurp(acks), "\nack ") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Result r = run("write --dir '" + wal + "' --records 1 -c walseg.segment_size=1MB");
  p.signal(SIGTERM);
  p.wait(30);
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "it is in use by process"), r.err);
  BOOST_TEST(!contains(r.err, "could not start a thread"), r.err);
  BOOST_TEST(!contains(r.err, "ulimit"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
