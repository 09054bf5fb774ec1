#define BOOST_TEST_MODULE wal_writer_uring
#include <boost/test/unit_test.hpp>

// Tests for the io_uring backend of the WAL writer (walseg.io_method = io_uring,
// src/wal/uring_io.cpp): round trip, group commit, ring-full write-outs, sync methods, and the
// two durability rules that are specific to it: a short write is
// completed before a sync that covers it counts (failpoints "pwrite" / "pwritev" = short:N, the
// io layer's, as for the pwrite backend: the SQE asks the kernel for fewer bytes than the piece
// needs), and a failed linked fdatasync is final (failpoint "fdatasync" = EIO, its completion
// reports it, case C14). Completions that leave work pending ("pwrite" / "pwritev" = EAGAIN: the
// write's completion reports it and the linked sync's -ECANCELED; "fdatasync" = ECANCELED or
// EINTR) are resubmitted; when they persist the flush ends after 1000 stalled
// rounds, backing off, with that errno and a message naming the path, offset and bytes.
// Every test is skipped when the kernel refuses io_uring (containers with io_uring disabled).
// Signals interrupting the waits: wal_writer_signal_test.
//
// Not covered: a kernel-reported short write or -ECANCELED on a linked write (injected as
// completion results instead; the resubmission path is the same).

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include <thread>

#include "wal_writer_fixture.h"
#include "walseg/failpoint.h"
#include "walseg/io_trace.h"
#include "walseg/segment_name.h"

using namespace walseg;
using namespace walseg_test;
namespace utf = boost::unit_test;

