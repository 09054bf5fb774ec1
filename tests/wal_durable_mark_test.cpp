#define BOOST_TEST_MODULE wal_durable_mark
#include <boost/test/unit_test.hpp>

// The control file's durable LSN follows the writer while it runs (walseg.durable_lsn_interval),
// so that after a kill -9 a damaged record acknowledged long before is corruption, refused,
// and never taken for a torn tail that the next writer writes over (issue 19, break-it round
// 4 H3: one damaged byte in segment 1 and the next `walseg write` overwrote 332 of 658
// acknowledged records). Before the fix the durable LSN moved only at open and at a clean
// end, so these tests fail: the poll times out and the damaged WAL is opened for writing.
//
// A child process (fork) commits records one at a time and acknowledges each through a pipe
// (its start and end LSN); the parent waits until walseg.control's durable LSN has passed an
// early acknowledged record, kills the child with SIGKILL, damages one byte of that record and
// reopens the directory as the next writer would.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "walseg/segment_name.h"
#include "walseg/wal_control.h"
#include "wal_writer_fixture.h"

using namespace walseg;
using namespace walseg_test;

namespace {

struct Ack {
  Lsn start = 0;
  Lsn end = 0;
};

constexpr std::size_t kPayloadBytes = 200;

[[noreturn]] void run_child(const std::string& dir, const Config& cfg, int fd) {
  try {
    auto wal = Wal::open(dir, cfg);
    WalWriter& w = wal->writer();
    for (std::uint64_t seq = 0;; ++seq) {
      const Ack a{w.insert_lsn(), w.append(seq_payload(seq, kPayloadBytes))};
      w.flush(a.end);
      if (::write(fd, &a, sizeof a) != static_cast<ssize_t>(sizeof a)) ::_exit(5);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "durable mark test child failed: %s\n", e.what());
    ::_exit(3);
  }
}

/// Reads whatever acknowledgements are in the pipe within `wait`.
void drain(int fd, std::vector<Ack>& acks, std::chrono::milliseconds wait) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return;
  Ack buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  // Writes of one Ack are atomic on a pipe (below PIPE_BUF), so reads end on Ack boundaries.
  for (ssize_t i = 0; n > 0 && i < n / static_cast<ssize_t>(sizeof(Ack)); ++i) acks.push_back(buf[i]);
}

std::string segment_path(const std::string& dir, Lsn lsn) {
  return dir + "/" + segment_file_name(1, segno_of_lsn(lsn, kSegBytes), kSegBytes);
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

/// Runs the child, waits for the durable LSN to pass acknowledged record `victim` (or gives up
/// after 30 s: the old code never moves it), kills it. Returns the acknowledgements.
std::vector<Ack> commit_then_kill(const std::string& dir, const Config& cfg, std::size_t victim) {
  int fds[2];
  BOOST_REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    run_child(dir, cfg, fds[1]);
  }
  ::close(fds[1]);
  std::vector<Ack> acks;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool passed = false;
  while (!passed && std::chrono::steady_clock::now() < deadline) {
    drain(fds[0], acks, std::chrono::milliseconds(20));
    if (acks.size() <= victim + 10) continue;
    auto c = read_control(dir);
    passed = c && c->durable_lsn >= acks[victim + 10].end;
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  for (int more = 0; more < 100; ++more) drain(fds[0], acks, std::chrono::milliseconds(0));
  ::close(fds[0]);
  BOOST_TEST_MESSAGE(acks.size() << " records acknowledged before the kill");
  BOOST_CHECK_MESSAGE(WIFSIGNALED(status), "the child ended by itself (status " << status << ")");
  BOOST_CHECK_MESSAGE(passed, "walseg.control's durable LSN never passed acknowledged record "
                                  << victim + 10 << " while the writer ran");
  BOOST_REQUIRE(acks.size() > victim + 10);
  return acks;
}

void damage_byte(const std::string& dir, Lsn lsn) {
  const int fd = ::open(segment_path(dir, lsn).c_str(), O_WRONLY);
  BOOST_REQUIRE(fd >= 0);
  const char bad = static_cast<char>(0xA5);
  BOOST_REQUIRE(::pwrite(fd, &bad, 1, static_cast<off_t>(segment_offset(lsn, kSegBytes))) == 1);
  ::close(fd);
}

void kill_damage_reopen(walseg::IoMethod io) {
  FreshDirFixture f;
  LogCapture logs;
  const std::string dir = f.dir.path();
  Config cfg = writer_config(io);
  cfg.durable_lsn_interval_ms = 1000;  // the default
  constexpr std::size_t kVictim = 20;
  const std::vector<Ack> acks = commit_then_kill(dir, cfg, kVictim);

  // A byte in the middle of the victim (its payload, or the header of a page it continues on;
  // its last bytes may be alignment padding, which no checksum covers).
  const Lsn hit = (acks[kVictim].start + acks[kVictim].end) / 2;
  damage_byte(dir, hit);
  const std::string before = file_bytes(segment_path(dir, hit));

  // `walseg recover`'s verdict, and the next writer's refusal.
  const RecoveryResult r = find_end_of_wal(dir, reader_options_for(*read_control(dir)));
  BOOST_TEST(r.corruption, "a damaged acknowledged record taken for the end of WAL: " << r.stop_reason);
  BOOST_TEST(r.end_lsn <= acks[kVictim].start);
  BOOST_CHECK_EXCEPTION(Wal::open(dir, cfg), Error, [](const Error& e) { return e.errnum() == ENOTRECOVERABLE; });
  // The refusal wrote nothing: every acknowledged record after the damage is still there.
  BOOST_TEST(file_bytes(segment_path(dir, hit)) == before);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_damaged_record_acknowledged_before_a_kill_is_refused_not_overwritten_pwrite) {
  kill_damage_reopen(IoMethod::kPwrite);
}

BOOST_AUTO_TEST_CASE(a_damaged_record_acknowledged_before_a_kill_is_refused_not_overwritten_io_uring) {
  kill_damage_reopen(IoMethod::kIoUring);
}

// The thread moves the durable LSN only to what is flushed: a record appended but not
// flushed stays after it, so its loss at a crash remains a torn tail.
BOOST_FIXTURE_TEST_CASE(the_durable_lsn_never_passes_the_flushed_lsn, WalWriterFixture) {
  cfg.durable_lsn_interval_ms = 200;
  auto wal = Wal::open(dir.path(), cfg);
  Appended a;
  const Lsn flushed = a.add(wal->writer(), 300);
  wal->writer().flush(flushed);
  a.add(wal->writer(), 300);  // appended, never flushed
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (wal->manager().control().durable_lsn < flushed && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // One more round, which must not pass it.
  std::this_thread::sleep_for(std::chrono::milliseconds(cfg.durable_lsn_interval_ms * 3 / 2));
  const WalControl c = wal->manager().control();
  BOOST_TEST(c.durable_lsn == flushed);
  BOOST_TEST(read_control(dir.path())->durable_lsn == flushed);
}
