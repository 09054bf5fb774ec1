#define BOOST_TEST_MODULE wal_reader_find
#include <boost/test/unit_test.hpp>

// Tests for WalReader::find_next_record (include/walseg/wal_reader.h), PostgreSQL's
// XLogFindNextRecord: from any position, the reader starts at the first record that begins at
// or after it, whether the position is a record's start, inside a record, inside a page header,
// on a page whose first bytes continue a record, or deep inside a record spanning pages; past
// the end of WAL it finds nothing and stops as next() would, at the end and not on corruption.
// The WAL is written by the encoder into real segment files (wal_test_fixture.h).

#include <string>
#include <vector>

#include "wal_test_fixture.h"
#include "walseg/wal_format.h"
#include "walseg/wal_reader.h"

using namespace walseg;
using walseg::test::kOneMiB;
using walseg::test::WalDir;

namespace {

constexpr std::uint64_t kBlock = 8192;

EncoderParams params() {
  EncoderParams p;
  p.segment_size_bytes = kOneMiB;
  p.system_id = 42;
  return p;
}

// The LSNs the reader returns from `from` on, and whether it ended without corruption.
struct Found {
  std::optional<Lsn> first;
  std::vector<Lsn> lsns;
  bool clean_end = false;
};

Found find_from(const WalDir& d, Lsn from) {
  WalReader reader = WalReader::open(d.path());
  Found f;
  f.first = reader.find_next_record(from);
  WalRecord rec;
  while (reader.next(&rec)) f.lsns.push_back(rec.lsn);
  f.clean_end = !reader.stop().corruption && reader.stop().end_lsn == d.insert_pos();
  return f;
}

// The records of `d` from the first one whose LSN is at least `from`.
std::vector<Lsn> expected_from(const WalDir& d, Lsn from) {
  std::vector<Lsn> out;
  for (Lsn l : d.record_lsns())
    if (l >= from) out.push_back(l);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(find_next_record)

BOOST_AUTO_TEST_CASE(FromInsideRecordsAndPageHeaders_TheFirstRecordAtOrAfterIsRead) {
  WalDir d(params());
  d.append_size(100);
  const Lsn big = d.append_size(5 * kBlock);  // spans six pages: whole pages of continuation
  for (int i = 0; i < 500; ++i) d.append_size(static_cast<std::size_t>(i * 97 % 700));
  const Lsn big_page3 = big - big % kBlock + 3 * kBlock;
  const std::vector<Lsn> positions = {
      d.record_lsns()[0],      // a record's own LSN
      d.record_lsns()[0] + 8,  // inside a record header
      big + 100,               // inside a record's first page
      big_page3,               // a page boundary with the continuation filling the page
      big_page3 + 16,          // inside that page's header
      big_page3 + 1000,        // inside the continuation
      kOneMiB + 20 * kBlock + 4,  // inside a short page header, further on
      kOneMiB + 8,                // inside the segment's long page header
  };
  for (Lsn from : positions) {
    BOOST_TEST_CONTEXT("from " << format_lsn(from)) {
      const std::vector<Lsn> want = expected_from(d, from);
      BOOST_TEST_REQUIRE(!want.empty());
      const Found f = find_from(d, from);
      BOOST_TEST(f.first.value_or(0) == want.front());
      BOOST_TEST((f.lsns == want));
      BOOST_TEST(f.clean_end);
    }
  }
}

BOOST_AUTO_TEST_CASE(FromAPageWhoseContinuationEndsOnIt_TheRecordAfterItIsRead) {
  EncoderParams p = params();
  p.block_size_bytes = 1024;
  WalDir d(p);
  for (int i = 0; i < 300; ++i) d.append_size(static_cast<std::size_t>(i * 53 % 3000));
  for (Lsn from = kOneMiB + 1024; from < kOneMiB + 40 * 1024; from += 1024 + 200) {
    BOOST_TEST_CONTEXT("from " << format_lsn(from)) {
      const Found f = find_from(d, from);
      BOOST_TEST((f.lsns == expected_from(d, from)));
      BOOST_TEST(f.clean_end);
    }
  }
}

BOOST_AUTO_TEST_CASE(PastTheEndOfWal_FindsNothingAndStopsCleanly) {
  WalDir d(params());
  for (int i = 0; i < 20; ++i) d.append_size(300);
  WalReader reader = WalReader::open(d.path());
  BOOST_TEST(!reader.find_next_record(d.insert_pos() + 8).has_value());
  WalRecord rec;
  BOOST_TEST(!reader.next(&rec));
  BOOST_TEST(!reader.stop().corruption);
  BOOST_TEST(reader.stop().end_lsn == d.insert_pos());
}

BOOST_AUTO_TEST_CASE(DamageBeforeThePositionIsReachedStopsThereAsCorruption) {
  WalDir d(params());
  for (int i = 0; i < 40; ++i) d.append_size(100);
  const Lsn bad = d.record_lsns()[10];
  d.flip(bad + 60);
  WalReader reader = WalReader::open(d.path());
  BOOST_TEST(!reader.find_next_record(d.record_lsns()[20] + 8).has_value());
  WalRecord rec;
  BOOST_TEST(!reader.next(&rec));
  BOOST_TEST(reader.stop().corruption);
  BOOST_TEST(reader.stop().failed_lsn == bad);
}

BOOST_AUTO_TEST_SUITE_END()