namespace {

/// Precondition: the kernel lets this process set up an io_uring writer.
boost::test_tools::assertion_result uring_available(utf::test_unit_id) {
  static int state = -1;
  if (state < 0) {
    TempDir d;
    LogCapture quiet;
    try {
      auto wal = Wal::open(d.path(), writer_config(IoMethod::kIoUring));
      state = 1;
    } catch (const Error& e) {
      BOOST_TEST_MESSAGE("io_uring unavailable: " << e.what());
      state = 0;
    }
  }
  boost::test_tools::assertion_result r(state == 1);
  r.message() << "io_uring is not available here";
  return r;
}

/// Every affected call from the first fails with errnum; times 0: all of them.
failpoint::Spec errno_spec(int errnum, std::uint64_t times) {
  return failpoint::Spec{failpoint::Kind::kErrno, errnum, 0, 1, times};
}

failpoint::Spec short_spec(std::uint64_t bytes, std::uint64_t times) {
  failpoint::Spec s;
  s.kind = failpoint::Kind::kShort;
  s.short_bytes = bytes;
  s.times = times;
  return s;
}

/// Arms the io layer's write failpoints as wal_writer_failure_test does for pwrite: both names,
/// since a write is "pwrite" with one piece and "pwritev" with several.
void arm_writes(const failpoint::Spec& s) {
  failpoint::arm("pwrite", s);
  failpoint::arm("pwritev", s);
}

/// Calls of the io layer's write failpoints since they were armed.
std::uint64_t write_calls() { return failpoint::calls("pwrite") + failpoint::calls("pwritev"); }

struct UringFixture : WalWriterFixture {
  UringFixture() { cfg.io_method = IoMethod::kIoUring; }
  std::string seg_path(SegNo segno) const { return dir / segment_file_name(1, segno, kSegBytes); }
};

constexpr std::size_t kSizeClasses[] = {0, 1, 7, 8, 255, 256, 257, kBlockBytes, 3 * kBlockBytes + 100, 60000};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(wal_writer_uring, UringFixture, *utf::precondition(uring_available))

BOOST_AUTO_TEST_CASE(Uring_RoundTripOfEverySizeClassAcrossASegment_ReadBackIdentical) {
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    while (w.insert_lsn() < 2 * kSegBytes + 100000)
      for (std::size_t size : kSizeClasses) a.add(w, size);
    w.flush(a.ends.back());
    for (std::size_t size : kSizeClasses) w.flush(a.add(w, size));
    BOOST_TEST(w.stats().segment_switches == 1u);  // segment 1 into 2; starting in 1 is not a switch
  }
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Uring_ResumeInTheMiddleOfAPage_RecordsBeforeTheResumePointSurvive) {
  Appended a;
  for (int session = 0; session < 3; ++session) {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_TEST(wal->recovery().records == a.payloads.size());
    for (int i = 0; i < 3; ++i) a.add(wal->writer(), 100);
    wal->writer().flush(a.ends.back());
    BOOST_REQUIRE(a.ends.back() % kBlockBytes != 0);
  }
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Uring_ShortWrite_FlushCompletesItBeforeReturningAndCountsIt) {
  cfg.prealloc_segments = 0;  // its fill would take the write failpoints too
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  Appended a;
  w.flush(a.add(w, 100));
  a.add(w, 3 * kBlockBytes);
  a.add(w, 100);
  const std::uint64_t syncs_before = w.stats().syncs;
  arm_writes(short_spec(100, 1));
  io_trace::start();
  w.flush(a.ends.back());
  auto events = io_trace::stop();
  BOOST_TEST(write_calls() >= 2u);  // the remainder was submitted again
  BOOST_TEST(w.stats().short_writes > 0u);
  // The sync that completed behind the short write covered nothing: a second one was needed.
  BOOST_TEST(w.stats().syncs >= syncs_before + 2);
  // In completion order, the last event on the segment is a successful fdatasync.
  std::ptrdiff_t last_write = -1, last_sync = -1;
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(events.size()); ++i) {
    const auto& e = events[static_cast<std::size_t>(i)];
    if (e.path != seg_path(1)) continue;
    if (e.op == "pwrite" || e.op == "pwritev") last_write = i;
    if (e.op == "fdatasync" && e.result_errno == 0) last_sync = i;
  }
  BOOST_TEST(last_write >= 0);
  BOOST_TEST(last_sync > last_write);
  // On disk now, before the writer is closed: every record in full.
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Uring_EverySqeShort_ManyRoundsStillWriteEveryByte) {
  cfg.prealloc_segments = 0;  // its fill would take the write failpoints too
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  Appended a;
  arm_writes(short_spec(512, 0));
  for (int i = 0; i < 6; ++i) w.flush(a.add(w, 2000 + 3000 * static_cast<std::size_t>(i)));
  BOOST_TEST(w.stats().short_writes > 20u);
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Uring_ShortWritesDuringRingFullWriteOuts_FinalFlushMakesAllDurable) {
  cfg.wal_buffers_bytes = 5 * kBlockBytes;
  Appended a;
  {
    cfg.prealloc_segments = 0;  // its fill would take the write failpoints too
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    w.flush(a.add(w, 100));  // the writer creates its segment before the failpoint is armed
    arm_writes(short_spec(3000, 0));
    for (int i = 0; i < 200; ++i) a.add(w, 500 + (static_cast<std::size_t>(i) * 53) % 7000);
    BOOST_TEST(w.stats().buffer_full_writes > 0u);
    w.flush(a.ends.back());
    BOOST_TEST(w.stats().short_writes > 0u);
    failpoint::disarm_all();
  }
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Uring_GroupCommitEightThreads_AllReadBackWithFewerSyncsThanCommits) {
  constexpr int kThreads = 8;
  constexpr std::uint64_t kPerThread = 120;
  std::uint64_t syncs = 0;
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&w, t] {
        for (std::uint64_t i = 0; i < kPerThread; ++i) {
          std::uint64_t seq = thread_seq(static_cast<std::uint64_t>(t), i);
          w.flush(w.append(seq_payload(seq, 8 + (seq * 131) % 2500)));
        }
      });
    for (auto& th : threads) th.join();
    syncs = w.stats().syncs;
  }
  BOOST_TEST(syncs < kThreads * kPerThread);
  check_each_thread_in_order(read_wal(dir.path(), cfg), kThreads, kPerThread);
}

BOOST_AUTO_TEST_CASE(Uring_SyncMethodsFsyncAndOpenDatasync_RoundTrip) {
  for (SyncMethod m : {SyncMethod::kFsync, SyncMethod::kOpenDatasync}) {
    BOOST_TEST_CONTEXT("sync_method " << to_string(m)) {
      TempDir d;
      cfg.sync_method = m;
      Appended a;
      {
        auto wal = Wal::open(d.path(), cfg);
        for (std::size_t size : kSizeClasses) wal->writer().flush(a.add(wal->writer(), size));
        if (m == SyncMethod::kFsync) BOOST_TEST(wal->writer().stats().syncs > 0u);
        else BOOST_TEST(wal->writer().stats().syncs == 0u);
      }
      a.check_read_back(d.path(), cfg);
    }
  }
}

BOOST_AUTO_TEST_CASE(Uring_WritesCompleteWithEagainThreeTimes_ResubmittedAndEveryRecordReadsBack) {
  cfg.prealloc_segments = 0;  // its fill would take the write failpoints too
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  Appended a;
  w.flush(a.add(w, 100));
  arm_writes(errno_spec(EAGAIN, 3));
  for (int i = 0; i < 3; ++i) a.add(w, 3000);
  w.flush(a.ends.back());
  BOOST_TEST(write_calls() == 4u);  // one write SQE a round, the fourth believed
  BOOST_TEST(w.flushed_lsn() == a.ends.back());
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Uring_LinkedFdatasyncInterruptedTwice_RedoneAndTheFlushSucceeds) {
  // -EINTR from the sync reports no writeback error (File::fsync's note): it is redone, not final.
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  Appended a;
  w.flush(a.add(w, 100));
  const std::uint64_t syncs = w.stats().syncs;
  failpoint::arm("fdatasync", errno_spec(EINTR, 2));
  w.flush(a.add(w, 5000));
  BOOST_TEST(w.stats().syncs == syncs + 3);
  BOOST_TEST(w.flushed_lsn() == a.ends.back());
  w.flush(a.add(w, 100));
  a.check_read_back(dir.path(), cfg);
}

