#define BOOST_TEST_MODULE wal_writer_failure
#include <boost/test/unit_test.hpp>

// Error paths of include/walseg/wal_writer.h (pwrite backend; the io_uring ones are in
// wal_writer_uring_test.cpp). Failures are injected with the io layer's failpoints: fdatasync or
// fsync returning EIO (case C14, "fsyncgate"), a write failing, a segment that cannot be opened.
// What must hold: the first failure is final; the error names the
// segment file, the operation and errno's text; every later append, flush and truncate_before
// throws that same first error, even after the cause went away (a retried fsync would report
// success for data the kernel may have dropped); flushed_lsn() never moves again; nothing
// appended after the failure is acknowledged. Argument errors (EINVAL) come last and leave the
// writer usable.
//
// Not covered here: a real kernel writeback error (dm-error/flakey target, case C14 scenario 1)
// and closing/reopening the fd between write and fsync; the writer keeps segment fds open
// from write to sync (wal_writer.h), which is what makes the kernel's error reach it.
//
// The preallocator is off in most tests (prealloc_segments = 0): it fsyncs new segments and
// would otherwise consume an armed "fsync" failpoint or race with the writer for it.

#include <atomic>
#include <mutex>
#include <thread>

#include "wal_writer_fixture.h"
#include "walseg/failpoint.h"
#include "walseg/segment_name.h"

using namespace walseg;
using namespace walseg_test;

namespace {

failpoint::Spec errno_spec(int errnum, std::uint64_t nth = 1, std::uint64_t times = 1) {
  failpoint::Spec s;
  s.kind = failpoint::Kind::kErrno;
  s.errnum = errnum;
  s.nth = nth;
  s.times = times;
  return s;
}

/// The writer's write-outs are one pwritev when they take bytes from the ring and the zero
/// page, else a pwrite (File names the failpoint after the call): arm both.
void arm_writes(const failpoint::Spec& s) {
  failpoint::arm("pwrite", s);
  failpoint::arm("pwritev", s);
}

struct FailureFixture : WalWriterFixture {
  FailureFixture() { cfg.prealloc_segments = 0; }
  std::string seg_path(SegNo segno) const { return dir / segment_file_name(1, segno, kSegBytes); }
};

/// Runs f, which must throw walseg::Error; returns it.
template <typename F>
Error thrown_by(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  BOOST_FAIL("no walseg::Error was thrown");
  throw std::logic_error("unreachable");
}

/// Invariant 4 after a failure `first`: every public call throws exactly it, and nothing moves.
void check_failed_state(WalWriter& w, const Error& first, Lsn flushed_before) {
  const Lsn insert = w.insert_lsn();
  const std::uint64_t syncs = w.stats().syncs;
  auto same = [&](const Error& e) { return e.errnum() == first.errnum() && std::string(e.what()) == first.what(); };
  BOOST_CHECK_EXCEPTION(w.flush(insert), Error, same);           // the retry
  BOOST_CHECK_EXCEPTION(w.flush(insert), Error, same);           // and again
  BOOST_CHECK_EXCEPTION(w.flush(flushed_before), Error, same);   // even what was durable
  BOOST_CHECK_EXCEPTION(w.append(seq_payload(999, 100)), Error, same);
  BOOST_CHECK_EXCEPTION(w.truncate_before(flushed_before), Error, same);
  BOOST_TEST(w.insert_lsn() == insert);        // nothing appended after the failure
  BOOST_TEST(w.flushed_lsn() == flushed_before);  // nothing acknowledged after it
  BOOST_TEST(w.stats().syncs == syncs);        // no sync was retried
}

// Fills segment 1 to within 10 kB of its end and flushes (*flushed gets the durable end), then
// appends 30 kB more without flushing, so the next flush writes into segments 1 and 2.
// Returns the insert position after the last record.
Lsn straddle_segment_boundary(WalWriter& w, Lsn* flushed) {
  while (w.insert_lsn() % kSegBytes < kSegBytes - 10000) w.append(seq_payload(0, 3000));
  w.flush(w.insert_lsn());
  *flushed = w.flushed_lsn();
  Lsn end = 0;
  for (int i = 0; i < 10; ++i) end = w.append(seq_payload(1, 3000));
  return end;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(wal_writer_failure, FailureFixture)

// ---- Error paths: every test checks errno and the reported reason ----------------------------

BOOST_AUTO_TEST_CASE(C14_FdatasyncFailsWithEIO_FlushThrowsNamingSegmentFdatasyncAndErrnoText) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  w.flush(w.append(seq_payload(0, 100)));
  const Lsn flushed = w.flushed_lsn();
  const Lsn end = w.append(seq_payload(1, 100));
  failpoint::arm("fdatasync", errno_spec(EIO));
  BOOST_CHECK_EXCEPTION(
      w.flush(end), Error,
      error_is(EIO, {"could not fdatasync file \"" + seg_path(1) + "\": Input/output error"}));
  BOOST_TEST(w.flushed_lsn() == flushed);
}

BOOST_AUTO_TEST_CASE(C14_AfterAFailedFdatasync_RetriesThrowTheFirstErrorEvenOnceTheCauseIsGone) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  w.flush(w.append(seq_payload(0, 100)));
  const Lsn flushed = w.flushed_lsn();
  const Lsn end = w.append(seq_payload(1, 5000));
  failpoint::arm("fdatasync", errno_spec(EIO));
  Error first = thrown_by([&] { w.flush(end); });
  BOOST_TEST(first.errnum() == EIO);
  BOOST_TEST(first.path() == seg_path(1));
  failpoint::disarm_all();  // the next fdatasync would succeed: it must not be asked
  check_failed_state(w, first, flushed);
}

