#define BOOST_TEST_MODULE wal_writer
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/wal_writer.h and wal.h with walseg.io_method = pwrite: records of
// every size class go in through WalWriter (opened by Wal::open on a real directory under
// /var/tmp, 1 MB segments) and come back through WalReader, the independent check. Scenarios:
// round trip, records across and ending at segment boundaries, resume after close (in the
// middle of a page, at a page boundary), append mode, a full ring, group commit, the sync
// methods, and the syscall order of a flush (the sync after every byte it covers, io_trace). Elsewhere: io_uring in
// wal_writer_uring_test.cpp; truncate_before and recycled segments in wal_writer_retire_test.cpp;
// failures (C14) and argument errors in wal_writer_failure_test.cpp; kill -9 in wal_crash_test.cpp.

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "wal_writer_fixture.h"
#include "walseg/failpoint.h"
#include "walseg/io_trace.h"
#include "walseg/segment_name.h"

using namespace walseg;
using namespace walseg_test;

namespace {

// Page-fitting sizes: first record of a segment starts after the 40-byte long header, so a
// payload of 8192 - 40 - 24 - 5 = 8123 bytes ends exactly at the end of that first page.
constexpr std::size_t kFillsFirstPage = kBlockBytes - 40 - 24 - 5;
constexpr std::size_t kSizeClasses[] = {0, 1, 7, 8, 255, 256, 257, kBlockBytes - 100, kBlockBytes,
                                        3 * kBlockBytes + 100, 60000};

bool is_segment_path(const std::string& dir, const std::string& path) {
  if (path.rfind(dir + "/", 0) != 0) return false;
  return looks_like_segment_name(path.substr(dir.size() + 1));
}

/// Invariant 3 in trace order: for every segment file written, a sync of that file follows
/// its last write.
void check_sync_after_writes(const std::vector<io_trace::Event>& events, const std::string& dir,
                             const std::string& sync_op) {
  std::map<std::string, std::ptrdiff_t> last_write, last_sync;
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(events.size()); ++i) {
    const auto& e = events[static_cast<std::size_t>(i)];
    if (!is_segment_path(dir, e.path)) continue;
    if (e.op == "pwrite" || e.op == "pwritev") last_write[e.path] = i;
    if (e.op == sync_op && e.result_errno == 0) last_sync[e.path] = i;
  }
  BOOST_TEST(!last_write.empty(), "the flush wrote no segment file");
  for (const auto& [path, w] : last_write) {
    BOOST_TEST_CONTEXT(path) {
      BOOST_REQUIRE(last_sync.count(path) == 1);
      BOOST_TEST(last_sync[path] > w, "last write #" << w << " is not followed by a " << sync_op);
    }
  }
}

/// What a kill in the middle of a 70000-byte record's write leaves: three flushed 100-byte
/// records, then the record's first five pages (valid headers) and zeros from its sixth on.
struct TornRecord {
  Lsn start = 0;    // where the unfinished record starts: the end of WAL recovery must find
  Lsn end = 0;      // where it would have ended
  std::string seg;  // the segment holding it
};

