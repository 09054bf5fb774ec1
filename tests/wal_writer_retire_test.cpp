#define BOOST_TEST_MODULE wal_writer_retire
#include <boost/test/unit_test.hpp>

// Tests for WalWriter::truncate_before (the checkpoint hook) and what follows it: records
// written into recycled segments read back and no stale byte of a file's earlier life is ever
// returned (every page carries where it belongs), and a restart after every record start was retired goes on
// from the end of the WAL instead of starting it again (LSNs never go back).

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "wal_writer_fixture.h"
#include "walseg/segment_name.h"

using namespace walseg;
using namespace walseg_test;

BOOST_FIXTURE_TEST_SUITE(wal_writer_retire, WalWriterFixture)

BOOST_AUTO_TEST_CASE(Recycle_RecordsInRecycledSegments_ReadBackAndNoStaleByteIsReturned) {
  cfg.prealloc_segments = 0;  // the writer's next segments are the recycled ones
  std::uint64_t seq = 0;
  std::map<ino_t, std::string> old_inodes;
  Lsn end = 0;
  Lsn truncated_at = 0;
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    while (w.insert_lsn() < 4 * kSegBytes + kSegBytes / 3) end = w.append(seq_payload(seq++, 3000));
    w.flush(end);
    for (const auto& n : list_names(dir.path()))
      if (looks_like_segment_name(n)) old_inodes[stat_path(dir / n).st_ino] = n;
    truncated_at = w.flushed_lsn();
    w.truncate_before(truncated_at);  // segments 1..3 go (recycled forward)
    BOOST_TEST(wal->manager().stats().recycled >= 1u);
    // The highest file that is an old segment under a new name: write into its middle.
    SegNo last_recycled = 0;
    for (const auto& n : list_names(dir.path()))
      if (looks_like_segment_name(n) && old_inodes.count(stat_path(dir / n).st_ino) &&
          old_inodes[stat_path(dir / n).st_ino] != n)
        last_recycled = std::max<SegNo>(last_recycled, std::stoull(n.substr(16), nullptr, 16));
    BOOST_REQUIRE(last_recycled > 4);
    while (w.insert_lsn() < last_recycled * kSegBytes + kSegBytes / 2 + 1234)
      end = w.append(seq_payload(seq++, 3000));
    w.flush(end);
  }
  // The rest of the last page written holds zeros, not the old life's bytes.
  {
    std::string last = dir / segment_file_name(1, end / kSegBytes, kSegBytes);
    std::vector<char> bytes = read_all(last);
    const std::size_t from = end % kSegBytes;
    const std::size_t to = from + (kBlockBytes - from % kBlockBytes) % kBlockBytes;
    BOOST_TEST(std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(from),
                           bytes.begin() + static_cast<std::ptrdiff_t>(to), [](char c) { return c == 0; }));
  }
  WalContents got = read_wal(dir.path(), cfg);
  BOOST_TEST_MESSAGE("reader stopped: " << describe(got.stop));
  BOOST_TEST(!got.stop.corruption);
  BOOST_TEST(got.stop.end_lsn == end);
  BOOST_REQUIRE(!got.records.empty());
  BOOST_TEST(got.records.front().lsn / kSegBytes == truncated_at / kSegBytes);
  auto first = seq_of(got.records.front().payload);
  BOOST_REQUIRE(first);
  for (std::size_t i = 0; i < got.records.size(); ++i) {
    auto s = seq_of(got.records[i].payload);
    BOOST_REQUIRE_MESSAGE(s, "damaged record at " << format_lsn(got.records[i].lsn));
    BOOST_TEST(*s == *first + i);
  }
  BOOST_TEST(*first + got.records.size() == seq);
  // And the writer resumes there: a second recovery sees old and new records.
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_TEST(wal->recovery().end_lsn == end);
    for (int i = 0; i < 30; ++i) end = wal->writer().append(seq_payload(seq++, 3000));
    wal->writer().flush(end);
  }
  WalContents again = read_wal(dir.path(), cfg);
  BOOST_TEST(again.records.size() == got.records.size() + 30);
  BOOST_TEST(again.stop.end_lsn == end);
  BOOST_TEST(!again.stop.corruption);
}

BOOST_AUTO_TEST_CASE(Resume_AfterTruncateRetiredEveryRecordStart_WriterContinuesAtTheEndWithTheSameSystemId) {
  // The last record starts in segment 1 and ends in segment 2; truncate_before(flushed) retires
  // segment 1, so segment 2 holds only that record's continuation. Found by this test: Wal::open
  // then started a fresh WAL at 0/100000 with a new system identifier, reusing acknowledged LSNs.
  Appended a;
  std::uint64_t sys = 0;
  Lsn flushed = 0;
  {
    auto wal = Wal::open(dir.path(), cfg);
    sys = wal->system_id();
    while (wal->writer().insert_lsn() < 2 * kSegBytes - 20000) a.add(wal->writer(), 3000);
    wal->writer().flush(a.add(wal->writer(), 50000));
    flushed = wal->writer().flushed_lsn();
    BOOST_REQUIRE(flushed > 2 * kSegBytes);
    wal->writer().truncate_before(flushed);
  }
  Appended b;
  b.next_seq = 1000;
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_TEST(wal->recovery().records == 0u);
    BOOST_TEST(wal->writer().insert_lsn() == flushed);
    BOOST_TEST(wal->system_id() == sys);
    for (int i = 0; i < 3; ++i) b.add(wal->writer(), 100);
    wal->writer().flush(b.ends.back());
  }
  b.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_CASE(Resume_AfterTruncateAtASegmentBoundary_LsnsDoNotGoBack) {
  Appended a;
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_REQUIRE(fill_to(wal->writer(), a, 2 * kSegBytes));
    wal->writer().flush(a.ends.back());
    wal->writer().truncate_before(2 * kSegBytes);
  }
  Appended b;
  b.next_seq = 1000;
  {
    auto wal = Wal::open(dir.path(), cfg);
    BOOST_TEST(wal->writer().insert_lsn() >= 2 * kSegBytes);
    for (int i = 0; i < 3; ++i) b.add(wal->writer(), 100);
    wal->writer().flush(b.ends.back());
  }
  b.check_read_back(dir.path(), cfg);
}

BOOST_AUTO_TEST_SUITE_END()
