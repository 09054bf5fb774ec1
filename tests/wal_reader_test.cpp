#define BOOST_TEST_MODULE wal_reader
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/wal_reader.h. Each fixture writes encoded records into real,
// zero-filled 1 MB segment files in a temporary directory (wal_test_fixture.h), then edits
// bytes: zeroing a page (torn tail), renaming an old segment forward (recycled file), flipping
// a payload byte (bad CRC), rewriting xl_prev with a fixed CRC (broken chain). The reader must
// call the first two the end of WAL and the last two corruption, with file and offset.

#include <cerrno>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "wal_test_fixture.h"
#include "walseg/error.h"
#include "walseg/wal_format.h"
#include "walseg/wal_reader.h"

using namespace walseg;
using walseg::test::kOneMiB;
using walseg::test::payload_of;
using walseg::test::WalDir;

namespace {

constexpr std::uint64_t kBlock = 8192;
constexpr std::uint64_t kSysId = 7301234567890123456ull;

EncoderParams params() {
  EncoderParams p;
  p.segment_size_bytes = kOneMiB;
  p.system_id = kSysId;
  return p;
}

struct CollectingReporter : WalReporter {
  std::vector<WalStop> stops;
  void corruption(const WalStop& stop) override { stops.push_back(stop); }
};

struct ReadBack {
  std::vector<WalRecord> records;                // payload spans cleared
  std::vector<std::vector<std::byte>> payloads;  // copies
  WalStop stop;
};

ReadBack read_all(const std::string& dir, const WalReaderOptions& options = {}) {
  ReadBack r;
  WalReader reader = WalReader::open(dir, options);
  WalRecord rec;
  while (reader.next(&rec)) {
    r.payloads.emplace_back(rec.payload.begin(), rec.payload.end());
    rec.payload = {};
    r.records.push_back(rec);
  }
  r.stop = reader.stop();
  BOOST_TEST_MESSAGE("stop: " << describe(r.stop));
  return r;
}

bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}