TornRecord tear_a_multi_page_record(const std::string& dir, const Config& cfg, Appended& a) {
  TornRecord t;
  {
    auto wal = Wal::open(dir, cfg);
    for (int i = 0; i < 3; ++i) a.add(wal->writer(), 100);
    wal->writer().flush(a.ends.back());
    t.start = wal->writer().insert_lsn();
    t.end = wal->writer().append(seq_payload(999, 70000));
    wal->writer().flush(t.end);
  }
  t.seg = dir + "/" + segment_file_name(1, t.start / kSegBytes, kSegBytes);
  const Lsn hole = t.start - t.start % kBlockBytes + 5 * kBlockBytes;
  const Lsn hole_end = t.end - t.end % kBlockBytes + kBlockBytes;
  BOOST_REQUIRE(hole_end / kSegBytes == t.start / kSegBytes);
  File f = File::open(t.seg, O_RDWR);
  std::vector<char> zeros(hole_end - hole, 0);
  f.pwrite_all(zeros.data(), zeros.size(), hole % kSegBytes);
  f.fdatasync();
  return t;
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(wal_writer, WalWriterFixture)

BOOST_AUTO_TEST_CASE(RoundTrip_RecordsOfEverySizeClass_ReadBackIdenticalInOrder) {
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    for (int round = 0; round < 3; ++round)
      for (std::size_t size : kSizeClasses) a.add(w, size);
    a.add(w, kFillsFirstPage);
    w.flush(a.ends.back());
    BOOST_TEST(w.flushed_lsn() >= a.ends.back());
    BOOST_TEST(w.stats().records == a.payloads.size());
    BOOST_REQUIRE(a.ends.back() < 2 * kSegBytes);  // all in segment 1, where the writer started
    BOOST_TEST(w.stats().segment_switches == 0u);  // `walseg write` printed "1 segment switches"
  }
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(RoundTrip_FlushAfterEveryRecord_RewrittenPartialPagesKeepEarlierRecords) {
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    for (std::size_t size : kSizeClasses) wal->writer().flush(a.add(wal->writer(), size));
    for (int i = 0; i < 50; ++i) wal->writer().flush(a.add(wal->writer(), 40 + i));
  }
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(WriteOut_ZeroFilledSegment_EachCommitWritesOnlyItsNewBytes) {
  // Rewriting the flushed part of the last page, and the zeros of its second half, made an
  // 8 kB commit write 16 kB (bench/append_vs_fio.sh).
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    const Lsn start = w.insert_lsn();
    for (int i = 0; i < 50; ++i) w.flush(a.add(w, 100 + i));
    // Every new byte once, the last memory page's zeros after it, no flushed byte again.
    BOOST_TEST(w.stats().bytes_written >= w.flushed_lsn() - start);
    BOOST_TEST(w.stats().bytes_written <= w.flushed_lsn() - start + 50 * 4095);
    BOOST_TEST(w.stats().bytes_written < 50 * kBlockBytes);
    BOOST_TEST(w.stats().writes == 50u);  // one pwritev per commit, even across a page boundary
  }
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(WriteOut_SegmentFoundAtOpenWithStaleBytes_LastPageIsWrittenWholeWithZerosAfterTheEnd) {
  // A segment found at open may hold bytes of an unflushed earlier life after the end of WAL
  // (here: a pattern the reader rejects). Writing only the new bytes would leave them right
  // after the last record, so the resumed writer writes the rest of that page as zeros.
  Appended a;
  Lsn end = 0;
  {
    auto wal = Wal::open(dir.path(), cfg);
    for (int i = 0; i < 3; ++i) a.add(wal->writer(), 100);
    wal->writer().flush(a.ends.back());
    end = a.ends.back();
  }
  const std::string seg = dir / segment_file_name(1, end / kSegBytes, kSegBytes);
  {
    File f = File::open(seg, O_RDWR);
    std::vector<char> junk(2 * kBlockBytes, static_cast<char>(0xAB));
    f.pwrite_all(junk.data(), junk.size(), end % kSegBytes + 200);
    f.fdatasync();
  }
  Lsn new_end = 0;
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_REQUIRE(wal->recovery().end_lsn == end);
    new_end = a.add(wal->writer(), 100);
    wal->writer().flush(new_end);
    BOOST_TEST(wal->writer().stats().bytes_written == kBlockBytes - end % kBlockBytes);
  }
  std::vector<char> bytes = read_all(seg);
  const std::size_t from = new_end % kSegBytes, to = from - from % kBlockBytes + kBlockBytes;
  BOOST_REQUIRE(to > from + 200);
  BOOST_TEST(std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(from),
                         bytes.begin() + static_cast<std::ptrdiff_t>(to), [](char c) { return c == 0; }));
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(SegmentBoundary_RecordSpanningTwoSegments_IsWrittenAndReadBack) {
  Appended a;
  Lsn spanning_end = 0;
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    while (w.insert_lsn() % kSegBytes < kSegBytes - 6000) a.add(w, 2000);
    const Lsn before = w.insert_lsn();
    spanning_end = a.add(w, 30000);
    BOOST_REQUIRE(before / kSegBytes != (spanning_end - 1) / kSegBytes);
    for (int i = 0; i < 20; ++i) a.add(w, 500);
    w.flush(a.ends.back());
    BOOST_TEST(w.stats().segment_switches == 1u);  // segment 1 into 2; starting in 1 is not a switch
  }
  a.check_read_back(dir.path(), cfg);
  WalContents got = read_wal(dir.path(), cfg);
  auto it = std::find_if(got.records.begin(), got.records.end(),
                         [&](const ReadRecord& r) { return r.end_lsn == spanning_end; });
  BOOST_REQUIRE(it != got.records.end());
  BOOST_TEST(it->lsn / kSegBytes + 1 == (it->end_lsn - 1) / kSegBytes);
}

