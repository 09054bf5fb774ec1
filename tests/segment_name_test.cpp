#define BOOST_TEST_MODULE segment_name
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/segment_name.h: LSN arithmetic, segment file names, LSN text,
// temporary-file names and the strict classification of WAL directory entries (case C20).
// Expected names and numbers below are written out by hand (worked from the layout
// TTTTTTTTXXXXXXXXYYYYYYYY), not computed with the functions under test.

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "walseg/error.h"
#include "walseg/segment_name.h"

using namespace walseg;
using namespace std::string_view_literals;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t k16MiB = 16 * kMiB;
constexpr std::uint64_t k1GiB = 1024 * kMiB;

std::vector<std::uint64_t> all_segment_sizes() {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = kMinSegmentSizeBytes; s <= kMaxSegmentSizeBytes; s <<= 1)
    sizes.push_back(s);
  return sizes;
}

// True when `e` is EINVAL and its message contains `needle`.
auto einval_mentioning(std::string needle) {
  return [needle](const Error& e) {
    BOOST_TEST_MESSAGE(e.what());
    return e.errnum() == EINVAL && std::string(e.what()).find(needle) != std::string::npos;
  };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(arithmetic_and_names)

BOOST_AUTO_TEST_CASE(ValidSizesArePowersOfTwoFrom1MiBTo1GiB) {
  BOOST_TEST(all_segment_sizes().size() == 11u);
  for (auto s : all_segment_sizes()) BOOST_TEST(is_valid_segment_size(s));
  static_assert(is_valid_segment_size(16 * 1024 * 1024));
  static_assert(!is_valid_segment_size(3 * 1024 * 1024));
}

BOOST_AUTO_TEST_CASE(SegmentsPerXLogIdMatchPostgreSQL) {
  BOOST_TEST(segments_per_xlog_id(kMiB) == 4096u);
  BOOST_TEST(segments_per_xlog_id(k16MiB) == 256u);
  BOOST_TEST(segments_per_xlog_id(64 * kMiB) == 64u);
  BOOST_TEST(segments_per_xlog_id(k1GiB) == 4u);
  BOOST_TEST(max_segno(k16MiB) == 0xFFFFFFFFFFull);  // 2^40 - 1
  BOOST_TEST(max_segno(k1GiB) == 0x3FFFFFFFFull);    // 2^34 - 1
}

BOOST_AUTO_TEST_CASE(KnownValuesFor16MiBSegments) {
  BOOST_TEST(segno_of_lsn(0x1000000, k16MiB) == 1u);
  BOOST_TEST(segment_file_name(1, 1, k16MiB) == "000000010000000000000001");
  BOOST_TEST(segment_file_name(1, 0x100, k16MiB) == "000000010000000100000000");
  BOOST_TEST(segment_file_name(1, 0xFF, k16MiB) == "0000000100000000000000FF");
  // LSN 2/3456789A: segno 2 * 256 + 0x34 = 564, offset 0x56789A.
  const Lsn lsn = 0x23456789Aull;
  BOOST_TEST(segno_of_lsn(lsn, k16MiB) == 564u);
  BOOST_TEST(segment_offset(lsn, k16MiB) == 0x56789Au);
  BOOST_TEST(segment_file_name(1, 564, k16MiB) == "000000010000000200000034");
  BOOST_TEST(lsn_of_segment(564, 0x56789A, k16MiB) == lsn);
  BOOST_TEST(segno_of_lsn_end(0x1000000, k16MiB) == 0u);  // a record ending at 0/1000000
  BOOST_TEST(segno_of_lsn_end(0x1000001, k16MiB) == 1u);
  BOOST_TEST(segment_file_name(1, max_segno(k16MiB), k16MiB) == "00000001FFFFFFFF000000FF");
}

BOOST_AUTO_TEST_CASE(KnownValuesFor1GiBAnd1MiBSegments) {
  BOOST_TEST(segment_file_name(1, 5, k1GiB) == "000000010000000100000001");
  BOOST_TEST(segment_file_name(1, 3, k1GiB) == "000000010000000000000003");
  BOOST_TEST(lsn_of_segment(5, 0, k1GiB) == 0x140000000ull);
  BOOST_TEST(segment_file_name(1, 0xFFF, kMiB) == "000000010000000000000FFF");
  BOOST_TEST(segment_file_name(1, 0x1000, kMiB) == "000000010000000100000000");
  BOOST_TEST(segment_file_name(0xA, 2, kMiB) == "0000000A0000000000000002");
}

// For every size, names around each 4 GiB boundary parse back to the same segment, and the
// segment's first and last byte map back to it.
BOOST_AUTO_TEST_CASE(NamesAndLsnsRoundTripForEverySizeAcrossXLogIdBoundaries) {
  for (auto size : all_segment_sizes()) {
    BOOST_TEST_CONTEXT("segment size " << size) {
      const SegNo per = segments_per_xlog_id(size);
      const SegNo max = max_segno(size);
      const std::vector<SegNo> segnos = {0,       1,           per - 1,     per,     per + 1,
                                         2 * per - 1, 2 * per, 12345 * per + per / 2,
                                         max - 1, max};
      for (SegNo segno : segnos) {
        for (TimeLineId tli : {1u, 0xAu, 0xFFFFFFFFu}) {
          const std::string name = segment_file_name(tli, segno, size);
          BOOST_TEST(name.size() == 24u);
          const auto parsed = parse_segment_file_name(name, size);
          BOOST_TEST_REQUIRE(parsed.has_value());
          BOOST_TEST(parsed->timeline == tli);
          BOOST_TEST(parsed->segno == segno);
        }
        const Lsn start = lsn_of_segment(segno, 0, size);
        const Lsn last = lsn_of_segment(segno, size - 1, size);
        BOOST_TEST(segno_of_lsn(start, size) == segno);
        BOOST_TEST(segno_of_lsn(last, size) == segno);
        BOOST_TEST(segment_offset(last, size) == size - 1);
        if (segno != max) BOOST_TEST(segno_of_lsn_end(last + 1, size) == segno);  // no wrap
      }
      // LSN 1/0 starts xlogid 1 with low part 0 whatever the size.
      BOOST_TEST(segment_file_name(1, segno_of_lsn(0x100000000ull, size), size) ==
                 "000000010000000100000000");
      BOOST_TEST(segment_file_name(1, per - 1, size).substr(8, 8) == "00000000");
      BOOST_TEST(segment_file_name(1, max, size).substr(8, 8) == "FFFFFFFF");
    }
  }
}

// Case C33: a restore helper that computed the next names with 16 MB arithmetic asked for
// names that do not exist. Walking name -> parse -> segno + 1 -> name across the rollover of
// the middle 8 digits gives, for each size, exactly the consecutive names written out here
// (the low part runs to segments-per-4GiB - 1, then the middle part steps): none skipped,
// none invented, every one parsing back.
BOOST_AUTO_TEST_CASE(C33_next_name_walks_across_the_middle_digit_rollover_for_1MB_16MB_and_1GB) {
  struct Walk {
    std::uint64_t size;
    std::string first;
    std::vector<std::string> next;  // the names after `first`, in order
  };
  const std::vector<Walk> walks = {
      {kMiB, "000000010000000000000FFE",
       {"000000010000000000000FFF", "000000010000000100000000", "000000010000000100000001"}},
      {k16MiB, "0000000100000000000000FE",
       {"0000000100000000000000FF", "000000010000000100000000", "000000010000000100000001"}},
      {k1GiB, "000000010000000000000002",
       {"000000010000000000000003", "000000010000000100000000", "000000010000000100000001"}},
      {k1GiB, "00000001000000FF00000003", {"000000010000010000000000"}},
  };
  for (const Walk& w : walks) {
    BOOST_TEST_CONTEXT("segment size " << w.size << " from " << w.first) {
      std::string name = w.first;
      for (const std::string& want : w.next) {
        const auto parsed = parse_segment_file_name(name, w.size);
        BOOST_TEST_REQUIRE(parsed.has_value());
        name = segment_file_name(parsed->timeline, parsed->segno + 1, w.size);
        BOOST_TEST(name == want);
        // And back: the previous name is one segment, and segments-per-4GiB, before it.
        const auto back = parse_segment_file_name(name, w.size);
        BOOST_TEST_REQUIRE(back.has_value());
        BOOST_TEST(back->segno == parsed->segno + 1);
        BOOST_TEST(lsn_of_segment(back->segno, 0, w.size) == lsn_of_segment(parsed->segno, 0, w.size) + w.size);
      }
    }
  }
  // A name only another size can have is not taken for one of this size: 16 MB's low part
  // stops at FF, 1 GB's at 3.
  BOOST_TEST(!parse_segment_file_name("000000010000000000000100", k16MiB).has_value());
  BOOST_TEST(!parse_segment_file_name("000000010000000000000004", k1GiB).has_value());
  BOOST_TEST(parse_segment_file_name("000000010000000000000100", kMiB).has_value());
}

BOOST_AUTO_TEST_CASE(TimelineIsHexInNamesAndDecimalInMessages) {
  BOOST_TEST(timeline_hex(10) == "0000000A");
  BOOST_TEST(parse_timeline_hex("0000000A").value() == 10u);
  BOOST_TEST(fmt::format("timeline {}", *parse_timeline_hex("0000000A")) == "timeline 10");
  BOOST_TEST(parse_timeline_hex("00000010").value() == 16u);
  BOOST_TEST(parse_timeline_hex("FFFFFFFF").value() == 0xFFFFFFFFu);
  const auto seg = parse_segment_file_name("0000000A0000000000000002", k16MiB);
  BOOST_TEST(seg.value().timeline == 10u);
  for (TimeLineId tli : {1u, 9u, 10u, 15u, 16u, 255u, 0x7FFFFFFFu})
    BOOST_TEST(parse_timeline_hex(timeline_hex(tli)).value() == tli);
}

BOOST_AUTO_TEST_CASE(LsnTextMatchesPostgreSQLFormat) {
  BOOST_TEST(format_lsn(0) == "0/0");
  BOOST_TEST(format_lsn(0x1000000) == "0/1000000");
  BOOST_TEST(format_lsn(0x100000000ull) == "1/0");
  BOOST_TEST(format_lsn(0x16B374D848ull) == "16/B374D848");
  BOOST_TEST(format_lsn(~0ull) == "FFFFFFFF/FFFFFFFF");
  BOOST_TEST(parse_lsn("16/B374D848").value() == 0x16B374D848ull);
  BOOST_TEST(parse_lsn("16/b374d848").value() == 0x16B374D848ull);  // pg_lsn accepts either case
  BOOST_TEST(parse_lsn("0/01000000").value() == 0x1000000u);        // PostgreSQL 18 padding
  BOOST_TEST(parse_lsn("FFFFFFFF/FFFFFFFF").value() == ~0ull);
  for (Lsn lsn : {0ull, 1ull, 0xFFFFFFFFull, 0x100000000ull, 0xDEADBEEF12345678ull})
    BOOST_TEST(parse_lsn(format_lsn(lsn)).value() == lsn);
}

BOOST_AUTO_TEST_CASE(TempFileNamesUseThePostgreSQLPattern) {
  BOOST_TEST(temp_file_name(1234) == "xlogtemp.1234");
  BOOST_TEST(temp_file_name(1234, 7) == "xlogtemp.1234.7");
  BOOST_TEST(temp_file_name(1234, 0) == "xlogtemp.1234.0");
  BOOST_TEST((parse_temp_file_name("xlogtemp.1234").value() == TempFileName{1234, std::nullopt}));
  BOOST_TEST((parse_temp_file_name("xlogtemp.1234.7").value() == TempFileName{1234, 7}));
  BOOST_TEST((parse_temp_file_name("xlogtemp.4294967295.18446744073709551615").value() ==
              TempFileName{0xFFFFFFFFu, ~0ull}));
}

BOOST_AUTO_TEST_SUITE_END()

// C20: a WAL directory as found after years of PostgreSQL and tools; only strict names are
// segments, and every other entry gets its documented kind.
BOOST_AUTO_TEST_CASE(C20_DirectoryListingIsClassifiedStrictly) {
  struct Entry {
    std::string_view name;
    WalFileKind kind;
    TimeLineId timeline;
    SegNo segno;
  };
  const Entry listing[] = {
      {"000000010000000000000001", WalFileKind::kSegmentFile, 1, 1},
      {"00000001000000000000000a", WalFileKind::kForeign, 0, 0},     // lower case
      {"0000000A0000000000000002", WalFileKind::kSegmentFile, 10, 2},
      {"000000010000000000000100", WalFileKind::kForeign, 0, 0},     // low part 0x100 >= 256
      {"00000001000000000000000", WalFileKind::kForeign, 0, 0},      // 23 characters
      {"000000020000000000000003.partial", WalFileKind::kPartialFile, 2, 3},
      {"00000002.history", WalFileKind::kHistoryFile, 2, 0},
      {"000000010000000000000002.00000028.backup", WalFileKind::kBackupFile, 1, 2},
      {"xlogtemp.1234", WalFileKind::kTempFile, 0, 0},
      {"notes.txt", WalFileKind::kForeign, 0, 0},
  };
  int segments = 0;
  for (const auto& e : listing) {
    BOOST_TEST_CONTEXT(e.name) {
      const WalFileInfo info = classify_wal_file_name(e.name, k16MiB);
      BOOST_TEST(to_string(info.kind) == to_string(e.kind));
      BOOST_TEST(info.timeline == e.timeline);
      BOOST_TEST(info.segno == e.segno);
      BOOST_TEST(parse_segment_file_name(e.name, k16MiB).has_value() ==
                 (e.kind == WalFileKind::kSegmentFile));
      segments += info.kind == WalFileKind::kSegmentFile;
    }
  }
  BOOST_TEST(segments == 2);
  const auto backup = classify_wal_file_name("000000010000000000000002.00000028.backup", k16MiB);
  BOOST_TEST(backup.backup_offset == 0x28u);
  const auto temp = classify_wal_file_name("xlogtemp.1234", k16MiB);
  BOOST_TEST(temp.temp.value().pid == 1234u);
  // The out-of-range name is a valid segment for 1 MiB segments (4096 per xlogid).
  BOOST_TEST(classify_wal_file_name("000000010000000000000100", kMiB).segno == 0x100u);
}

// ---------------------------------------------------------------------------------------------
// Error paths and rejections: foreign names yield nullopt / kForeign, bad arguments throw
// EINVAL naming the bad value.
// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(error_paths)

BOOST_AUTO_TEST_CASE(StrictParseRejectsEveryNonCanonicalSegmentName) {
  const std::string_view bad[] = {
      "",
      "00000001000000000000000a",   // lower-case hex
      "0000000a0000000000000001",   // lower-case timeline
      "00000001000000000000000",    // 23 characters
      "0000000100000000000000010",  // 25 characters
      "000000000000000000000001",   // timeline 0
      "000000010000000000000100",   // low part 0x100, out of range for 16 MiB
      "0000000100000000000000G1",   // not hex
      " 00000010000000000000001",   // leading space
      "+00000010000000000000001",   // sign
      "0x000001000000000000000001",
      "000000010000000000000001\n",
      "00000001000000000000000\0"sv,  // embedded NUL
      "000000010000000000000001.partial",
  };
  for (auto name : bad) {
    BOOST_TEST_CONTEXT("name '" << name << "'") {
      BOOST_TEST(!parse_segment_file_name(name, k16MiB).has_value());
      BOOST_TEST(to_string(classify_wal_file_name(name, k16MiB).kind) !=
                 to_string(WalFileKind::kSegmentFile));
    }
  }
  // The low-part bound follows the size: 1 GiB has 4 segments per xlogid.
  BOOST_TEST(parse_segment_file_name("000000010000000000000003", k1GiB).has_value());
  BOOST_TEST(!parse_segment_file_name("000000010000000000000004", k1GiB).has_value());
  BOOST_TEST(!parse_timeline_hex("0000000a").has_value());
  BOOST_TEST(!parse_timeline_hex("00000000").has_value());
  BOOST_TEST(!parse_timeline_hex("A").has_value());
}

BOOST_AUTO_TEST_CASE(OtherWalNamesWithSloppySpellingAreForeign) {
  const std::string_view foreign[] = {
      "00000000.history",                            // timeline 0
      "0000000a.history",                            // lower case
      "00000002.HISTORY",
      "0000002.history",                             // 7 digits
      "000000020000000000000003.partial.gz",
      "000000020000000000000100.partial",            // segment part out of range
      "00000002000000000000000a.partial",
      "000000010000000000000002.01000000.backup",    // offset == segment size
      "000000010000000000000002.0000002.backup",     // 7-digit offset
      "000000010000000000000002.00000028.backup.1",
      "000000010000000000000002.00000028",
      "archive_status",
      "RECOVERYXLOG",
  };
  for (auto name : foreign) {
    BOOST_TEST_CONTEXT("name '" << name << "'") {
      BOOST_TEST(to_string(classify_wal_file_name(name, k16MiB).kind) ==
                 to_string(WalFileKind::kForeign));
    }
  }
}

BOOST_AUTO_TEST_CASE(TempMatcherRejectsOtherSpellings) {
  const std::string_view bad[] = {
      "xlogtemp.",           "xlogtemp",         "xlogtemp.01234",       "xlogtemp.12a",
      "xlogtemp.1.2.3",      "xlogtemp.1.",      "xlogtemp..1",          "xlogtemp.-1",
      "XLOGTEMP.1",          "xlogtemp.1234 ",   "xlogtemp.4294967296",  // pid > uint32
      "xlogtemp.1.18446744073709551616",  // counter > uint64
      "xlogtemp.1.01",       "walsegtemp.1",
  };
  for (auto name : bad) {
    BOOST_TEST_CONTEXT("name '" << name << "'") {
      BOOST_TEST(!parse_temp_file_name(name).has_value());
      BOOST_TEST(to_string(classify_wal_file_name(name, k16MiB).kind) ==
                 to_string(WalFileKind::kForeign));
    }
  }
}

BOOST_AUTO_TEST_CASE(LsnParseRejectsMalformedText) {
  const std::string_view bad[] = {"",      "/",     "0/",   "/0",         "0/0/0",
                                  " 0/0",  "0/0 ", "00",   "123456789/0", "0/123456789",
                                  "0x1/0", "-1/0", "G/0",  "1\0/0"sv};
  for (auto text : bad) {
    BOOST_TEST_CONTEXT("text '" << text << "'") { BOOST_TEST(!parse_lsn(text).has_value()); }
  }
}

BOOST_AUTO_TEST_CASE(InvalidSegmentSizesThrowNamingTheValue) {
  const std::uint64_t bad[] = {0, 3 * kMiB, 512 * 1024, 2 * k1GiB, kMiB - 1, kMiB + 1,
                               ~0ull};
  for (auto size : bad) {
    BOOST_TEST_CONTEXT("size " << size) {
      BOOST_TEST(!is_valid_segment_size(size));
      const auto pred = einval_mentioning(fmt::format("{} bytes", size));
      BOOST_CHECK_EXCEPTION(check_segment_size(size), Error, pred);
      BOOST_CHECK_EXCEPTION(segments_per_xlog_id(size), Error, pred);
      BOOST_CHECK_EXCEPTION(segno_of_lsn(0x1000000, size), Error, pred);
      BOOST_CHECK_EXCEPTION(segment_offset(0x1000000, size), Error, pred);
      BOOST_CHECK_EXCEPTION(lsn_of_segment(1, 0, size), Error, pred);
      BOOST_CHECK_EXCEPTION(segment_file_name(1, 1, size), Error, pred);
      BOOST_CHECK_EXCEPTION(parse_segment_file_name("000000010000000000000001", size), Error,
                            pred);
      BOOST_CHECK_EXCEPTION(classify_wal_file_name("notes.txt", size), Error, pred);
    }
  }
  BOOST_CHECK_EXCEPTION(check_segment_size(3 * kMiB), Error,
                        einval_mentioning("invalid WAL segment size 3145728 bytes"));
}

BOOST_AUTO_TEST_CASE(OutOfRangeArgumentsThrowInsteadOfWrapping) {
  BOOST_CHECK_EXCEPTION(segment_file_name(0, 1, k16MiB), Error,
                        einval_mentioning("invalid timeline 0"));
  BOOST_CHECK_EXCEPTION(segment_file_name(1, max_segno(k16MiB) + 1, k16MiB), Error,
                        einval_mentioning("invalid WAL segment number 1099511627776"));
  BOOST_CHECK_EXCEPTION(lsn_of_segment(max_segno(k1GiB) + 1, 0, k1GiB), Error,
                        einval_mentioning("17179869184"));
  BOOST_CHECK_EXCEPTION(lsn_of_segment(1, k16MiB, k16MiB), Error,
                        einval_mentioning("invalid offset 16777216 bytes"));
  BOOST_CHECK_EXCEPTION(segno_of_lsn_end(0, k16MiB), Error, einval_mentioning("0/0"));
}

BOOST_AUTO_TEST_SUITE_END()