BOOST_AUTO_TEST_CASE(C14_FsyncMethodFailsWithEIO_ErrorNamesFsyncAndTheWriterStaysFailed) {
  cfg.sync_method = SyncMethod::kFsync;
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  w.flush(w.append(seq_payload(0, 100)));
  const Lsn flushed = w.flushed_lsn();
  failpoint::arm("fsync", errno_spec(EIO));
  Error first = thrown_by([&] { w.flush(w.append(seq_payload(1, 100))); });
  BOOST_TEST(first.errnum() == EIO);
  BOOST_TEST(std::string(first.what()) == "could not fsync file \"" + seg_path(1) + "\": Input/output error");
  failpoint::disarm_all();
  check_failed_state(w, first, flushed);
}

BOOST_AUTO_TEST_CASE(C14_SyncOfTheSecondSegmentOfAFlushFails_ErrorNamesThatSegment) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  Lsn flushed = 0;
  const Lsn end = straddle_segment_boundary(w, &flushed);
  BOOST_REQUIRE(end / kSegBytes == 2);
  failpoint::arm("fdatasync", errno_spec(EIO, 2));  // segment 1 syncs, segment 2 fails
  Error first = thrown_by([&] { w.flush(end); });
  BOOST_TEST(first.errnum() == EIO);
  BOOST_TEST(std::string(first.what()).find(seg_path(2)) != std::string::npos, first.what());
  // Segment 1 was synced in full, but the flush as a whole failed: nothing is acknowledged.
  check_failed_state(w, first, flushed);
}

BOOST_AUTO_TEST_CASE(C14_GroupCommitWaitersBehindAFailedSync_AllThrowAndNoAckPassesTheLastGoodFlush) {
  cfg.prealloc_segments = 1;  // only fdatasync is armed; the preallocator never calls it
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  failpoint::arm("fdatasync", errno_spec(EIO, 20));
  std::mutex mu;
  std::vector<Lsn> acked;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 0; i < 5000; ++i) {  // bounded: a writer that recovers must not hang
        try {
          Lsn end = w.append(seq_payload(thread_seq(static_cast<std::uint64_t>(t), i), 300));
          w.flush(end);
          std::lock_guard lk(mu);
          acked.push_back(end);
        } catch (const Error& e) {
          std::lock_guard lk(mu);
          errors.emplace_back(e.what());
          return;
        }
      }
    });
  for (auto& th : threads) th.join();
  BOOST_REQUIRE_EQUAL(errors.size(), 6u);
  for (const auto& e : errors) BOOST_TEST(e == errors.front());  // one first error for all
  BOOST_TEST(errors.front().find("could not fdatasync file") != std::string::npos);
  const Lsn last_good = w.flushed_lsn();
  for (Lsn a : acked) BOOST_TEST(a <= last_good);
  // Every acknowledged record is in the WAL after the writer is gone.
  wal.reset();
  failpoint::disarm_all();
  WalContents got = read_wal(dir.path(), cfg);
  BOOST_TEST(got.stop.end_lsn >= last_good);
}

BOOST_AUTO_TEST_CASE(WriteFailsWithEIO_FlushThrowsCouldNotWriteAndTheWriterStaysFailed) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  w.flush(w.append(seq_payload(0, 100)));
  const Lsn flushed = w.flushed_lsn();
  const Lsn end = w.append(seq_payload(1, 100));
  arm_writes(errno_spec(EIO));
  Error first = thrown_by([&] { w.flush(end); });
  BOOST_TEST(first.errnum() == EIO);
  BOOST_TEST(std::string(first.what()).find("could not write to file \"" + seg_path(1) + "\": Input/output error") == 0,
             first.what());
  BOOST_TEST(w.stats().syncs == 1u);  // the failed write was not followed by a sync
  failpoint::disarm_all();
  check_failed_state(w, first, flushed);
}