BOOST_AUTO_TEST_CASE(SegmentBoundary_RecordBiggerThanASegmentWithALargeRing_SpansThreeSegments) {
  cfg.wal_buffers_bytes = 4 * kSegBytes;
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    a.add(w, 100);
    while (w.insert_lsn() % kSegBytes < kSegBytes - 50000) a.add(w, 7000);
    a.add(w, kSegBytes + kSegBytes / 2);  // 1.5 MB: starts near the end of segment 1
    a.add(w, 100);
    w.flush(a.ends.back());
  }
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(SegmentBoundary_RecordEndingExactlyAtTheEnd_ResumeStartsTheNextSegment) {
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_REQUIRE(fill_to(wal->writer(), a, 2 * kSegBytes));
    wal->writer().flush(a.ends.back());
    BOOST_TEST(wal->writer().flushed_lsn() == 2 * kSegBytes);
  }
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_TEST(wal->recovery().end_lsn == 2 * kSegBytes);
    for (int i = 0; i < 3; ++i) a.add(wal->writer(), 100);
    wal->writer().flush(a.ends.back());
  }
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Resume_InTheMiddleOfAPage_RecordsBeforeTheResumePointSurvive) {
  // A writer that rewrote the resumed page from zeros instead of from its on-disk prefix would
  // erase the first three records here.
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    for (int i = 0; i < 3; ++i) a.add(wal->writer(), 100);
    wal->writer().flush(a.ends.back());
  }
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_TEST(wal->recovery().records == 3u);
    BOOST_TEST(wal->recovery().end_lsn == a.ends.back());
    BOOST_REQUIRE(wal->recovery().end_lsn % kBlockBytes != 0);  // really mid-page
    BOOST_TEST(wal->writer().insert_lsn() == a.ends.back());
    for (int i = 0; i < 3; ++i) a.add(wal->writer(), 100);
    wal->writer().flush(a.ends.back());
  }
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_TEST(wal->recovery().records == 6u);
    BOOST_TEST(!wal->recovery().corruption);
  }
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Resume_AfterATornMultiPageRecord_ItsEarlierPagesAreClearedAndNoCorruptionIsReported) {
  // Found by a break-it session: a kill in the middle of a 70000-byte record's write left its
  // first pages (valid headers) after the end of WAL; the resumed writer rewrote only the page
  // holding the end, so the next recovery found a valid page after its stop and reported
  // corruption (walseg recover exit 2) although nothing flushed was damaged.
  Appended a;
  const TornRecord torn = tear_a_multi_page_record(dir.path(), cfg, a);
  const Lsn torn_start = torn.start;
  const std::string& seg = torn.seg;
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_REQUIRE(wal->recovery().end_lsn == torn_start);
    BOOST_REQUIRE(!wal->recovery().corruption);
    wal->writer().flush(a.add(wal->writer(), 100));
  }
  WalContents got = read_wal(dir.path(), cfg);
  BOOST_TEST_MESSAGE("reader stopped: " << describe(got.stop));
  BOOST_TEST(!got.stop.corruption);
  BOOST_TEST(got.stop.end_lsn == a.ends.back());
  // The pages of the unfinished record after the resumed page are zeros now.
  std::vector<char> bytes = read_all(seg);
  const std::size_t first = (torn_start % kSegBytes) - (torn_start % kBlockBytes) + kBlockBytes;
  BOOST_TEST(std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(first),
                         bytes.begin() + static_cast<std::ptrdiff_t>(first + 4 * kBlockBytes),
                         [](char c) { return c == 0; }));
  a.check_read_back(dir.path(), cfg);
}

// Break-it round 11 F1: recovery reads the torn segment by name, then the open updates the
// control file, then it zeroes the unfinished record's pages: a file moved onto the segment's
// name during the update had its pages zeroed. Now what was opened is checked first.
BOOST_AUTO_TEST_CASE(Reopen_AFileMovedOntoTheTornSegmentDuringTheOpenIsNotWritten) {
  Appended a;
  const std::string seg = tear_a_multi_page_record(dir.path(), cfg, a).seg;
  walseg_test::TempDir elsewhere;
  const std::string mine = elsewhere / "mine";
  const std::vector<char> bytes(kSegBytes, 'U');
  {
    File f = File::open(mine, O_RDWR | O_CREAT | O_EXCL, 0600);
    f.pwrite_all(bytes.data(), bytes.size(), 0);
  }
  failpoint::Spec move;
  move.kind = failpoint::Kind::kCall;
  move.call = [&] { BOOST_REQUIRE(::rename(mine.c_str(), seg.c_str()) == 0); };
  failpoint::arm("replace.after_exchange", move);
  try {
    Wal::open(dir.path(), cfg);
    failpoint::disarm_all();
    BOOST_FAIL("the open wrote into the moved-in file or went on past it");
  } catch (const Error& e) {
    failpoint::disarm_all();
    BOOST_TEST(e.errnum() == EEXIST, e.what());
  }
  BOOST_TEST((read_all(seg) == bytes));  // the user's file, now under the segment's name, as it was
}

