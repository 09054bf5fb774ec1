#define BOOST_TEST_MODULE io
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/file.h, error.h and io_trace.h: checked syscalls on one descriptor,
// short-write and EINTR loops (driven by failpoints, since a regular file never gives either on
// its own), PostgreSQL-worded errors, and the syscall trace. Files live in a fresh directory
// under /var/tmp; contents are checked with plain read(2), not with the code under test.

#include <fcntl.h>
#include <sys/uio.h>

#include <cerrno>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "fs_test_util.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/file.h"
#include "walseg/io_trace.h"

using namespace walseg;
using walseg_test::error_is;
using walseg_test::FreshDirFixture;

namespace {

std::vector<char> pattern(std::size_t n) {
  std::vector<char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<char>('a' + i % 26);
  return v;
}

failpoint::Spec short_every_call(std::uint64_t bytes) {
  return {failpoint::Kind::kShort, 0, bytes, 1, 0};
}

failpoint::Spec fail_with(int err, std::uint64_t nth = 1, std::uint64_t times = 1) {
  return {failpoint::Kind::kErrno, err, 0, nth, times};
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(file, FreshDirFixture)

BOOST_AUTO_TEST_CASE(pwrite_all_then_pread_returns_the_same_bytes) {
  File f = File::open(dir / "a", O_RDWR | O_CREAT | O_EXCL);
  auto data = pattern(10000);
  f.pwrite_all(data.data(), data.size(), 100);
  std::vector<char> back(data.size());
  BOOST_TEST(f.pread(back.data(), back.size(), 100) == data.size());
  BOOST_TEST(back == data);
  BOOST_TEST(f.stat().st_size == 10100);
  BOOST_TEST(walseg_test::stat_path(dir / "a").st_size == 10100);
  f.close();
  BOOST_TEST(!f.is_open());
}

BOOST_AUTO_TEST_CASE(open_creates_with_mode_0600_by_default) {
  File f = File::open(dir / "m", O_RDWR | O_CREAT);
  BOOST_TEST((walseg_test::stat_path(dir / "m").st_mode & 0777) == 0600u);
  BOOST_TEST((::fcntl(f.fd(), F_GETFD) & FD_CLOEXEC) != 0);
}

BOOST_AUTO_TEST_CASE(pwrite_all_completes_short_writes_of_seven_bytes) {
  File f = File::open(dir / "s", O_RDWR | O_CREAT);
  failpoint::arm("pwrite", short_every_call(7));
  auto data = pattern(1000);
  f.pwrite_all(data.data(), data.size(), 0);
  BOOST_TEST(failpoint::calls("pwrite") == (1000u + 6) / 7);  // 143 partial transfers
  failpoint::disarm_all();
  BOOST_TEST(walseg_test::read_all(dir / "s") == data);
}

BOOST_AUTO_TEST_CASE(pwritev_all_with_uneven_iovecs_completes_short_writes_in_order) {
  File f = File::open(dir / "v", O_RDWR | O_CREAT);
  auto data = pattern(64);
  // Pieces of 3, 10, 1 and 50 bytes: a 4-byte short write splits iovecs mid-way.
  std::vector<struct iovec> iov = {{data.data(), 3}, {data.data() + 3, 10},
                                   {data.data() + 13, 1}, {data.data() + 14, 50}};
  auto copy = iov;
  failpoint::arm("pwritev", short_every_call(4));
  f.pwritev_all(iov.data(), static_cast<int>(iov.size()), 4096);
  BOOST_TEST(failpoint::calls("pwritev") == 16u);
  failpoint::disarm_all();
  auto back = walseg_test::read_all(dir / "v");
  BOOST_REQUIRE(back.size() == 4096u + 64);
  BOOST_TEST(std::vector<char>(back.begin() + 4096, back.end()) == data);
  BOOST_TEST(std::count(back.begin(), back.begin() + 4096, '\0') == 4096);
  for (std::size_t i = 0; i < iov.size(); ++i) {  // "iov is not modified"
    BOOST_TEST(iov[i].iov_base == copy[i].iov_base);
    BOOST_TEST(iov[i].iov_len == copy[i].iov_len);
  }
}

BOOST_AUTO_TEST_CASE(pwrite_all_retries_three_eintr_then_writes_everything) {
  File f = File::open(dir / "e", O_RDWR | O_CREAT);
  failpoint::arm("pwrite", fail_with(EINTR, 1, 3));
  auto data = pattern(5000);
  f.pwrite_all(data.data(), data.size(), 0);
  BOOST_TEST(failpoint::calls("pwrite") == 4u);
  BOOST_TEST(walseg_test::read_all(dir / "e") == data);
}

BOOST_AUTO_TEST_CASE(pread_retries_eintr_and_returns_zero_at_end_of_file) {
  walseg_test::write_bytes(dir / "r", 0, 10, 'x');
  File f = File::open(dir / "r", O_RDONLY);
  failpoint::arm("pread", fail_with(EINTR, 1, 2));
  char buf[16] = {};
  BOOST_TEST(f.pread(buf, sizeof buf, 0) == 10u);
  BOOST_TEST(failpoint::calls("pread") == 3u);
  BOOST_TEST(std::string(buf, 10) == "xxxxxxxxxx");
  BOOST_TEST(f.pread(buf, sizeof buf, 10) == 0u);
}

BOOST_AUTO_TEST_CASE(ftruncate_and_try_fallocate_change_size_and_allocation) {
  File f = File::open(dir / "t", O_RDWR | O_CREAT);
  f.ftruncate(1 << 20);
  auto st = walseg_test::stat_path(dir / "t");
  BOOST_TEST(st.st_size == 1 << 20);
  BOOST_TEST(walseg_test::allocated_bytes(st) < (1u << 20));  // a hole, not allocation
  BOOST_TEST(f.try_fallocate(0, 0, 2 << 20) == 0);
  st = walseg_test::stat_path(dir / "t");
  BOOST_TEST(st.st_size == 2 << 20);
  BOOST_TEST(walseg_test::allocated_bytes(st) >= (2u << 20));
}

BOOST_AUTO_TEST_CASE(move_transfers_the_descriptor_and_empties_the_source) {
  File a = File::open(dir / "mv", O_RDWR | O_CREAT);
  int fd = a.fd();
  File b = std::move(a);
  BOOST_TEST(!a.is_open());
  BOOST_TEST(b.fd() == fd);
  BOOST_TEST(b.path() == dir / "mv");
}

// ---- error paths: each checks the errno and the message text ----

BOOST_AUTO_TEST_CASE(open_missing_file_throws_enoent_naming_the_path) {
  BOOST_CHECK_EXCEPTION(File::open(dir / "nope", O_RDONLY), Error,
                        error_is(ENOENT, {"could not open file \"" + dir / "nope" +
                                          "\": No such file or directory"}));
}

BOOST_AUTO_TEST_CASE(open_exclusive_of_existing_file_throws_eexist) {
  walseg_test::write_bytes(dir / "x", 0, 1, 'x');
  BOOST_CHECK_EXCEPTION(File::open(dir / "x", O_RDWR | O_CREAT | O_EXCL), Error,
                        error_is(EEXIST, {dir / "x", "File exists"}));
}

BOOST_AUTO_TEST_CASE(enospc_after_a_short_write_reports_bytes_written_of_wanted) {
  File f = File::open(dir / "w", O_RDWR | O_CREAT);
  failpoint::arm("pwrite", fail_with(ENOSPC));
  auto data = pattern(100);
  try {
    f.pwrite_all(data.data(), data.size(), 5);
    BOOST_FAIL("pwrite_all did not throw");
  } catch (const Error& e) {
    BOOST_TEST(e.errnum() == ENOSPC);
    BOOST_TEST(e.what() == "could not write to file \"" + dir / "w" +
                               "\": No space left on device; wrote 0 of 100 bytes at offset 5");
    BOOST_TEST(e.op() == "write to");
    BOOST_TEST(e.path() == dir / "w");
    BOOST_TEST(e.offset().value_or(0) == 5u);
  }
}

BOOST_AUTO_TEST_CASE(write_that_makes_no_progress_is_reported_as_disk_full) {
  File f = File::open(dir / "z", O_RDWR | O_CREAT);
  // The first call transfers 30 bytes, the second nothing and no error, as a full disk can.
  failpoint::arm("pwrite", {failpoint::Kind::kShort, 0, 30, 1, 1});
  auto data = pattern(100);
  f.pwrite_all(data.data(), 30, 0);
  failpoint::arm("pwrite", {failpoint::Kind::kShort, 0, 0, 1, 1});
  BOOST_CHECK_EXCEPTION(f.pwrite_all(data.data(), data.size(), 30), Error,
                        error_is(ENOSPC, {"No space left on device",
                                          "wrote 0 of 100 bytes at offset 30"}));
  BOOST_TEST(failpoint::calls("pwrite") == 1u);
}

BOOST_AUTO_TEST_CASE(fsync_and_fdatasync_retry_eintr_and_succeed) {
  File f = File::open(dir / "s", O_RDWR | O_CREAT);
  f.pwrite_all("x", 1, 0);
  failpoint::arm("fsync", fail_with(EINTR, 1, 3));
  f.fsync();
  BOOST_TEST(failpoint::calls("fsync") == 4u);
  failpoint::arm("fdatasync", fail_with(EINTR, 1, 64));
  f.fdatasync();
  BOOST_TEST(failpoint::calls("fdatasync") == 65u);
}

BOOST_AUTO_TEST_CASE(fdatasync_interrupted_65_times_in_a_row_throws_eintr_and_does_not_retry_eio) {
  File f = File::open(dir / "s", O_RDWR | O_CREAT);
  failpoint::arm("fdatasync", fail_with(EINTR, 1, 0));
  BOOST_CHECK_EXCEPTION(f.fdatasync(), Error,
                        error_is(EINTR, {"could not fdatasync file \"" + dir / "s" +
                                             "\": Interrupted system call (gave up after 65 interrupted calls)"}));
  BOOST_TEST(failpoint::calls("fdatasync") == 65u);
  failpoint::arm("fsync", fail_with(EIO, 1, 0));
  BOOST_CHECK_EXCEPTION(f.fsync(), Error, error_is(EIO, {"could not fsync file"}));
  BOOST_TEST(failpoint::calls("fsync") == 1u);  // a real failure: one call, final
}

BOOST_AUTO_TEST_CASE(fsync_and_fdatasync_failures_name_the_call_and_the_path) {
  File f = File::open(dir / "f", O_RDWR | O_CREAT);
  failpoint::arm("fsync", fail_with(EIO));
  BOOST_CHECK_EXCEPTION(f.fsync(), Error,
                        error_is(EIO, {"could not fsync file \"" + dir / "f" +
                                       "\": Input/output error"}));
  failpoint::arm("fdatasync", fail_with(EIO));
  BOOST_CHECK_EXCEPTION(f.fdatasync(), Error,
                        error_is(EIO, {"could not fdatasync file \"" + dir / "f" + "\""}));
  // The first failure is final for the caller, but the file object stays usable.
  f.fsync();
}

BOOST_AUTO_TEST_CASE(try_fallocate_returns_the_errno_without_throwing) {
  File f = File::open(dir / "fa", O_RDWR | O_CREAT);
  failpoint::arm("fallocate", fail_with(EOPNOTSUPP));
  BOOST_TEST(f.try_fallocate(0, 0, 4096) == EOPNOTSUPP);
  BOOST_TEST(walseg_test::stat_path(dir / "fa").st_size == 0);
  BOOST_TEST(f.try_fallocate(0, 0, 4096) == 0);  // armed for one call only
  // A genuine kernel error comes back the same way: negative length is EINVAL.
  BOOST_TEST(f.try_fallocate(0, 0, static_cast<std::uint64_t>(-1)) == EINVAL);
}

BOOST_AUTO_TEST_CASE(ftruncate_failure_names_the_size) {
  File f = File::open(dir / "tr", O_RDWR | O_CREAT);
  failpoint::arm("ftruncate", fail_with(EFBIG));
  BOOST_CHECK_EXCEPTION(f.ftruncate(12345), Error,
                        error_is(EFBIG, {"could not truncate file \"" + dir / "tr" +
                                         "\": File too large to 12345 bytes"}));
}

BOOST_AUTO_TEST_CASE(close_failure_is_reported_and_the_descriptor_is_gone) {
  File f = File::open(dir / "c", O_RDWR | O_CREAT);
  int fd = f.fd();
  failpoint::arm("close", fail_with(EIO));
  BOOST_CHECK_EXCEPTION(f.close(), Error,
                        error_is(EIO, {"could not close file \"" + dir / "c" + "\""}));
  BOOST_TEST(!f.is_open());
  BOOST_TEST(::fcntl(fd, F_GETFD) == -1);  // really closed: close(2) is never retried
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(error_wording)

BOOST_AUTO_TEST_CASE(file_dir_and_make_error_word_messages_like_postgresql) {
  Error a = file_error(EIO, "fsync", "pg_wal/000000010000000000000001");
  BOOST_TEST(a.what() ==
             std::string("could not fsync file \"pg_wal/000000010000000000000001\": "
                         "Input/output error"));
  BOOST_TEST(a.errnum() == EIO);
  BOOST_TEST(a.op() == "fsync");
  BOOST_TEST(!a.offset().has_value());
  Error b = file_error(ENOSPC, "write to", "p", "; wrote 1 of 2 bytes", 7);
  BOOST_TEST(b.what() == std::string("could not write to file \"p\": No space left on device; "
                                     "wrote 1 of 2 bytes"));
  BOOST_TEST(b.offset().value() == 7u);
  Error c = dir_error(ENOENT, "open", "d");
  BOOST_TEST(c.what() == std::string("could not open directory \"d\": No such file or directory"));
  Error d = make_error(0, "check", "", "exact text");
  BOOST_TEST(d.what() == std::string("exact text"));
  BOOST_TEST(d.errnum() == 0);
  BOOST_TEST(errno_text(EINTR) == "Interrupted system call");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(trace, FreshDirFixture)

BOOST_AUTO_TEST_CASE(trace_records_ops_in_order_with_path_and_errno) {
  io_trace::start();
  File f = File::open(dir / "tr", O_RDWR | O_CREAT);
  f.pwrite_all("x", 1, 0);
  failpoint::arm("fsync", fail_with(EIO));
  BOOST_CHECK_THROW(f.fsync(), Error);
  f.fdatasync();
  auto ev = io_trace::stop();
  std::vector<std::string> ops;
  for (const auto& e : ev) ops.push_back(e.op);
  BOOST_TEST(ops == (std::vector<std::string>{"open", "pwrite", "fsync", "fdatasync"}),
             boost::test_tools::per_element());
  BOOST_REQUIRE(ev.size() == 4u);
  BOOST_TEST(ev[0].path == dir / "tr");
  BOOST_TEST(ev[2].result_errno == EIO);
  BOOST_TEST(ev[3].result_errno == 0);
  BOOST_TEST(io_trace::stop().empty());  // stop() hands the record over
}

BOOST_AUTO_TEST_CASE(vectored_write_is_traced_under_the_name_its_failpoint_uses) {
  File f = File::open(dir / "pv", O_RDWR | O_CREAT);
  char a[3] = {'a', 'b', 'c'};
  struct iovec iov[2] = {{a, 1}, {a + 1, 2}};
  io_trace::start();
  f.pwritev_all(iov, 2, 0);
  auto ev = io_trace::stop();
  BOOST_REQUIRE(ev.size() == 1u);
  BOOST_TEST(ev[0].op == "pwritev");
}

BOOST_AUTO_TEST_CASE(syscall_count_is_per_thread) {
  std::uint64_t before = io_trace::thread_syscalls();
  std::uint64_t other = 0;
  std::thread t([&] {
    std::uint64_t b = io_trace::thread_syscalls();
    File f = File::open(dir / "th", O_RDWR | O_CREAT);
    f.pwrite_all("x", 1, 0);
    f.close();
    other = io_trace::thread_syscalls() - b;
  });
  t.join();
  BOOST_TEST(other == 3u);  // open, pwrite, close
  BOOST_TEST(io_trace::thread_syscalls() == before);
  File g = File::open(dir / "th", O_RDONLY);
  BOOST_TEST(io_trace::thread_syscalls() == before + 1);
}

BOOST_AUTO_TEST_SUITE_END()
