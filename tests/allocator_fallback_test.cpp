#define BOOST_TEST_MODULE allocator_fallback
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/allocator.h, part 2: the fallback rule (cases C02
// and C05: fall back only when the filesystem says "not supported"). "Not supported" answers from fallocate (EOPNOTSUPP, EINVAL, ENOSYS) lead
// to the configured fallback and a file that is complete and fully allocated; every other
// answer (ENOSPC, EIO, EBADF, EFBIG, ENOMEM) is thrown with its own errno text and nothing is
// written. Errnos come from the "fallocate" failpoint, and EFBIG also from a real RLIMIT_FSIZE.

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/statfs.h>

#include <cerrno>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fs_test_util.h"
#include "walseg/allocator.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/fs_info.h"
#include "walseg/io_trace.h"

using namespace walseg;
using walseg_test::allocated_bytes;
using walseg_test::error_is;
using walseg_test::stat_path;

namespace {

constexpr std::uint64_t kSize = 16 * kMiB;

AllocOptions options(InitMethod m, FallbackMethod fb, bool direct = true) {
  AllocOptions o;
  o.method = m;
  o.fallback = fb;
  o.direct_io = direct;
  return o;
}

failpoint::Spec fail_with(int err, std::uint64_t nth = 1, std::uint64_t times = 1) {
  return {failpoint::Kind::kErrno, err, 0, nth, times};
}

std::size_t count_writes(const std::vector<io_trace::Event>& ev) {
  return static_cast<std::size_t>(std::count_if(ev.begin(), ev.end(), [](const auto& e) {
    return e.op == "pwrite" || e.op == "pwritev";
  }));
}

// The filesystem type name as the mount table gives it, read here independently.
std::string mount_fstype_of(const std::string& path) {
  struct statfs sf{};
  BOOST_REQUIRE(::statfs(path.c_str(), &sf) == 0);
  return sf.f_type == 0xEF53 ? "ext4" : fs_info(path).type_name;  // ext4 is what /var/tmp is here
}

struct FallbackFixture : walseg_test::FreshDirFixture {
  int n = 0;
  std::string next_path() { return dir / fmt::format("f{}", n++); }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(fallback, FallbackFixture)

BOOST_AUTO_TEST_CASE(C02_unsupported_errnos_fall_back_to_the_configured_method_complete) {
  const std::string fs = mount_fstype_of(dir.path());
  for (int err : {EOPNOTSUPP, EINVAL, ENOSYS}) {
    for (FallbackMethod fb : {FallbackMethod::kZeroWrite, FallbackMethod::kGlibcEmulation}) {
      BOOST_TEST_CONTEXT(errno_text(err) << " -> " << to_string(fb)) {
        std::string p = next_path();
        File f = File::open(p, O_RDWR | O_CREAT | O_EXCL);
        failpoint::arm("fallocate", fail_with(err));
        AllocReport r = allocate_file(f, kSize, options(InitMethod::kPosixFallocate, fb));
        InitMethod expect_used = fb == FallbackMethod::kZeroWrite ? InitMethod::kZeroWrite
                                                                  : InitMethod::kGlibcEmulation;
        BOOST_TEST((r.requested == InitMethod::kPosixFallocate));
        BOOST_TEST((r.used == expect_used));
        BOOST_TEST(r.fallback_errno == err);
        BOOST_TEST(r.fallback_reason == fmt::format("fallocate: {} ({})", errno_text(err), fs));
        auto st = stat_path(p);
        BOOST_TEST(st.st_size == static_cast<off_t>(kSize));
        BOOST_TEST(allocated_bytes(st) >= kSize);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(C02_unsupported_after_a_partial_reservation_still_yields_exact_size) {
  // The first 64 MiB chunk is reserved, the second refused: the fallback must start clean.
  std::string p = next_path();
  File f = File::open(p, O_RDWR | O_CREAT | O_EXCL);
  failpoint::arm("fallocate", fail_with(EOPNOTSUPP, 2));
  AllocReport r = allocate_file(f, 128 * kMiB,
                                options(InitMethod::kPosixFallocate, FallbackMethod::kZeroWrite));
  BOOST_TEST((r.used == InitMethod::kZeroWrite));
  auto st = stat_path(p);
  BOOST_TEST(st.st_size == static_cast<off_t>(128 * kMiB));
  BOOST_TEST(allocated_bytes(st) >= 128 * kMiB);
}

BOOST_AUTO_TEST_CASE(C02_fallocate_keep_size_unsupported_falls_back_to_none) {
  std::string p = next_path();
  File f = File::open(p, O_RDWR | O_CREAT | O_EXCL);
  failpoint::arm("fallocate", fail_with(EOPNOTSUPP));
  AllocReport r = allocate_file(
      f, kSize, options(InitMethod::kFallocateKeepSize, FallbackMethod::kZeroWrite));
  BOOST_TEST((r.used == InitMethod::kNone));
  BOOST_TEST(r.fallback_errno == EOPNOTSUPP);
  BOOST_TEST(stat_path(p).st_size == 0);
}

// ---- error paths: each checks the errno and the message text ----

BOOST_AUTO_TEST_CASE(C02_real_errors_are_never_masked_by_the_fallback) {
  for (int err : {ENOSPC, EIO, EBADF, EFBIG, ENOMEM, EDQUOT}) {
    for (InitMethod m : {InitMethod::kPosixFallocate, InitMethod::kFallocateKeepSize}) {
      BOOST_TEST_CONTEXT(errno_text(err) << " from " << to_string(m)) {
        std::string p = next_path();
        File f = File::open(p, O_RDWR | O_CREAT | O_EXCL);
        failpoint::arm("fallocate", fail_with(err));
        io_trace::start();
        BOOST_CHECK_EXCEPTION(
            allocate_file(f, kSize, options(m, FallbackMethod::kZeroWrite)), Error,
            error_is(err, {fmt::format("could not allocate {} bytes for file \"{}\" by {}: {}",
                                       kSize, p, to_string(m), errno_text(err))}));
        auto ev = io_trace::stop();
        BOOST_TEST(count_writes(ev) == 0u);  // the zero_write fallback never started
        BOOST_TEST(failpoint::calls("fallocate") == 1u);
        BOOST_TEST(allocated_bytes(stat_path(p)) == 0u);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(C05_enospc_on_a_later_chunk_is_thrown_not_masked) {
  std::string p = next_path();
  File f = File::open(p, O_RDWR | O_CREAT | O_EXCL);
  failpoint::arm("fallocate", fail_with(ENOSPC, 2));
  io_trace::start();
  BOOST_CHECK_EXCEPTION(
      allocate_file(f, 128 * kMiB,
                    options(InitMethod::kPosixFallocate, FallbackMethod::kGlibcEmulation)),
      Error, error_is(ENOSPC, {"134217728 bytes", "No space left on device"}));
  BOOST_TEST(count_writes(io_trace::stop()) == 0u);
}

BOOST_AUTO_TEST_CASE(C02_fallback_error_says_operation_not_supported_by_this_filesystem) {
  const std::string fs = mount_fstype_of(dir.path());
  for (int err : {EOPNOTSUPP, EINVAL, ENOSYS}) {
    std::string p = next_path();
    File f = File::open(p, O_RDWR | O_CREAT | O_EXCL);
    failpoint::arm("fallocate", fail_with(err));
    io_trace::start();
    BOOST_CHECK_EXCEPTION(
        allocate_file(f, kSize, options(InitMethod::kPosixFallocate, FallbackMethod::kError)),
        Error,
        error_is(err, {"operation not supported by this filesystem (" + fs + ")",
                       "\"" + p + "\"", "posix_fallocate", fmt::format("{} bytes", kSize),
                       errno_text(err)}));
    BOOST_TEST(count_writes(io_trace::stop()) == 0u);
  }
}

BOOST_AUTO_TEST_CASE(real_efbig_from_rlimit_fsize_is_thrown_by_fallocate_and_by_writes) {
  // A genuine kernel answer, not a failpoint: files may not grow past 8 MiB. zero_write sees a
  // real short write (8 MiB of 16) and then EFBIG; posix_fallocate sees EFBIG at once.
  struct rlimit old{};
  BOOST_REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = old;
  lim.rlim_cur = 8 * kMiB;
  BOOST_REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
  std::string pf = next_path(), zw = next_path();
  std::string pf_what, zw_what;
  int pf_err = 0, zw_err = 0;
  try {
    File f = File::open(pf, O_RDWR | O_CREAT | O_EXCL);
    allocate_file(f, kSize, options(InitMethod::kPosixFallocate, FallbackMethod::kZeroWrite));
  } catch (const Error& e) {
    pf_err = e.errnum();
    pf_what = e.what();
  }
  try {
    File f = File::open(zw, O_RDWR | O_CREAT | O_EXCL);
    allocate_file(f, kSize, options(InitMethod::kZeroWrite, FallbackMethod::kZeroWrite, false));
  } catch (const Error& e) {
    zw_err = e.errnum();
    zw_what = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  BOOST_TEST_MESSAGE(pf_what << "\n" << zw_what);
  BOOST_TEST(pf_err == EFBIG);
  BOOST_TEST(pf_what.find("by posix_fallocate: File too large") != std::string::npos);
  BOOST_TEST(zw_err == EFBIG);
  BOOST_TEST(zw_what.find("File too large; wrote 8388608 of 16777216 bytes at offset 0") !=
             std::string::npos);
  BOOST_TEST(stat_path(zw).st_size == static_cast<off_t>(8 * kMiB));
}

BOOST_AUTO_TEST_CASE(C05_enospc_on_tmpfs_names_size_and_says_the_memory_filesystem_is_full) {
  // Case C05: on tmpfs the error must say that the filesystem's size limit, not a disk, is full.
  struct statfs sf{};
  if (::statfs("/dev/shm", &sf) != 0 || sf.f_type != 0x01021994) {
    BOOST_TEST_MESSAGE("SKIP: /dev/shm is not tmpfs here");
    return;
  }
  walseg_test::TempDir shm("/dev/shm");
  File f = File::open(shm / "full", O_RDWR | O_CREAT | O_EXCL);
  failpoint::arm("fallocate", fail_with(ENOSPC));
  BOOST_CHECK_EXCEPTION(
      allocate_file(f, kSize, options(InitMethod::kPosixFallocate, FallbackMethod::kZeroWrite)),
      Error,
      error_is(ENOSPC, {fmt::format("{} bytes", kSize), "No space left on device", "tmpfs"}));
}

BOOST_AUTO_TEST_SUITE_END()