// ---- Error paths: errno and the reported reason ---------------------------------------------

BOOST_AUTO_TEST_CASE(Uring_EveryWriteCompletesWithEagain_FlushBacksOffThenThrowsEagainNamingOffsetAndBytes) {
  cfg.prealloc_segments = 0;  // its fill would take the write failpoints too
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  w.flush(w.append(seq_payload(0, 100)));  // the writer creates its segment before the failpoint is armed
  const std::uint64_t from = w.flushed_lsn() % kSegBytes;
  const Lsn end = w.append(seq_payload(1, 100));
  arm_writes(errno_spec(EAGAIN, 0));
  const auto started = std::chrono::steady_clock::now();
  std::optional<Error> got;
  try {
    w.flush(end);
  } catch (const Error& e) {
    got = e;
  }
  const auto took = std::chrono::steady_clock::now() - started;
  BOOST_REQUIRE(got);
  BOOST_TEST_MESSAGE(got->what());
  // The commit's write starts where the first commit's ended.
  BOOST_TEST(error_is(EAGAIN, {"could not write to file \"" + seg_path(1) + "\": Resource temporarily unavailable; ",
                               fmt::format(" bytes from offset {} still unwritten after 1000 rounds of io_uring resubmission", from),
                               "(last round: 1 write completed with -EAGAIN, fdatasync with -ECANCELED)"})(*got));
  BOOST_TEST(got->offset().value_or(1) == from);
  BOOST_TEST(write_calls() == 1000u);
  // Backed off between rounds (10 us doubling to 1 ms: about a second), not a busy spin.
  BOOST_TEST(took >= std::chrono::milliseconds(500));
  failpoint::disarm_all();
  BOOST_CHECK_EXCEPTION(w.flush(end), Error, error_is(EAGAIN, {"still unwritten"}));  // final
  BOOST_TEST(w.flushed_lsn() < end);
}

BOOST_AUTO_TEST_CASE(Uring_LinkedFdatasyncCancelledEveryTime_FlushThrowsEcanceledNotEio) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  const Lsn end = w.append(seq_payload(0, 100));
  failpoint::arm("fdatasync", errno_spec(ECANCELED, 0));
  BOOST_CHECK_EXCEPTION(
      w.flush(end), Error,
      error_is(ECANCELED, {"could not fdatasync file \"" + seg_path(1) + "\": Operation canceled; 0 bytes unwritten",
                           "but the sync did not complete in 1000 rounds of io_uring resubmission",
                           "(last round: fdatasync with -ECANCELED)"}));
  BOOST_TEST(failpoint::calls("fdatasync") == 1001u);  // the first round also wrote: progress
  BOOST_TEST(w.flushed_lsn() < end);
}

BOOST_AUTO_TEST_CASE(Uring_WriteCompletesWithEio_FlushThrowsEioAtItsOffsetAndTheFailureIsFinal) {
  cfg.prealloc_segments = 0;  // its fill would take the write failpoints too
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  w.flush(w.append(seq_payload(0, 100)));
  const Lsn flushed = w.flushed_lsn();
  const Lsn end = w.append(seq_payload(1, 100));
  arm_writes(errno_spec(EIO, 1));
  const std::string want = "could not write to file \"" + seg_path(1) + "\": Input/output error at offset ";
  BOOST_CHECK_EXCEPTION(w.flush(end), Error, error_is(EIO, {want}));
  BOOST_TEST(write_calls() == 1u);  // not resubmitted
  BOOST_CHECK_EXCEPTION(w.flush(end), Error, error_is(EIO, {want}));
  BOOST_TEST(w.flushed_lsn() == flushed);
}