BOOST_AUTO_TEST_CASE(Reopen_WithAnotherSegmentSize_IsRefusedNamingTheSettingAsOneWritesIt) {
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    wal->writer().flush(a.add(wal->writer(), 100));
  }
  Config other = cfg;
  other.segment_size_bytes = 2 * kSegBytes;
  other.min_size_bytes = 4 * kSegBytes;
  try {
    Wal::open(dir.path(), other);
    BOOST_FAIL("a WAL of 1 MB segments was opened with walseg.segment_size = 2MB");
  } catch (const Error& e) {
    BOOST_TEST(e.errnum() == EINVAL);
    // A new user was told "16384kB" for 16 MB segments.
    BOOST_TEST(std::string(e.what()).find("set walseg.segment_size = 1MB") != std::string::npos, e.what());
  }
  a.check_read_back(dir.path(), cfg);  // nothing was touched
}

BOOST_AUTO_TEST_CASE(Resume_AtAPageBoundary_NextRecordStartsThereWithAPageHeader) {
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    a.add(wal->writer(), kFillsFirstPage);
    wal->writer().flush(a.ends.back());
  }
  BOOST_REQUIRE(a.ends.back() % kBlockBytes == 0);
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_TEST(wal->recovery().end_lsn == a.ends.back());
    a.add(wal->writer(), 300);
    wal->writer().flush(a.ends.back());
  }
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Resume_TenReopensAcrossSegments_EveryRecordOfEverySessionPresent) {
  Appended a;
  std::uint64_t sys_id = 0;
  for (int session = 0; session < 10; ++session) {
    auto wal = Wal::open(dir.path(), cfg);
    if (session == 0) sys_id = wal->system_id();
    BOOST_TEST(wal->system_id() == sys_id);  // the identifier is learnt back, not made anew
    BOOST_TEST(wal->recovery().records == a.payloads.size());
    for (int i = 0; i < 40; ++i) a.add(wal->writer(), 997 * static_cast<std::size_t>(i + session) % 9000);
    wal->writer().flush(a.ends.back());
  }
  BOOST_TEST(a.ends.back() > 2 * kSegBytes);
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(AppendMode_InitMethodNone_FilesGrowAndRecordsRoundTripAcrossReopen) {
  cfg.init_method = InitMethod::kNone;
  Appended a;
  for (int session = 0; session < 3; ++session) {
    auto wal = Wal::open(dir.path(), cfg);
    for (int i = 0; i < 200; ++i) a.add(wal->writer(), 37 * static_cast<std::size_t>(i) % 9000);
    wal->writer().flush(a.ends.back());
  }
  BOOST_TEST(a.ends.back() > 2 * kSegBytes);
  a.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(RingFull_ManyRecordsWithoutFlush_AppendsWriteOutAndOneFlushMakesAllDurable) {
  cfg.wal_buffers_bytes = 6 * kBlockBytes;
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    const Lsn start = w.flushed_lsn();
    for (int i = 0; i < 300; ++i) a.add(w, 1000 + (i * 37) % 4000);
    a.add(w, 3 * kBlockBytes);  // the largest payload a 6-page ring takes
    WalWriterStats st = w.stats();
    BOOST_TEST(st.buffer_full_writes > 0u);
    BOOST_TEST(w.flushed_lsn() == start);  // pages written out to make room are not acknowledged
    w.flush(a.ends.back());
    BOOST_TEST(w.flushed_lsn() == a.ends.back());
  }
  a.check_read_back(dir.path(), cfg);
}

// Break-it round 28 M1: max_payload_bytes() was the ring less three pages, but a record
// carries a page header on every page it continues into: in rings of about a thousand pages
// and more, a payload of that size never fit and append() waited for space forever. The
// largest payload must go in whatever the ring's size and the record's offset in its page.
BOOST_AUTO_TEST_CASE(RingFull_TheLargestPayloadGoesInAtAnyOffsetInAnyRing) {
  for (const std::uint64_t pages : {4u, 6u, 40u, 1100u}) {
    BOOST_TEST_CONTEXT(pages << " pages") {
      walseg_test::FreshDirFixture fresh;
      cfg.wal_buffers_bytes = pages * kBlockBytes;
      const std::uint64_t max = WalWriter::max_payload_bytes(cfg);
      BOOST_TEST_REQUIRE(max > 0u);
      Appended a;
      {
        auto wal = Wal::open(fresh.dir.path(), cfg);
        WalWriter& w = wal->writer();
        for (int k = 0; k < 3; ++k) {
          a.add(w, 100 + 3000 * k);  // the large one then starts at another offset in its page
          a.add(w, max);
        }
        w.flush(a.ends.back());
        std::vector<std::byte> more(max + 1);
        BOOST_CHECK_THROW(w.append(more), Error);
      }
      a.check_read_back(fresh.dir.path(), cfg);
    }
  }
}

BOOST_AUTO_TEST_CASE(GroupCommit_EightThreadsAppendAndFlush_AllReadBackWithFewerSyncsThanCommits) {
  constexpr int kThreads = 8;
  constexpr std::uint64_t kPerThread = 150;
  std::map<std::uint64_t, Lsn> end_of;  // seq -> end LSN returned by append
  std::atomic<int> early_acks{0};
  std::uint64_t syncs = 0, records = 0;
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    std::vector<std::vector<std::pair<std::uint64_t, Lsn>>> mine(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (std::uint64_t i = 0; i < kPerThread; ++i) {
          std::uint64_t seq = thread_seq(static_cast<std::uint64_t>(t), i);
          Lsn end = w.append(seq_payload(seq, 8 + (seq * 131) % 2500));
          w.flush(end);
          if (w.flushed_lsn() < end) ++early_acks;
          mine[static_cast<std::size_t>(t)].emplace_back(seq, end);
        }
      });
    for (auto& th : threads) th.join();
    for (const auto& v : mine)
      for (const auto& [seq, end] : v) end_of[seq] = end;
    syncs = w.stats().syncs;
    records = w.stats().records;
  }
  BOOST_TEST(early_acks.load() == 0);
  BOOST_TEST(records == kThreads * kPerThread);
  BOOST_TEST(syncs < kThreads * kPerThread, syncs << " syncs for " << kThreads * kPerThread << " commits");
  WalContents got = read_wal(dir.path(), cfg);
  check_each_thread_in_order(got, kThreads, kPerThread);
  for (const ReadRecord& r : got.records) {
    auto seq = seq_of(r.payload);
    BOOST_TEST(end_of[*seq] == r.end_lsn);
  }
}

