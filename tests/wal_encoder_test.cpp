#define BOOST_TEST_MODULE wal_encoder
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/wal_encoder.h. Positions below are worked out by hand from the
// layout (8 kB pages: 8152 bytes after a long header, 8168 after a short one), not computed
// with the functions under test. The last case hands a directory of encoded segments to
// PostgreSQL 15's own pg_waldump, an external check nobody here wrote.

#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "wal_test_fixture.h"
#include "walseg/error.h"
#include "walseg/wal_encoder.h"
#include "walseg/wal_format.h"

using namespace walseg;
using walseg::test::kOneMiB;
using walseg::test::payload_of;

namespace {

constexpr Lsn kStart16 = 0x1000000;  // segment 1 of 16 MB segments
constexpr Lsn kStart1 = 0x100000;    // segment 1 of 1 MB segments

EncoderParams params(std::uint64_t segment_size = 16 * kOneMiB) {
  EncoderParams p;
  p.segment_size_bytes = segment_size;
  p.system_id = 7301234567890123456ull;
  return p;
}

// Records every sink call.
struct Capture {
  struct Piece {
    Lsn lsn;
    std::vector<std::byte> bytes;
  };
  std::vector<Piece> pieces;
  WalSink sink() {
    return [this](Lsn lsn, const std::byte* d, std::size_t n) {
      pieces.push_back({lsn, std::vector<std::byte>(d, d + n)});
    };
  }
  // The piece that starts at lsn (a page header is always one piece).
  const Piece* at(Lsn lsn) const {
    for (const auto& p : pieces)
      if (p.lsn == lsn) return &p;
    return nullptr;
  }
};

auto einval_mentioning(std::string needle) {
  return [needle](const Error& e) {
    BOOST_TEST_MESSAGE(e.what());
    return e.errnum() == EINVAL && std::string(e.what()).find(needle) != std::string::npos;
  };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(layout)

BOOST_AUTO_TEST_CASE(FreshWalStartsAtSegmentOneAndFirstRecordFollowsLongHeader) {
  const EncoderParams p = params();
  BOOST_TEST(wal_start_lsn(p) == kStart16);
  Capture c;
  Lsn start = 0;
  const Lsn end = encode_record(p, kStart16, 0, 0, {}, c.sink(), &start);
  BOOST_TEST(start == 0x1000028u);
  BOOST_TEST(end == 0x1000040u);  // 0x28 + 24, already aligned
  BOOST_TEST_REQUIRE(c.pieces.size() == 2u);
  BOOST_TEST(c.pieces[0].lsn == kStart16);
  BOOST_TEST_REQUIRE(c.pieces[0].bytes.size() == kLongPageHeaderBytes);
  const PageHeader h = decode_page_header(c.pieces[0].bytes.data());
  BOOST_TEST(h.magic == kWalPageMagic);
  BOOST_TEST(h.info == kPageLongHeader);
  BOOST_TEST(h.timeline == 1u);
  BOOST_TEST(h.page_addr == kStart16);
  BOOST_TEST(h.rem_len == 0u);
  BOOST_TEST(h.system_id == p.system_id);
  BOOST_TEST(h.segment_size_bytes == 16 * kOneMiB);
  BOOST_TEST(h.block_size_bytes == 8192u);
  const RecordHeader r = decode_record_header(c.pieces[1].bytes.data());
  BOOST_TEST(r.total_len == 24u);
  BOOST_TEST(r.prev == 0u);
  BOOST_TEST(r.rmid == kWalsegRmgrId);
  BOOST_TEST(r.crc == record_crc(c.pieces[1].bytes));
}

BOOST_AUTO_TEST_CASE(SinkCoversEveryByteInOrderAndNeverCrossesAPage) {
  const EncoderParams p = params(kOneMiB);
  Lsn pos = kStart1;
  Lsn prev = 0;
  const std::size_t sizes[] = {0, 1, 7, 255, 256, 8000, 8123, 8192, 20000, 70000, 1500000, 3};
  for (std::size_t size : sizes) {
    Capture c;
    Lsn start = 0;
    Lsn reserved_start = 0;
    const Lsn reserved_end = reserve_record(p, pos, size, &reserved_start);
    const Lsn end = encode_record(p, pos, prev, 0x10, payload_of(size, size), c.sink(), &start);
    BOOST_TEST(end == reserved_end);
    BOOST_TEST(start == reserved_start);
    BOOST_TEST(end % 8 == 0u);
    Lsn expect = pos;
    for (const auto& piece : c.pieces) {
      BOOST_TEST(piece.lsn == expect);
      BOOST_TEST(piece.lsn / 8192 == (piece.lsn + piece.bytes.size() - 1) / 8192);
      expect += piece.bytes.size();
    }
    BOOST_TEST(expect == end);
    prev = start;
    pos = end;
  }
}

BOOST_AUTO_TEST_CASE(RecordFillingItsPageEndsAtTheBoundaryAndNextPageHasNoContinuation) {
  const EncoderParams p = params();
  // 8192 - 40 = 8152 bytes after the long header; 24 + 5 + 8123 = 8152.
  Capture c;
  Lsn start = 0;
  const Lsn end = encode_record(p, kStart16, 0, 0, payload_of(8123, 1), c.sink(), &start);
  BOOST_TEST(end == kStart16 + 8192);
  BOOST_TEST(c.at(kStart16 + 8192) == nullptr);  // the next page's header is not written yet
  Capture next;
  Lsn second = 0;
  BOOST_TEST(encode_record(p, end, start, 0, payload_of(1, 2), next.sink(), &second) ==
             kStart16 + 8192 + 24 + 32);  // 24 + 2 + 1 = 27 -> 32
  BOOST_TEST(second == kStart16 + 8192 + 24);
  const PageHeader h = decode_page_header(next.pieces.at(0).bytes.data());
  BOOST_TEST(next.pieces.at(0).bytes.size() == kShortPageHeaderBytes);
  BOOST_TEST(h.info == 0u);
  BOOST_TEST(h.rem_len == 0u);
  BOOST_TEST(h.page_addr == kStart16 + 8192);
}

BOOST_AUTO_TEST_CASE(RecordSpanningPagesCarriesRemainingLengthOnEachPage) {
  const EncoderParams p = params();
  // tot_len = 24 + 5 + 20000 = 20029: 8152 on page 0, 8168 on page 1, 3709 on page 2.
  Capture c;
  const Lsn end = encode_record(p, kStart16, 0, 0, payload_of(20000, 3), c.sink(), nullptr);
  const auto* p1 = c.at(kStart16 + 8192);
  const auto* p2 = c.at(kStart16 + 16384);
  BOOST_TEST_REQUIRE((p1 && p2));
  const PageHeader h1 = decode_page_header(p1->bytes.data());
  const PageHeader h2 = decode_page_header(p2->bytes.data());
  BOOST_TEST(h1.info == kPageFirstIsContRecord);
  BOOST_TEST(h1.rem_len == 20029u - 8152u);
  BOOST_TEST(h2.info == kPageFirstIsContRecord);
  BOOST_TEST(h2.rem_len == 3709u);
  BOOST_TEST(end == kStart16 + 16384 + 24 + wal_align(3709));
}

BOOST_AUTO_TEST_CASE(RecordHeaderSplitOverTwoPagesCountsHeaderBytesInRemLen) {
  const EncoderParams p = params();
  const Lsn pos = kStart16 + 2 * 8192 - 8;  // 8 bytes left on page 1
  Capture c;
  Lsn start = 0;
  const Lsn end = encode_record(p, pos, kStart16 + 40, 0, payload_of(10, 4), c.sink(), &start);
  BOOST_TEST(start == pos);
  BOOST_TEST(c.pieces.at(0).bytes.size() == 8u);  // xl_tot_len and xl_xid
  const auto* next = c.at(kStart16 + 2 * 8192);
  BOOST_TEST_REQUIRE(next);
  const PageHeader h = decode_page_header(next->bytes.data());
  BOOST_TEST(h.rem_len == 24u + 2 + 10 - 8);  // 28: rest of the header, data header, payload
  BOOST_TEST(h.info == kPageFirstIsContRecord);
  BOOST_TEST(end == kStart16 + 2 * 8192 + 24 + 32);
}

BOOST_AUTO_TEST_CASE(RecordCrossingSegmentContinuesUnderLongHeader) {
  const EncoderParams p = params(kOneMiB);
  const Lsn pos = 2 * kOneMiB - 16;  // last 16 bytes of segment 1
  Capture c;
  encode_record(p, pos, kStart1 + 40, 0, payload_of(100, 5), c.sink(), nullptr);
  const auto* first = c.at(2 * kOneMiB);
  BOOST_TEST_REQUIRE(first);
  BOOST_TEST(first->bytes.size() == kLongPageHeaderBytes);
  const PageHeader h = decode_page_header(first->bytes.data());
  BOOST_TEST(h.info == (kPageLongHeader | kPageFirstIsContRecord));
  BOOST_TEST(h.rem_len == 24u + 2 + 100 - 16);
  BOOST_TEST(h.segment_size_bytes == kOneMiB);
}

BOOST_AUTO_TEST_CASE(RecordLargerThanASegmentGetsALongHeaderInEverySegmentItCrosses) {
  const EncoderParams p = params(kOneMiB);
  Capture c;
  const Lsn end = encode_record(p, kStart1, 0, 0, payload_of(2'500'000, 6), c.sink(), nullptr);
  BOOST_TEST(end > 3 * kOneMiB);
  BOOST_TEST(end < 4 * kOneMiB);
  for (Lsn seg = 2 * kOneMiB; seg <= 3 * kOneMiB; seg += kOneMiB) {
    const auto* piece = c.at(seg);
    BOOST_TEST_REQUIRE(piece);
    BOOST_TEST(decode_page_header(piece->bytes.data()).is_long());
  }
}

BOOST_AUTO_TEST_CASE(PageTailIsZerosToThePageEndAndPageBoundaryIsLeftAlone) {
  const EncoderParams p = params();
  Capture c;
  BOOST_TEST(encode_page_tail(p, kStart16 + 64, c.sink()) == kStart16 + 8192);
  std::size_t total = 0;
  for (const auto& piece : c.pieces) {
    total += piece.bytes.size();
    for (auto b : piece.bytes) BOOST_TEST(std::to_integer<int>(b) == 0);
  }
  BOOST_TEST(total == 8192u - 64);
  Capture none;
  BOOST_TEST(encode_page_tail(p, kStart16 + 8192, none.sink()) == kStart16 + 8192);
  BOOST_TEST(none.pieces.empty());
}

BOOST_AUTO_TEST_SUITE_END()

// ---- Error paths: each checks the outcome (EINVAL, nothing emitted) and the reason. -------
BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(InsertPositionInsideAPageHeaderIsRejectedBeforeAnythingIsEmitted) {
  Capture c;
  BOOST_CHECK_EXCEPTION(encode_record(params(), kStart16 + 8, 0, 0, {}, c.sink(), nullptr), Error,
                        einval_mentioning("invalid WAL insert position 0/1000008"));
  BOOST_CHECK_EXCEPTION(encode_record(params(), kStart16 + 8192 + 16, 0, 0, {}, c.sink(), nullptr),
                        Error, einval_mentioning("after the page header"));
  BOOST_TEST(c.pieces.empty());
}

BOOST_AUTO_TEST_CASE(UnalignedInsertPositionIsRejected) {
  Capture c;
  BOOST_CHECK_EXCEPTION(encode_record(params(), kStart16 + 44, 0, 0, {}, c.sink(), nullptr), Error,
                        einval_mentioning("multiple of 8"));
  BOOST_TEST(!is_valid_insert_position(params(), kStart16 + 44));
  BOOST_TEST(is_valid_insert_position(params(), kStart16 + 40));
  BOOST_TEST(is_valid_insert_position(params(), kStart16 + 8192));
}

BOOST_AUTO_TEST_CASE(ReservedInfoBitsAreRejected) {
  Capture c;
  BOOST_CHECK_EXCEPTION(encode_record(params(), kStart16, 0, 0x01, {}, c.sink(), nullptr), Error,
                        einval_mentioning("reserved bits"));
  BOOST_TEST(c.pieces.empty());
}

BOOST_AUTO_TEST_CASE(PreviousRecordNotBeforeTheNewOneIsRejected) {
  Capture c;
  BOOST_CHECK_EXCEPTION(encode_record(params(), kStart16, kStart16 + 40, 0, {}, c.sink(), nullptr),
                        Error, einval_mentioning("is not before the new record at 0/1000028"));
  BOOST_TEST(c.pieces.empty());
}

BOOST_AUTO_TEST_CASE(PayloadAboveTheMaximumIsRejected) {
  BOOST_CHECK_EXCEPTION(reserve_record(params(), kStart16, kMaxRecordPayloadBytes + 1, nullptr),
                        Error, einval_mentioning("exceeds the maximum"));
  BOOST_TEST(reserve_record(params(), kStart16, kMaxRecordPayloadBytes, nullptr) > kStart16);
}

BOOST_AUTO_TEST_CASE(InvalidBlockSizeTimelineOrSegmentSizeIsRejected) {
  EncoderParams p = params();
  p.block_size_bytes = 3000;
  BOOST_CHECK_EXCEPTION(check_encoder_params(p), Error, einval_mentioning("block size 3000"));
  p = params();
  p.timeline = 0;
  BOOST_CHECK_EXCEPTION(check_encoder_params(p), Error, einval_mentioning("timeline 0"));
  p = params(3 * kOneMiB);
  BOOST_CHECK_THROW(wal_start_lsn(p), Error);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- External check: PostgreSQL 15's pg_waldump ----------------------------------------
BOOST_AUTO_TEST_SUITE(pg_waldump)

namespace {

constexpr const char* kPgWaldump = "/usr/lib/postgresql/15/bin/pg_waldump";

struct RunResult {
  int exit_status = -1;
  std::string out;
  std::string err;
};

RunResult run(const std::string& command, const std::string& err_path) {
  RunResult r;
  FILE* f = ::popen((command + " 2>" + err_path).c_str(), "r");
  BOOST_TEST_REQUIRE(f != nullptr);
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  const int status = ::pclose(f);
  r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_path);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  return r;
}

std::vector<std::string> record_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("rmgr: ", 0) == 0) lines.push_back(line);
  return lines;
}

std::string pg_lsn(Lsn lsn) {  // pg_waldump's "%X/%08X"
  return fmt::format("{:X}/{:08X}", lsn >> 32, lsn & 0xFFFFFFFFu);
}

}  // namespace

