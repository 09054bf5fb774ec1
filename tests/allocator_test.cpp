#define BOOST_TEST_MODULE allocator
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/allocator.h, part 1: what each init method leaves on disk, argument
// checks, glibc_emulation's write count and its respect for existing data (C04), and bounded,
// progress-keeping EINTR retries (C01), including a real 1 ms signal storm on tmpfs. The fallback
// rules (C02, C05) are in allocator_fallback_test.cpp.
//
// Allocation is judged by stat(2) and lseek(SEEK_HOLE) made here, never by the AllocReport
// alone: st_blocks * 512 >= size means no holes, < size means holes.

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "fs_test_util.h"
#include "walseg/allocator.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/io_trace.h"

using namespace walseg;
using walseg_test::allocated_bytes;
using walseg_test::error_is;
using walseg_test::stat_path;

namespace {

constexpr std::uint64_t kSize = 16 * kMiB;

AllocOptions options(InitMethod m, FallbackMethod fb = FallbackMethod::kZeroWrite,
                     bool direct = true) {
  AllocOptions o;
  o.method = m;
  o.fallback = fb;
  o.direct_io = direct;
  return o;
}

struct AllocFixture : walseg_test::FreshDirFixture {
  File create(const std::string& name) {
    return File::open(dir / name, O_RDWR | O_CREAT | O_EXCL);
  }
};

std::size_t count_ops(const std::vector<io_trace::Event>& ev, const std::string& op) {
  return static_cast<std::size_t>(
      std::count_if(ev.begin(), ev.end(), [&](const auto& e) { return e.op == op; }));
}

// First hole at or after 0 (== size when the file has none).
off_t first_hole(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  off_t h = ::lseek(fd, 0, SEEK_HOLE);
  ::close(fd);
  return h;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(methods, AllocFixture)

BOOST_AUTO_TEST_CASE(zero_write_buffered_gives_exact_size_of_written_zeros_without_holes) {
  File f = create("z");
  AllocReport r = allocate_file(f, kSize, options(InitMethod::kZeroWrite, {}, false));
  auto st = stat_path(dir / "z");
  BOOST_TEST(st.st_size == static_cast<off_t>(kSize));
  BOOST_TEST(allocated_bytes(st) >= kSize);
  BOOST_TEST(first_hole(dir / "z") == static_cast<off_t>(kSize));
  auto bytes = walseg_test::read_all(dir / "z");
  BOOST_TEST(static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\0')) == kSize);
  BOOST_TEST((r.used == InitMethod::kZeroWrite));
  BOOST_TEST(!r.direct_io);
  BOOST_TEST(r.size_bytes == kSize);
  BOOST_TEST(r.allocated_bytes == allocated_bytes(st));
  BOOST_TEST(r.fallback_errno == 0);
}

BOOST_AUTO_TEST_CASE(zero_write_with_direct_io_on_a_disk_filesystem_uses_o_direct) {
  File f = create("zd");
  AllocReport r = allocate_file(f, kSize, options(InitMethod::kZeroWrite));
  auto st = stat_path(dir / "zd");
  BOOST_TEST(st.st_size == static_cast<off_t>(kSize));
  BOOST_TEST(allocated_bytes(st) >= kSize);
  BOOST_TEST(r.direct_io);  // ext4 accepts O_DIRECT; a refusal would silently go buffered
}

BOOST_AUTO_TEST_CASE(zero_write_buffered_with_write_behind_starts_writeback_after_every_chunk) {
  File f = create("wb");
  AllocOptions o = options(InitMethod::kZeroWrite, {}, false);
  o.write_behind = true;
  o.write_chunk_bytes = 256 * 1024;
  io_trace::start();
  AllocReport r = allocate_file(f, kSize, o);
  auto ev = io_trace::stop();
  BOOST_TEST(!r.direct_io);
  BOOST_TEST(count_ops(ev, "sync_file_range") == kSize / (256 * 1024));
  // Every chunk's write comes before the writeback call that covers it.
  std::size_t writes = 0, behind = 0;
  for (const auto& e : ev) {
    if (e.op == "pwritev" || e.op == "pwrite") ++writes;
    if (e.op == "sync_file_range") BOOST_TEST(++behind == writes);
  }
  auto bytes = walseg_test::read_all(dir / "wb");
  BOOST_TEST(static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\0')) == kSize);
  BOOST_TEST(first_hole(dir / "wb") == static_cast<off_t>(kSize));
}

BOOST_AUTO_TEST_CASE(zero_write_write_behind_failure_names_the_path_and_the_call) {
  File f = create("wbf");
  AllocOptions o = options(InitMethod::kZeroWrite, {}, false);
  o.write_behind = true;
  o.write_chunk_bytes = kMiB;  // 16 chunks: the third one's writeback fails
  failpoint::Spec s;
  s.kind = failpoint::Kind::kErrno;
  s.errnum = EIO;
  s.nth = 3;
  s.times = 1;
  failpoint::arm("sync_file_range", s);
  try {
    allocate_file(f, kSize, o);
    BOOST_FAIL("no error");
  } catch (const Error& e) {
    BOOST_TEST(e.errnum() == EIO);
    BOOST_TEST(std::string(e.what()).find("could not start writeback of file \"" + (dir / "wbf")) == 0, e.what());
    BOOST_TEST(std::string(e.what()).find("sync_file_range") != std::string::npos, e.what());
  }
  failpoint::disarm_all();
}

BOOST_AUTO_TEST_CASE(posix_fallocate_reserves_every_block_at_exact_size) {
  File f = create("pf");
  AllocReport r = allocate_file(f, kSize, options(InitMethod::kPosixFallocate));
  auto st = stat_path(dir / "pf");
  BOOST_TEST(st.st_size == static_cast<off_t>(kSize));
  BOOST_TEST(allocated_bytes(st) >= kSize);
  BOOST_TEST((r.used == InitMethod::kPosixFallocate));
  BOOST_TEST(r.eintr_retries == 0u);
}

BOOST_AUTO_TEST_CASE(C04_glibc_emulation_writes_one_byte_per_4096_block_and_leaves_no_holes) {
  File f = create("ge");
  io_trace::start();
  AllocReport r = allocate_file(f, kSize, options(InitMethod::kGlibcEmulation));
  auto ev = io_trace::stop();
  auto st = stat_path(dir / "ge");
  BOOST_TEST(st.st_size == static_cast<off_t>(kSize));
  BOOST_TEST(allocated_bytes(st) >= kSize);
  BOOST_TEST(count_ops(ev, "pwrite") == kSize / 4096);  // 4096 one-byte writes for 16 MiB
  BOOST_TEST(r.syscalls >= kSize / 4096);
  BOOST_TEST(r.syscalls <= kSize / 4096 + 16);
}

BOOST_AUTO_TEST_CASE(sparse_has_exact_size_and_holes) {
  File f = create("sp");
  AllocReport r = allocate_file(f, kSize, options(InitMethod::kSparse));
  auto st = stat_path(dir / "sp");
  BOOST_TEST(st.st_size == static_cast<off_t>(kSize));
  BOOST_TEST(allocated_bytes(st) < kSize);
  BOOST_TEST(first_hole(dir / "sp") == 0);
  BOOST_TEST(r.allocated_bytes == allocated_bytes(st));
}

BOOST_AUTO_TEST_CASE(fallocate_keep_size_reserves_blocks_beyond_a_size_of_zero) {
  File f = create("ks");
  AllocReport r = allocate_file(f, kSize, options(InitMethod::kFallocateKeepSize));
  auto st = stat_path(dir / "ks");
  BOOST_TEST(st.st_size == 0);
  BOOST_TEST(allocated_bytes(st) >= kSize);
  BOOST_TEST((r.used == InitMethod::kFallocateKeepSize));
}

BOOST_AUTO_TEST_CASE(none_leaves_an_empty_file) {
  File f = create("no");
  AllocReport r = allocate_file(f, kSize, options(InitMethod::kNone));
  auto st = stat_path(dir / "no");
  BOOST_TEST(st.st_size == 0);
  BOOST_TEST(st.st_blocks == 0);
  BOOST_TEST(r.size_bytes == 0u);
}

BOOST_AUTO_TEST_CASE(C22_a_file_not_created_exclusively_is_refused_and_its_data_kept) {
  // Bug: allocate_file ran on any descriptor, and posix_fallocate's fallback to
  // glibc_emulation truncated the file to 0 first, wiping what was in it. Every method now
  // requires a file this process has just created with O_CREAT | O_EXCL, and empty.
  const std::string p = dir / "keep";
  walseg_test::write_bytes(p, 0, 10000, '\xAB');
  const auto before = walseg_test::read_all(p);
  for (InitMethod m : {InitMethod::kZeroWrite, InitMethod::kPosixFallocate, InitMethod::kGlibcEmulation,
                       InitMethod::kSparse, InitMethod::kFallocateKeepSize, InitMethod::kNone}) {
    BOOST_TEST_CONTEXT(to_string(m)) {
      File f = File::open(p, O_RDWR);
      failpoint::arm("fallocate", {failpoint::Kind::kErrno, EOPNOTSUPP, 0, 1, 0});
      BOOST_CHECK_EXCEPTION(allocate_file(f, 1 * kMiB, options(m, FallbackMethod::kGlibcEmulation)), Error,
                            walseg_test::error_is(EINVAL, {"refusing to allocate file \"" + p + "\"",
                                                           "O_CREAT | O_EXCL"}));
      failpoint::disarm_all();
      BOOST_TEST((walseg_test::read_all(p) == before));
    }
  }
}

BOOST_AUTO_TEST_CASE(C22_an_exclusively_created_file_that_already_holds_bytes_is_refused) {
  File f = create("written");
  const char rec[100] = {'r'};
  f.pwrite_all(rec, sizeof rec, 0);
  BOOST_CHECK_EXCEPTION(allocate_file(f, kSize, options(InitMethod::kPosixFallocate, FallbackMethod::kGlibcEmulation)),
                        Error, walseg_test::error_is(EINVAL, {"already holds 100 bytes"}));
  BOOST_TEST(walseg_test::stat_path(dir / "written").st_size == 100);
}

BOOST_AUTO_TEST_CASE(C01_chunk_grows_back_after_a_burst_of_eintr) {
  // 20 interruptions halve the chunk from 64 MiB to 4 kB. Without growing back, the other
  // 127 MiB of this file took 32000 more calls; doubling after each success takes ~25.
  File f = create("c01g");
  failpoint::arm("fallocate", {failpoint::Kind::kErrno, EINTR, 0, 1, 20});
  AllocReport r = allocate_file(f, 128 * kMiB, options(InitMethod::kPosixFallocate, FallbackMethod::kError));
  BOOST_TEST(r.eintr_retries == 20u);
  BOOST_TEST(failpoint::calls("fallocate") < 60u, failpoint::calls("fallocate"));
  BOOST_TEST(allocated_bytes(stat_path(dir / "c01g")) >= 128 * kMiB);
}

BOOST_AUTO_TEST_CASE(C01_twenty_eintr_then_segment_is_complete_and_fully_allocated) {
  File f = create("c01");
  failpoint::arm("fallocate", {failpoint::Kind::kErrno, EINTR, 0, 1, 20});
  AllocReport r = allocate_file(f, kSize, options(InitMethod::kPosixFallocate,
                                                  FallbackMethod::kError));
  BOOST_TEST(r.eintr_retries == 20u);
  BOOST_TEST(failpoint::calls("fallocate") > 20u);
  BOOST_TEST((r.used == InitMethod::kPosixFallocate));  // no fallback either
  auto st = stat_path(dir / "c01");
  BOOST_TEST(st.st_size == static_cast<off_t>(kSize));
  BOOST_TEST(allocated_bytes(st) >= kSize);
}

// ---- error paths: each checks the errno and the message text ----

BOOST_AUTO_TEST_CASE(C02_size_zero_or_not_a_multiple_of_4096_is_rejected_before_any_syscall) {
  File f = create("bad");
  for (std::uint64_t size : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4097},
                             std::uint64_t{16 * kMiB + 512}}) {
    for (InitMethod m : {InitMethod::kPosixFallocate, InitMethod::kZeroWrite}) {
      std::uint64_t before = io_trace::thread_syscalls();
      BOOST_CHECK_EXCEPTION(allocate_file(f, size, options(m)), Error,
                            error_is(EINVAL, {fmt::format("invalid size {} bytes", size),
                                              dir / "bad"}));
      BOOST_TEST(io_trace::thread_syscalls() == before, "size " << size);
    }
  }
  BOOST_TEST(stat_path(dir / "bad").st_size == 0);
}

BOOST_AUTO_TEST_CASE(auto_method_is_refused_before_any_syscall) {
  File f = create("auto");
  std::uint64_t before = io_trace::thread_syscalls();
  BOOST_CHECK_EXCEPTION(allocate_file(f, kSize, options(InitMethod::kAuto)), Error,
                        error_is(EINVAL, {"\"auto\"", dir / "auto"}));
  BOOST_TEST(io_trace::thread_syscalls() == before);
}

BOOST_AUTO_TEST_CASE(C01_endless_eintr_gives_up_with_error_naming_path_method_size_and_attempts) {
  File f = create("forever");
  failpoint::arm("fallocate", {failpoint::Kind::kErrno, EINTR, 0, 1, 0});
  io_trace::start();
  try {
    allocate_file(f, kSize, options(InitMethod::kPosixFallocate));  // fallback zero_write
    BOOST_FAIL("endless EINTR did not fail");
  } catch (const Error& e) {
    auto ev = io_trace::stop();
    std::uint64_t attempts = failpoint::calls("fallocate");
    BOOST_TEST_MESSAGE(e.what());
    BOOST_TEST(e.errnum() == EINTR);
    std::string what = e.what();
    for (const std::string& needle :
         {"\"" + dir / "forever" + "\"", std::string("posix_fallocate"),
          fmt::format("{} bytes", kSize), std::string("Interrupted system call"),
          fmt::format("gave up after {} interrupted attempts", attempts)})
      BOOST_TEST(what.find(needle) != std::string::npos, "missing: " << needle);
    BOOST_TEST(attempts <= static_cast<std::uint64_t>(kMaxEintrRetries) + 1);  // bounded
    BOOST_TEST(count_ops(ev, "pwrite") + count_ops(ev, "pwritev") == 0u);  // no silent fallback
    BOOST_TEST(stat_path(dir / "forever").st_size == 0);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// A real storm: SIGUSR1 every 1 ms to the allocating thread, handler without SA_RESTART. tmpfs
// checks for pending signals while it allocates pages and returns EINTR (discarding that call's
// pages), which is the case C01 sources hit on /dev/shm.
namespace {
std::atomic<std::uint64_t> g_signals_handled{0};
void count_signal(int) { g_signals_handled.fetch_add(1, std::memory_order_relaxed); }

class SignalStorm {
 public:
  explicit SignalStorm(pthread_t target) {
    struct sigaction sa{};
    sa.sa_handler = count_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // deliberately no SA_RESTART
    ::sigaction(SIGUSR1, &sa, &old_);
    thread_ = std::thread([this, target] {
      while (!stop_.load()) {
        ::pthread_kill(target, SIGUSR1);
        ++sent_;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  ~SignalStorm() {
    stop_.store(true);
    thread_.join();
    ::sigaction(SIGUSR1, &old_, nullptr);
  }
  std::uint64_t sent() const { return sent_.load(); }

 private:
  struct sigaction old_{};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> sent_{0};
  std::thread thread_;
};
}  // namespace

BOOST_AUTO_TEST_CASE(C01_signal_storm_every_ms_during_1GiB_posix_fallocate_on_dev_shm_completes) {
  walseg::failpoint::disarm_all();
  constexpr std::uint64_t k1GiB = 1024 * kMiB;
  struct statvfs sv{};
  if (::statvfs("/dev/shm", &sv) != 0 ||
      static_cast<std::uint64_t>(sv.f_bavail) * sv.f_frsize < 2 * k1GiB) {
    BOOST_TEST_MESSAGE("SKIP: /dev/shm missing or has less than 2 GiB free");
    return;
  }
  walseg_test::TempDir shm("/dev/shm");
  File f = File::open(shm / "storm", O_RDWR | O_CREAT | O_EXCL);
  AllocReport r;
  std::uint64_t sent = 0;
  {
    SignalStorm storm(::pthread_self());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // storm under way
    r = allocate_file(f, k1GiB, options(InitMethod::kPosixFallocate, FallbackMethod::kError));
    sent = storm.sent();
  }
  BOOST_TEST_MESSAGE("signals sent " << sent << ", handled " << g_signals_handled.load()
                                     << ", EINTR retries " << r.eintr_retries << ", fill "
                                     << r.fill_us << " us, " << r.syscalls << " syscalls");
  auto st = stat_path(shm / "storm");
  BOOST_TEST(st.st_size == static_cast<off_t>(k1GiB));
  BOOST_TEST(allocated_bytes(st) >= k1GiB);
  BOOST_TEST((r.used == InitMethod::kPosixFallocate));
  BOOST_TEST(g_signals_handled.load() > 0u);
  BOOST_WARN_MESSAGE(r.eintr_retries > 0, "the storm never interrupted fallocate this run");
  f.close();
  BOOST_TEST(::unlink((shm / "storm").c_str()) == 0);
}