// Rewrites the xl_prev of the one-page record at lsn and fixes its CRC, so that only the
// prev-link is wrong (LevelDB log_test's FixChecksum).
void set_prev_and_fix_crc(WalDir& d, Lsn lsn, Lsn prev) {
  const std::uint32_t total = load_le32(d.read(lsn, 4).data());
  std::vector<std::byte> rec = d.read(lsn, total);
  RecordHeader h = decode_record_header(rec.data());
  h.prev = prev;
  encode_record_header(h, rec.data());
  h.crc = record_crc(rec);
  encode_record_header(h, rec.data());
  d.write(lsn, rec.data(), kRecordHeaderBytes);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(round_trip)

BOOST_AUTO_TEST_CASE(EverySizeClassReadsBackWithLsnPrevInfoAndPayload) {
  WalDir d(params());
  d.append_size(0);
  d.append_size(1);
  d.append_size(255);  // largest short data header
  d.append_size(256);  // smallest long data header
  d.append_to_page_end();  // exactly fills its page
  d.append_to_page_end(8);  // leaves 8 bytes: the next record header is split over two pages
  d.append(payload_of(10, 99), 0x70);
  d.append_size(9000);  // spans two pages
  // Crosses into segment 2.
  d.append_size(2 * kOneMiB - d.insert_pos() + 100);
  d.append_size(1'500'000);  // larger than a segment
  d.append_size(3);
  const ReadBack r = read_all(d.path());
  BOOST_TEST_REQUIRE(r.records.size() == d.record_lsns().size());
  for (std::size_t i = 0; i < r.records.size(); ++i) {
    BOOST_TEST(r.records[i].lsn == d.record_lsns()[i]);
    BOOST_TEST(r.records[i].prev_lsn == (i == 0 ? 0 : d.record_lsns()[i - 1]));
    BOOST_TEST(r.records[i].rmid == kWalsegRmgrId);
  }
  BOOST_TEST(r.payloads[0].empty());
  BOOST_TEST(r.payloads[2].size() == 255u);
  BOOST_TEST((r.payloads[2] == payload_of(255, 2)));
  BOOST_TEST((r.payloads[3] == payload_of(256, 3)));
  BOOST_TEST(r.records[4].end_lsn % kBlock == 0u);  // filled its page exactly
  BOOST_TEST(r.records[6].lsn % kBlock == kBlock - 8);  // header split over pages
  BOOST_TEST(r.records[6].info == 0x70);
  BOOST_TEST((r.payloads[6] == payload_of(10, 99)));
  BOOST_TEST((r.payloads[9] == payload_of(1'500'000, 9)));
  BOOST_TEST(r.stop.end_lsn == d.insert_pos());
  BOOST_TEST(!r.stop.corruption);
  BOOST_TEST(contains(r.stop.reason, "invalid record length"));
  BOOST_TEST(contains(r.stop.reason, "got 0"));
}

BOOST_AUTO_TEST_CASE(FindEndOfWalReturnsNextInsertPositionAndLastRecord) {
  WalDir d(params());
  for (int i = 0; i < 300; ++i) d.append_size(static_cast<std::size_t>(i * 37 % 5000));
  const RecoveryResult r = find_end_of_wal(d.path());
  BOOST_TEST(r.records == 300u);
  BOOST_TEST(r.end_lsn == d.insert_pos());
  BOOST_TEST(r.last_record_lsn == d.last_record());
  BOOST_TEST(!r.corruption);
  BOOST_TEST(contains(r.stop_reason, "offset"));
}

BOOST_AUTO_TEST_CASE(ReaderLearnsSizesAndSystemIdFromTheFirstLongHeader) {
  WalDir d(params());
  d.append_size(10);
  WalReader reader = WalReader::open(d.path());
  BOOST_TEST(reader.segment_size_bytes() == kOneMiB);
  BOOST_TEST(reader.block_size_bytes() == kBlock);
  BOOST_TEST(reader.start_lsn() == kOneMiB);
  WalRecord rec;
  BOOST_TEST(reader.next(&rec));
  BOOST_TEST(reader.system_id().value_or(0) == kSysId);
}

BOOST_AUTO_TEST_CASE(LowestSegmentStartingWithAContinuationIsReadFromTheNextRecord) {
  WalDir d(params());
  d.append_size(100);
  d.append_size(2 * kOneMiB - d.insert_pos() + 5000);  // continues 5000+ bytes into segment 2
  const Lsn first_in_2 = d.append_size(7);
  d.append_size(8);
  d.remove(1);  // segment 1 removed after a checkpoint
  const ReadBack r = read_all(d.path());
  BOOST_TEST_REQUIRE(r.records.size() == 2u);
  BOOST_TEST(r.records[0].lsn == first_in_2);
  BOOST_TEST(r.stop.end_lsn == d.insert_pos());
}

BOOST_AUTO_TEST_CASE(SeekToARecordLsnReadsFromThatRecord) {
  WalDir d(params());
  for (int i = 0; i < 20; ++i) d.append_size(500);
  const RecoveryResult r = find_end_of_wal(d.path(), {}, d.record_lsns()[12]);
  BOOST_TEST(r.records == 8u);
  BOOST_TEST(r.end_lsn == d.insert_pos());
}

BOOST_AUTO_TEST_CASE(OneKilobytePagesRoundTripIncludingSplitHeaders) {
  EncoderParams p = params();
  p.block_size_bytes = 1024;
  WalDir d(p);
  for (int i = 0; i < 200; ++i) {
    if (i % 7 == 0) d.append_to_page_end(i % 2 == 0 ? 8 : 16);
    d.append_size(static_cast<std::size_t>(i * 53 % 3000));
  }
  const ReadBack r = read_all(d.path());
  BOOST_TEST(r.records.size() == d.record_lsns().size());
  BOOST_TEST(r.stop.end_lsn == d.insert_pos());
  BOOST_TEST(!r.stop.corruption);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- End of WAL: torn tails and recycled files are the end, never corruption. ----------------
BOOST_AUTO_TEST_SUITE(end_of_wal)

BOOST_AUTO_TEST_CASE(TornTailWithSecondPageUnwrittenEndsBeforeTheTornRecord) {
  WalDir d(params());
  for (int i = 0; i < 10; ++i) d.append_size(700);
  const Lsn torn = d.append_size(12000);  // spans into the next two pages
  const Lsn second_page = torn - torn % kBlock + kBlock;
  d.zero(second_page, 2 * kBlock);  // only its first page reached the disk
  CollectingReporter rep;
  WalReaderOptions o;
  o.reporter = &rep;
  const ReadBack r = read_all(d.path(), o);
  BOOST_TEST(r.records.size() == 10u);
  BOOST_TEST(r.stop.end_lsn == torn);
  BOOST_TEST(!r.stop.corruption);
  BOOST_TEST(rep.stops.empty());
  BOOST_TEST(contains(r.stop.reason, "zero page header"));
}

BOOST_AUTO_TEST_CASE(TornTailWithBadCrcInTheLastRecordIsEndNotCorruption) {
  WalDir d(params());
  for (int i = 0; i < 10; ++i) d.append_size(300);
  const Lsn last = d.append_size(300);
  d.flip(last + 200);  // a sector of the last record kept old bytes
  const RecoveryResult r = find_end_of_wal(d.path());
  BOOST_TEST(r.records == 10u);
  BOOST_TEST(r.end_lsn == last);
  BOOST_TEST(r.last_record_lsn == d.record_lsns()[9]);
  BOOST_TEST(!r.corruption);
  BOOST_TEST(contains(r.stop_reason, "checksum"));
}

BOOST_AUTO_TEST_CASE(MissingNextSegmentIsEnd) {
  WalDir d(params());
  d.append_size(100);
  const Lsn crossing = d.append_size(2 * kOneMiB - d.insert_pos() + 100);
  d.remove(2);  // the writer died before segment 2 was installed
  const RecoveryResult r = find_end_of_wal(d.path());
  BOOST_TEST(r.records == 1u);
  BOOST_TEST(r.end_lsn == crossing);
  BOOST_TEST(!r.corruption);
  BOOST_TEST(contains(r.stop_reason, "000000010000000000000002 does not exist"));
}

BOOST_AUTO_TEST_CASE(RecycledFileStalePageAfterLastRecordIsEnd) {
  WalDir d(params());
  while (d.insert_pos() < 4 * kOneMiB + 5000) d.append_size(6000);  // segments 1 to 4
  d.recycle(1, 5);  // segment 1's file becomes segment 5, keeping its pages
  while (d.insert_pos() < 5 * kOneMiB + 3 * kBlock) d.append_size(6000);  // 3 pages of seg 5
  d.append_to_page_end();  // the next page is still segment 1's
  const ReadBack r = read_all(d.path());
  BOOST_TEST(r.stop.end_lsn == d.insert_pos());
  BOOST_TEST(r.records.back().lsn == d.last_record());
  BOOST_TEST(!r.stop.corruption);
  BOOST_TEST(contains(r.stop.reason, "unexpected pageaddr 0/"));
  BOOST_TEST(contains(r.stop.reason, "left from an earlier use of the file"));
  BOOST_TEST(r.stop.path == d.segment_path(5));
}

BOOST_AUTO_TEST_CASE(RecycledFileStaleRecordsAfterLastRecordOnTheSamePageAreEnd) {
  WalDir d(params());
  while (d.insert_pos() < 4 * kOneMiB + 5000) d.append_size(100);
  d.recycle(1, 5);
  while (d.insert_pos() < 5 * kOneMiB + 3 * kBlock + 1000) d.append_size(100);
  // The page tail was not zeroed: segment 1's old records follow on the same page.
  const RecoveryResult r = find_end_of_wal(d.path());
  BOOST_TEST_MESSAGE(r.stop_reason);
  BOOST_TEST(contains(r.stop_reason, d.segment_path(5)));
  BOOST_TEST(r.end_lsn == d.insert_pos());
  BOOST_TEST(r.last_record_lsn == d.last_record());
  BOOST_TEST(!r.corruption);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- Error paths: damage before valid WAL is corruption, reported with file and offset. ----
BOOST_AUTO_TEST_SUITE(corruption)

BOOST_AUTO_TEST_CASE(BadCrcInTheMiddleIsReportedWithPathAndOffsetAndStopsThere) {
  WalDir d(params());
  for (int i = 0; i < 40; ++i) d.append_size(100);
  const Lsn bad = d.record_lsns()[10];
  d.flip(bad + 60);
  CollectingReporter rep;
  WalReaderOptions o;
  o.reporter = &rep;
  const RecoveryResult r = find_end_of_wal(d.path(), o);
  BOOST_TEST(r.records == 10u);
  BOOST_TEST(r.end_lsn == bad);
  BOOST_TEST(r.corruption);
  BOOST_TEST_REQUIRE(rep.stops.size() == 1u);
  const WalStop& s = rep.stops[0];
  BOOST_TEST(s.path == d.segment_path(1));
  BOOST_TEST(s.offset == bad - kOneMiB);
  BOOST_TEST(s.failed_lsn == bad);
  BOOST_TEST(s.reason ==
             fmt::format("incorrect resource manager data checksum in record at {}",
                         format_lsn(bad)));
  BOOST_TEST(contains(s.evidence, "links back"));
  BOOST_TEST(contains(r.stop_reason, fmt::format("offset {}", bad - kOneMiB)));
}

BOOST_AUTO_TEST_CASE(BrokenPrevLinkInTheMiddleIsCorruption) {
  WalDir d(params());
  for (int i = 0; i < 40; ++i) d.append_size(100);
  const Lsn bad = d.record_lsns()[20];
  set_prev_and_fix_crc(d, bad, d.record_lsns()[5]);
  CollectingReporter rep;
  WalReaderOptions o;
  o.reporter = &rep;
  const RecoveryResult r = find_end_of_wal(d.path(), o);
  BOOST_TEST(r.records == 20u);
  BOOST_TEST(r.corruption);
  BOOST_TEST_REQUIRE(rep.stops.size() == 1u);
  BOOST_TEST(rep.stops[0].reason ==
             fmt::format("record with incorrect prev-link {} at {}",
                         format_lsn(d.record_lsns()[5]), format_lsn(bad)));
  BOOST_TEST(rep.stops[0].offset == bad - kOneMiB);
}

BOOST_AUTO_TEST_CASE(ZeroedPageBeforeValidPagesIsCorruption) {
  WalDir d(params());
  for (int i = 0; i < 200; ++i) d.append_size(400);
  const Lsn page = kOneMiB + 4 * kBlock;
  d.zero(page, kBlock);
  CollectingReporter rep;
  WalReaderOptions o;
  o.reporter = &rep;
  const RecoveryResult r = find_end_of_wal(d.path(), o);
  BOOST_TEST(r.corruption);
  BOOST_TEST(r.end_lsn < page);
  BOOST_TEST_REQUIRE(rep.stops.size() == 1u);
  BOOST_TEST(rep.stops[0].offset == 4 * kBlock);
  BOOST_TEST(contains(rep.stops[0].reason, "zero page header"));
  BOOST_TEST(contains(rep.stops[0].evidence, "has a valid header"));
}

BOOST_AUTO_TEST_CASE(WrongContinuationLengthBeforeValidPagesIsCorruption) {
  WalDir d(params());
  for (int i = 0; i < 30; ++i) d.append_size(3000);
  const Lsn page = kOneMiB + 3 * kBlock;  // starts with the rest of a 3000-byte record
  d.poke(page + kPageRemLenOffset, std::byte{0x01});
  const RecoveryResult r = find_end_of_wal(d.path());
  BOOST_TEST(r.corruption);
  BOOST_TEST(r.end_lsn < page);
  BOOST_TEST(contains(r.stop_reason, "invalid contrecord length"));
  BOOST_TEST(contains(r.stop_reason, fmt::format("offset {}", 3 * kBlock)));
}

// The documented limit of look-ahead: a later page that reached the disk before an earlier
// one (a reordered, unacknowledged write) looks the same as damage, so it is reported.
BOOST_AUTO_TEST_CASE(LaterPageOnDiskBeforeAnEarlierOneIsReportedAsCorruption) {
  WalDir d(params());
  for (int i = 0; i < 10; ++i) d.append_size(700);
  const Lsn torn = d.append_size(12000);
  d.zero(torn - torn % kBlock + kBlock, kBlock);  // its second page missing, its third present
  const RecoveryResult r = find_end_of_wal(d.path());
  BOOST_TEST(r.records == 10u);
  BOOST_TEST(r.end_lsn == torn);
  BOOST_TEST(r.corruption);
}

// With a known durable LSN (walseg.control's) that alone decides: the same torn write is the
// end of WAL when it lies past the durable point (power-loss finding F1: a legal torn tail was
// reported as corruption), and damage below it is corruption even with nothing valid after.
BOOST_AUTO_TEST_CASE(KnownDurableLsn_ATornWritePastItIsTheEndAndDamageBeforeItIsCorruption) {
  WalDir d(params());
  for (int i = 0; i < 10; ++i) d.append_size(700);
  const Lsn torn = d.append_size(12000);
  d.zero(torn - torn % kBlock + kBlock, kBlock);  // its second page missing, its third present
  WalReaderOptions o;
  o.durable_lsn = torn;  // everything before the torn record was acknowledged
  RecoveryResult r = find_end_of_wal(d.path(), o);
  BOOST_TEST(r.records == 10u);
  BOOST_TEST(r.end_lsn == torn);
  BOOST_TEST(!r.corruption, r.stop_reason);
  o.durable_lsn = torn + 1;  // acknowledged past the stop: damage
  r = find_end_of_wal(d.path(), o);
  BOOST_TEST(r.corruption);
  BOOST_TEST(contains(r.stop_reason, "corruption"));
  // Damage before the durable point with nothing valid after it: still corruption.
  WalDir e(params());
  for (int i = 0; i < 10; ++i) e.append_size(700);
  const Lsn last = e.record_lsns().back();
  e.zero(last, 64);
  WalReaderOptions q;
  q.durable_lsn = e.insert_pos();
  r = find_end_of_wal(e.path(), q);
  BOOST_TEST(r.corruption);
  BOOST_TEST(contains(r.stop_reason, "acknowledged"), r.stop_reason);
}

// Invariant 5 for the same position: a record a torn write of an earlier life left where this
// life's records go on can be intact and even link back correctly, because the same records
// fall at the same LSNs. Its lower epoch (xl_xid) gives it away.
BOOST_AUTO_TEST_CASE(ARecordOfAnEarlierWriterAfterALaterOnesIsTheEndOfWal) {
  EncoderParams p = params();
  p.xid = 7;
  WalDir d(p);
  for (int i = 0; i < 5; ++i) d.append_size(300);
  const Lsn stale_at = d.insert_pos();
  // What the earlier life (epoch 6) wrote at the next position, chained to the record before.
  EncoderParams old = p;
  old.xid = 6;
  Lsn start = 0;
  encode_record(old, stale_at, d.last_record(), 0, walseg::test::payload_of(300, 99), d.sink(), &start);
  const RecoveryResult r = find_end_of_wal(d.path());
  BOOST_TEST(r.records == 5u);
  BOOST_TEST(r.end_lsn == stale_at);
  BOOST_TEST(r.last_xid == 7u);
  BOOST_TEST(contains(r.stop_reason, "written by an earlier writer (epoch 6 after 7)"), r.stop_reason);
  // The same record with the same epoch is read: only going back is refused.
  WalDir same(p);
  for (int i = 0; i < 5; ++i) same.append_size(300);
  encode_record(p, same.insert_pos(), same.last_record(), 0, walseg::test::payload_of(300, 99), same.sink(), &start);
  BOOST_TEST(find_end_of_wal(same.path()).records == 6u);
}

BOOST_AUTO_TEST_CASE(WrongSystemIdentifierStopsAtTheFirstPageNamingBothIds) {
  WalDir d(params());
  d.append_size(10);
  WalReaderOptions o;
  o.system_id = 42;
  const ReadBack r = read_all(d.path(), o);
  BOOST_TEST(r.records.empty());
  BOOST_TEST(contains(r.stop.reason, fmt::format("system identifier {}", kSysId)));
  BOOST_TEST(contains(r.stop.reason, "expected 42"));
}

BOOST_AUTO_TEST_CASE(SeekInsideAPageHeaderIsRejected) {
  WalDir d(params());
  d.append_size(10);
  WalReader reader = WalReader::open(d.path());
  BOOST_CHECK_EXCEPTION(reader.seek(kOneMiB + 16), Error,
                        [](const Error& e) { return e.errnum() == EINVAL; });
  BOOST_CHECK_EXCEPTION(reader.seek(kOneMiB + kBlock + 12), Error,
                        [](const Error& e) { return e.errnum() == EINVAL; });
}

BOOST_AUTO_TEST_CASE(DirectoryWithoutSegmentsNeedsSizesAndThenReadsNothing) {
  WalDir d(params());  // no segment written
  BOOST_CHECK_EXCEPTION(WalReader::open(d.path()), Error, [](const Error& e) {
    return e.errnum() == EINVAL && contains(e.what(), "no segment file of timeline 1");
  });
  WalReaderOptions o;
  o.segment_size_bytes = kOneMiB;
  o.block_size_bytes = 8192;
  const RecoveryResult r = find_end_of_wal(d.path(), o);
  BOOST_TEST(r.records == 0u);
  BOOST_TEST(r.end_lsn == 0u);
  BOOST_TEST(!r.corruption);
  BOOST_TEST(contains(r.stop_reason, "no WAL segment file of timeline 1"));
}

BOOST_AUTO_TEST_SUITE_END()