BOOST_AUTO_TEST_CASE(PgWaldump15ReadsEveryRecordOverFiveSegmentsWithoutError) {
  if (::access(kPgWaldump, X_OK) != 0) {
    BOOST_TEST_MESSAGE("pg_waldump 15 is not installed; skipping the external check");
    return;
  }
  test::WalDir dir(params(kOneMiB));
  // Every size class: empty, short data header limits, long, a page and more, and one record
  // larger than a segment.
  const std::size_t sizes[] = {0, 1, 255, 256, 8123, 20000, 3000, 100};
  for (int i = 0; i < 1000; ++i) dir.append_size(i == 500 ? 1'500'000 : sizes[i % 8]);
  BOOST_TEST(dir.insert_pos() > 5 * kOneMiB);  // segments 1..5 (and into 6)

  const std::string err_path = dir.path() + ".stderr";
  const RunResult r = run(fmt::format("{} -p {} -t 1 -s {} -e {}", kPgWaldump, dir.path(),
                                      format_lsn(dir.record_lsns().front()),
                                      format_lsn(dir.insert_pos())),
                          err_path);
  BOOST_TEST(r.exit_status == 0);
  BOOST_TEST(r.err == "");
  const auto lines = record_lines(r.out);
  BOOST_TEST_REQUIRE(lines.size() == 1000u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Lsn prev = i == 0 ? 0 : dir.record_lsns()[i - 1];
    const std::string want = fmt::format("lsn: {}, prev {}", pg_lsn(dir.record_lsns()[i]),
                                         pg_lsn(prev));
    BOOST_TEST(lines[i].find(want) != std::string::npos, lines[i] << " lacks " << want);
    BOOST_TEST(lines[i].find("rmgr: custom128") != std::string::npos);
  }

  // Given whole segment files, pg_waldump reads on into the zeros after the last record and
  // reports PostgreSQL 15's normal end of WAL, "invalid record length ...: wanted 24, got 0",
  // as an error (exit status 1). That, and only that, is expected.
  const SegNo last = dir.insert_pos() / kOneMiB;
  const RunResult whole = run(fmt::format("{} -p {} -t 1 {} {}", kPgWaldump, dir.path(),
                                          segment_file_name(1, 1, kOneMiB),
                                          segment_file_name(1, last, kOneMiB)),
                              err_path);
  BOOST_TEST(record_lines(whole.out).size() == 1000u);
  BOOST_TEST(whole.exit_status == 1);
  BOOST_TEST(whole.err ==
             fmt::format("pg_waldump: error: error in WAL record at {}: invalid record length "
                         "at {}: wanted 24, got 0\n",
                         format_lsn(dir.last_record()), format_lsn(dir.insert_pos())));
  std::remove(err_path.c_str());
}