BOOST_AUTO_TEST_CASE(SyncMethods_FsyncOpenDatasyncOpenSync_RoundTrip) {
  for (SyncMethod m : {SyncMethod::kFsync, SyncMethod::kOpenDatasync, SyncMethod::kOpenSync}) {
    BOOST_TEST_CONTEXT("sync_method " << to_string(m)) {
      TempDir d;
      cfg.sync_method = m;
      Appended a;
      std::uint64_t syncs = 0;
      {
        auto wal = Wal::open(d.path(), cfg);
        io_trace::start();
        for (std::size_t size : kSizeClasses) wal->writer().flush(a.add(wal->writer(), size));
        auto events = io_trace::stop();
        syncs = wal->writer().stats().syncs;
        if (m == SyncMethod::kFsync) check_sync_after_writes(events, d.path(), "fsync");
      }
      // open_datasync / open_sync: every write is durable when it returns; no separate sync.
      if (m == SyncMethod::kFsync) BOOST_TEST(syncs > 0u);
      else BOOST_TEST(syncs == 0u);
      a.check_read_back(d.path(), cfg);
    }
  }
}

BOOST_AUTO_TEST_CASE(Invariant3_PwriteFlushAcrossASegmentSwitch_FdatasyncFollowsEveryPwriteOfEachFile) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  while (w.insert_lsn() % kSegBytes < kSegBytes - 20000) w.append(seq_payload(1, 3000));
  w.flush(w.insert_lsn());
  io_trace::start();
  Lsn end = 0;
  for (int i = 0; i < 12; ++i) end = w.append(seq_payload(2 + i, 5000));  // into the next segment
  BOOST_REQUIRE(end / kSegBytes != w.flushed_lsn() / kSegBytes);
  w.flush(end);
  auto events = io_trace::stop();
  check_sync_after_writes(events, dir.path(), "fdatasync");
}

BOOST_AUTO_TEST_CASE(Invariant3_RingFullWriteOutsThenFlush_FdatasyncFollowsThem) {
  cfg.wal_buffers_bytes = 4 * kBlockBytes;
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  io_trace::start();
  Lsn end = 0;
  for (int i = 0; i < 100; ++i) end = w.append(seq_payload(i, 4000));
  BOOST_REQUIRE(w.stats().buffer_full_writes > 0u);
  w.flush(end);
  check_sync_after_writes(io_trace::stop(), dir.path(), "fdatasync");
}

BOOST_AUTO_TEST_SUITE_END()