BOOST_AUTO_TEST_CASE(RingFullWriteOutFailsWithENOSPC_AppendThrowsAndTheWriterStaysFailed) {
  cfg.wal_buffers_bytes = 4 * kBlockBytes;
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  w.flush(w.append(seq_payload(0, 100)));
  const Lsn flushed = w.flushed_lsn();
  arm_writes(errno_spec(ENOSPC));
  Error first = thrown_by([&] {
    for (int i = 0; i < 100; ++i) w.append(seq_payload(1 + i, 4000));
  });
  BOOST_TEST(first.errnum() == ENOSPC);
  BOOST_TEST(std::string(first.what()).find("No space left on device") != std::string::npos, first.what());
  BOOST_TEST(first.path() == seg_path(1));
  failpoint::disarm_all();
  check_failed_state(w, first, flushed);
}

BOOST_AUTO_TEST_CASE(SegmentSwitchCannotOpenTheNextSegment_FlushThrowsAndTheWriterStaysFailed) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  Lsn flushed = 0;
  const Lsn end = straddle_segment_boundary(w, &flushed);
  failpoint::arm("open", errno_spec(EACCES));  // segment 2 is created now (no pool)
  Error first = thrown_by([&] { w.flush(end); });
  BOOST_TEST(first.errnum() == EACCES);
  BOOST_TEST(std::string(first.what()).find("could not open file") != std::string::npos, first.what());
  BOOST_TEST(std::string(first.what()).find("Permission denied") != std::string::npos, first.what());
  failpoint::disarm_all();
  check_failed_state(w, first, flushed);
}

BOOST_AUTO_TEST_CASE(Append_RecordLargerThanWalBuffers_EINVALNamingWalBuffersAndWriterStillUsable) {
  // 256 kB ring: room for a payload of max_payload_bytes() (the ring less two pages, less a
  // page header per page). A record bigger than a segment (1 MB + 1) is refused before
  // anything is inserted; one that fits still works.
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  const Lsn before = w.insert_lsn();
  BOOST_CHECK_EXCEPTION(
      w.append(seq_payload(0, kSegBytes + 1)), Error,
      error_is(EINVAL, {"record of 1048577 bytes does not fit in walseg.wal_buffers (262144 bytes)"}));
  const std::size_t max_payload = WalWriter::max_payload_bytes(cfg);
  BOOST_TEST(max_payload == (256 * 1024 / kBlockBytes - 2) * (kBlockBytes - kLongPageHeaderBytes) -
                                kRecordHeaderBytes - kDataHeaderLongBytes);
  BOOST_CHECK_EXCEPTION(w.append(seq_payload(0, max_payload + 1)), Error,
                        error_is(EINVAL, {"does not fit in walseg.wal_buffers"}));
  BOOST_TEST(w.insert_lsn() == before);
  Lsn end = w.append(seq_payload(1, max_payload));
  w.flush(end);
  wal.reset();
  WalContents got = read_wal(dir.path(), cfg);
  BOOST_REQUIRE_EQUAL(got.records.size(), 1u);
  BOOST_TEST((seq_of(got.records[0].payload) == std::optional<std::uint64_t>(1)));
}

BOOST_AUTO_TEST_CASE(Flush_BeyondTheInsertPosition_EINVALAndWriterStillUsable) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  Lsn end = w.append(seq_payload(0, 100));
  BOOST_CHECK_EXCEPTION(w.flush(end + 8), Error,
                        error_is(EINVAL, {"flush request " + format_lsn(end + 8) +
                                          " is beyond the insert position " + format_lsn(end)}));
  w.flush(end);
  BOOST_TEST(w.flushed_lsn() == end);
}

BOOST_AUTO_TEST_CASE(TruncateBefore_BeyondTheFlushedPosition_EINVALAndNothingRetired) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  Lsn end = w.append(seq_payload(0, 100));
  BOOST_CHECK_EXCEPTION(w.truncate_before(end), Error,
                        error_is(EINVAL, {"cannot retire WAL before " + format_lsn(end),
                                          "is flushed"}));
  BOOST_TEST(wal->manager().stats().recycled + wal->manager().stats().removed == 0u);
}

BOOST_AUTO_TEST_CASE(Construct_WalBuffersBelowFourPages_EINVALNamingTheSetting) {
  cfg.wal_buffers_bytes = 3 * kBlockBytes;
  SegmentManager::Options mo;
  mo.config = cfg;
  SegmentManager mgr(dir.path(), mo);
  BOOST_CHECK_EXCEPTION(WalWriter(mgr, WalWriterOptions{}), Error,
                        error_is(EINVAL, {"walseg.wal_buffers = 24576 bytes is less than 4 pages of 8192 bytes"}));
}

BOOST_AUTO_TEST_CASE(Construct_ResumePositionNotAnInsertPosition_EINVAL) {
  SegmentManager::Options mo;
  mo.config = cfg;
  SegmentManager mgr(dir.path(), mo);
  WalWriterOptions wo;
  wo.resume_lsn = kSegBytes + 12;  // inside the long page header
  BOOST_CHECK_EXCEPTION(WalWriter(mgr, wo), Error,
                        error_is(EINVAL, {"invalid resume position " + format_lsn(kSegBytes + 12)}));
}

BOOST_AUTO_TEST_SUITE_END()