BOOST_AUTO_TEST_CASE(C14_Uring_LinkedFdatasyncFailsWithEIO_FlushThrowsAndTheFailureIsFinal) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  w.flush(w.append(seq_payload(0, 100)));
  const Lsn flushed = w.flushed_lsn();
  const Lsn end = w.append(seq_payload(1, 3 * kBlockBytes));
  failpoint::arm("fdatasync", failpoint::Spec{failpoint::Kind::kErrno, EIO, 0, 1, 1});
  const std::string want = "could not fdatasync file \"" + seg_path(1) + "\": Input/output error";
  BOOST_CHECK_EXCEPTION(w.flush(end), Error, error_is(EIO, {want}));
  failpoint::disarm_all();  // a retried sync would now succeed: it must not be believed
  const std::uint64_t syncs = w.stats().syncs;
  BOOST_CHECK_EXCEPTION(w.flush(end), Error, error_is(EIO, {want}));
  BOOST_CHECK_EXCEPTION(w.flush(flushed), Error, error_is(EIO, {want}));
  BOOST_CHECK_EXCEPTION(w.append(seq_payload(2, 100)), Error, error_is(EIO, {want}));
  BOOST_TEST(w.flushed_lsn() == flushed);
  BOOST_TEST(w.insert_lsn() == end);
  BOOST_TEST(w.stats().syncs == syncs);
}

BOOST_AUTO_TEST_CASE(C14_Uring_FdatasyncFailsAfterAShortWrite_FlushThrowsEIO) {
  // The failure hits the sync that is resubmitted after completing the short write.
  cfg.prealloc_segments = 0;  // its fill would take the write failpoints too
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  w.flush(w.append(seq_payload(0, 100)));  // the writer creates its segment before the failpoint is armed
  const Lsn end = w.append(seq_payload(1, 2 * kBlockBytes));
  arm_writes(short_spec(100, 1));
  failpoint::arm("fdatasync", failpoint::Spec{failpoint::Kind::kErrno, EIO, 0, 2, 1});
  BOOST_CHECK_EXCEPTION(w.flush(end), Error,
                        error_is(EIO, {"could not fdatasync file \"" + seg_path(1) + "\""}));
  BOOST_TEST(w.stats().short_writes > 0u);
  BOOST_TEST(w.flushed_lsn() < end);
}

// ---- The io layer's write failpoints, armed as for pwrite, fire on the ring -------------------
// The spec wal_writer_failure_test arms for the pwrite backend ("pwrite" for one piece,
// "pwritev" for several: the name of the call the SQE stands for) applies to io_uring SQEs.
// The preallocator is off: its zero fill would take the failpoint first.

BOOST_AUTO_TEST_CASE(Uring_PwriteFailpointsArmedWithEioOrEnospc_FlushThrowsThatErrnoAndTheFailureIsFinal) {
  for (int errnum : {EIO, ENOSPC}) {
    BOOST_TEST_CONTEXT("errno " << errnum) {
      TempDir d;
      cfg.prealloc_segments = 0;
      auto wal = Wal::open(d.path(), cfg);
      WalWriter& w = wal->writer();
      w.flush(w.append(seq_payload(0, 100)));
      const Lsn flushed = w.flushed_lsn();
      const Lsn end = w.append(seq_payload(1, 3 * kBlockBytes));
      arm_writes(errno_spec(errnum, 1));
      const std::string want = "could not write to file \"" + d.path() + "/" + segment_file_name(1, 1, kSegBytes) +
                               "\": " + errno_text(errnum);
      BOOST_CHECK_EXCEPTION(w.flush(end), Error, error_is(errnum, {want}));
      BOOST_TEST(write_calls() == 1u);
      failpoint::disarm_all();
      BOOST_CHECK_EXCEPTION(w.flush(end), Error, error_is(errnum, {want}));
      BOOST_TEST(w.flushed_lsn() == flushed);
    }
  }
}

BOOST_AUTO_TEST_CASE(Uring_PwriteFailpointsArmedShort_RemainderResubmittedAndEveryRecordReadsBack) {
  cfg.prealloc_segments = 0;
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  Appended a;
  w.flush(a.add(w, 100));
  arm_writes(short_spec(100, 1));
  a.add(w, 3 * kBlockBytes);
  w.flush(a.add(w, 100));
  BOOST_TEST(write_calls() >= 2u);
  BOOST_TEST(w.stats().short_writes > 0u);
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Uring_PwriteFailpointsArmedCrash_KilledBeforeTheWriteIsSubmitted) {
  // "crash" on the io layer's write names, as segment_manager_crash_test arms it for pwrite:
  // the process exits when the SQE is queued, so the commit's bytes never reach the file.
  cfg.prealloc_segments = 0;
  const pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    try {
      auto wal = Wal::open(dir.path(), cfg);
      WalWriter& w = wal->writer();
      w.flush(w.append(seq_payload(0, 100)));
      failpoint::arm_from_string("pwrite=crash;pwritev=crash");
      w.flush(w.append(seq_payload(1, 3 * kBlockBytes)));
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);  // the failpoint did not fire
  }
  int status = 0;
  BOOST_REQUIRE(::waitpid(pid, &status, 0) == pid);
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == failpoint::kCrashExitStatus);
  BOOST_TEST(read_wal(dir.path(), cfg).records.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
