#define BOOST_TEST_MODULE io_ring
#include <boost/test/unit_test.hpp>

// The io layer's io_uring ring (include/walseg/io_ring.h): a write SQE asks the failpoint named
// after the syscall it stands for ("pwrite" for one iovec, "pwritev" for several), a sync SQE
// "fdatasync" / "fsync", with the same specs File's syscalls take; each completion is traced
// under that name and recorded in io_record (bytes the kernel reported, io_uring marked).
// A failed SQE cancels the rest of its chain without asking their failpoints. Every test is
// skipped when the kernel refuses io_uring. Resubmission policy: wal_writer_uring_test.

#include <fcntl.h>

#include <array>
#include <cerrno>
#include <optional>

#include "fs_test_util.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/file.h"
#include "walseg/io_record.h"
#include "walseg/io_ring.h"
#include "walseg/io_trace.h"

using namespace walseg;
namespace utf = boost::unit_test;

namespace {

boost::test_tools::assertion_result ring_available(utf::test_unit_id) {
  static std::optional<bool> ok;
  if (!ok) {
    try {
      IoRing ring(4, {});
      ok = true;
    } catch (const Error&) {
      ok = false;
    }
  }
  boost::test_tools::assertion_result r(*ok);
  r.message() << "io_uring is not available here";
  return r;
}

failpoint::Spec fail_with(int errnum) { return failpoint::Spec{failpoint::Kind::kErrno, errnum, 0, 1, 1}; }

struct RingFixture : walseg_test::FreshDirFixture {
  RingFixture() : file(File::open(dir / "f", O_RDWR | O_CREAT | O_EXCL)) {}
  ~RingFixture() {
    io_record::stop();
    io_trace::stop();
  }
  /// Submits what was queued and returns its `n` completions' results, in completion order.
  std::vector<int> run(unsigned n) {
    ring.submit_and_wait(n, file.path());
    std::vector<int> res;
    for (unsigned k = 0; k < n; ++k) res.push_back(ring.next_completion(file.path()).res);
    return res;
  }
  IoRing ring{8, {}};
  File file;
  std::array<char, 8> a{'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
  std::array<char, 8> b{'1', '2', '3', '4', '5', '6', '7', '8'};
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(io_ring, RingFixture, *utf::precondition(ring_available))

BOOST_AUTO_TEST_CASE(LinkedWriteAndFdatasync_TracedUnderTheSyscallNamesAndRecordedAsIoUring) {
  io_trace::start();
  io_record::start();
  const struct iovec one[] = {{a.data(), a.size()}};
  const struct iovec two[] = {{a.data(), a.size()}, {b.data(), b.size()}};
  ring.queue_write(file, one, 0, 0, true, 1);
  ring.queue_write(file, two, 8, 0, true, 2);
  ring.queue_sync(file, true, 3);
  BOOST_TEST(run(3) == (std::vector<int>{8, 16, 0}));
  const auto rec = io_record::stop();
  const auto ev = io_trace::stop();
  BOOST_REQUIRE(ev.size() == 3u);
  BOOST_TEST(ev[0].op == "pwrite");
  BOOST_TEST(ev[1].op == "pwritev");
  BOOST_TEST(ev[2].op == "fdatasync");
  BOOST_REQUIRE(rec.size() == 3u);
  BOOST_TEST((rec[0].op == io_record::Op::kWrite && rec[0].uring && rec[0].offset == 0 && rec[0].length == 8));
  BOOST_TEST((rec[1].op == io_record::Op::kWrite && rec[1].offset == 8 && rec[1].length == 16));
  BOOST_TEST(std::string(reinterpret_cast<const char*>(rec[1].data.data()), rec[1].data.size()) == "abcdefgh12345678");
  BOOST_TEST((rec[2].op == io_record::Op::kFdatasync && rec[2].uring && rec[2].covers_before == 2u));
  BOOST_TEST(file.stat().st_size == 24);
}

BOOST_AUTO_TEST_CASE(PwriteFailpointShortThree_KernelAskedForThreeBytes) {
  failpoint::arm("pwrite", {failpoint::Kind::kShort, 0, 3, 1, 1});
  io_record::start();
  const struct iovec one[] = {{a.data(), a.size()}};
  ring.queue_write(file, one, 0, 0, false, 1);
  BOOST_TEST(run(1) == (std::vector<int>{3}));
  const auto rec = io_record::stop();
  BOOST_REQUIRE(rec.size() == 1u);
  BOOST_TEST(rec[0].length == 3u);
  BOOST_TEST(file.stat().st_size == 3);
}

BOOST_AUTO_TEST_CASE(PwriteFailpointShortZero_CompletionReportsZeroBytes) {
  failpoint::arm("pwrite", {failpoint::Kind::kShort, 0, 0, 1, 1});
  const struct iovec one[] = {{a.data(), a.size()}};
  ring.queue_write(file, one, 0, 0, false, 1);
  BOOST_TEST(run(1) == (std::vector<int>{0}));
  BOOST_TEST(file.stat().st_size == 0);
}

// ---- Error paths: failed SQEs and their chains ----------------------------------------------

BOOST_AUTO_TEST_CASE(PwritevFailpointEio_WriteReportsEioAndTheLinkedSyncIsCancelledUnasked) {
  failpoint::arm("pwritev", fail_with(EIO));
  failpoint::arm("fdatasync", fail_with(ENOSPC));  // only to count: a cancelled sync is no call
  io_trace::start();
  const struct iovec two[] = {{a.data(), a.size()}, {b.data(), b.size()}};
  ring.queue_write(file, two, 0, 0, true, 1);
  ring.queue_sync(file, true, 2);
  BOOST_TEST(run(2) == (std::vector<int>{-EIO, -ECANCELED}));
  const auto ev = io_trace::stop();
  BOOST_REQUIRE(ev.size() == 2u);
  BOOST_TEST((ev[0].op == "pwritev" && ev[0].result_errno == EIO));
  BOOST_TEST((ev[1].op == "fdatasync" && ev[1].result_errno == ECANCELED));
  BOOST_TEST(failpoint::calls("fdatasync") == 0u);
  BOOST_TEST(file.stat().st_size == 0);  // nothing was written
}

BOOST_AUTO_TEST_CASE(FsyncFailpointEio_CompletionReportsItAndTheNextChainIsUnaffected) {
  failpoint::arm("fsync", fail_with(EIO));
  ring.queue_sync(file, false, 1);
  BOOST_TEST(run(1) == (std::vector<int>{-EIO}));
  const struct iovec one[] = {{a.data(), a.size()}};
  ring.queue_write(file, one, 0, 0, true, 2);
  ring.queue_sync(file, false, 3);
  BOOST_TEST(run(2) == (std::vector<int>{8, 0}));
  BOOST_TEST(failpoint::calls("fsync") == 2u);
}

BOOST_AUTO_TEST_SUITE_END()