// doc/wal_format.md's walk-through is made by the encoder alone (walseg write writes its writer
// epoch into xl_xid, xl_info 0 and tagged payloads under a random system identifier), so this
// case is what reproduces it: the same two records, the bytes the page shows, and, where
// PostgreSQL 15 is installed, pg_waldump's two lines as printed there.
BOOST_AUTO_TEST_CASE(WalkThroughOfTheFormatDoc_HasTheBytesAndPgWaldumpLinesShownThere) {
  test::WalDir dir(params());
  const std::string hello = "hello";
  dir.append(std::as_bytes(std::span(hello.data(), hello.size())), 0x10);
  dir.append(payload_of(20000, 1), 0x10);
  BOOST_TEST(dir.record_lsns()[0] == 0x1000028u);
  BOOST_TEST(dir.record_lsns()[1] == 0x1000048u);
  BOOST_TEST(dir.insert_pos() == 0x1004EB8u);
  auto hex = [&](Lsn lsn, std::size_t n) {
    std::string out;
    for (std::byte b : dir.read(lsn, n)) out += fmt::format("{:02X} ", static_cast<unsigned>(b));
    if (!out.empty()) out.pop_back();
    return out;
  };
  BOOST_TEST(hex(0x1000000, 40) ==
             "10 D1 02 00 01 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 "
             "C0 BA E4 E8 27 32 53 65 00 00 00 01 00 20 00 00");
  BOOST_TEST(hex(0x1000028, 32) ==
             "1F 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 10 80 00 00 2B C3 C8 07 "
             "FF 05 68 65 6C 6C 6F 00");
  BOOST_TEST(hex(0x1000048, 4) == "3D 4E 00 00");
  BOOST_TEST(hex(0x1002000, 20) == "10 D1 01 00 01 00 00 00 00 20 00 01 00 00 00 00 85 2E 00 00");
  BOOST_TEST(hex(0x1004000, 20) == "10 D1 01 00 01 00 00 00 00 40 00 01 00 00 00 00 9D 0E 00 00");
  if (::access(kPgWaldump, X_OK) != 0) {
    BOOST_TEST_MESSAGE("pg_waldump 15 is not installed; skipping its lines");
    return;
  }
  const std::string err_path = dir.path() + ".stderr";
  const RunResult r = run(fmt::format("{} -p {} -t 1 -s 0/1000028 -e 0/1004EB8", kPgWaldump, dir.path()), err_path);
  std::remove(err_path.c_str());
  BOOST_TEST(r.exit_status == 0);
  BOOST_TEST(r.err == "");
  const auto lines = record_lines(r.out);
  BOOST_TEST_REQUIRE(lines.size() == 2u);
  BOOST_TEST(lines[0] == "rmgr: custom128   len (rec/tot):     31/    31, tx:          0, lsn: 0/01000028, "
                         "prev 0/00000000, desc: UNKNOWN (10) rmid: 128");
  BOOST_TEST(lines[1] == "rmgr: custom128   len (rec/tot):  20029/ 20029, tx:          0, lsn: 0/01000048, "
                         "prev 0/01000028, desc: UNKNOWN (10) rmid: 128");
}

BOOST_AUTO_TEST_SUITE_END()
