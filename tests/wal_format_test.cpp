#define BOOST_TEST_MODULE wal_format
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/wal_format.h: sizes and offsets against PostgreSQL 15's headers
// (numbers written out by hand from xlog_internal.h / xlogrecord.h), the CRC-32C test vector,
// and the header codecs against hand-written bytes.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "walseg/wal_format.h"

using namespace walseg;

namespace {

std::span<const std::byte> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

template <std::size_t N>
std::array<std::byte, N> hex_bytes(const std::array<unsigned, N>& v) {
  std::array<std::byte, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = static_cast<std::byte>(v[i]);
  return out;
}

// The long header of the first page of segment 1 (16MB segments, 8kB pages) of system `sysid`.
PageHeader first_page_header(std::uint64_t sysid) {
  PageHeader h;
  h.info = kPageLongHeader;
  h.timeline = 1;
  h.page_addr = 0x1000000;
  h.system_id = sysid;
  h.segment_size_bytes = 16u << 20;
  h.block_size_bytes = 8192;
  return h;
}

}  // namespace

BOOST_AUTO_TEST_CASE(SizesAndOffsetsMatchPostgreSQL15) {
  BOOST_TEST(kWalPageMagic == 0xD110);
  BOOST_TEST(kShortPageHeaderBytes == 24u);
  BOOST_TEST(kLongPageHeaderBytes == 40u);
  BOOST_TEST(kPageRemLenOffset == 16u);
  BOOST_TEST(kPageSysIdOffset == 24u);
  BOOST_TEST(kPageSegSizeOffset == 32u);
  BOOST_TEST(kPageBlockSizeOffset == 36u);
  BOOST_TEST(kRecordHeaderBytes == 24u);
  BOOST_TEST(kRecordPrevOffset == 8u);
  BOOST_TEST(kRecordInfoOffset == 16u);
  BOOST_TEST(kRecordRmidOffset == 17u);
  BOOST_TEST(kRecordCrcOffset == 20u);
  BOOST_TEST(kPageAllFlags == 0x000F);
  BOOST_TEST(kWalsegRmgrId == 128);
  BOOST_TEST(data_header_bytes(0) == 0u);
  BOOST_TEST(data_header_bytes(1) == 2u);
  BOOST_TEST(data_header_bytes(255) == 2u);
  BOOST_TEST(data_header_bytes(256) == 5u);
  BOOST_TEST(wal_align(25) == 32u);
  BOOST_TEST(wal_align(24) == 24u);
}

BOOST_AUTO_TEST_CASE(Crc32cOfCheckStringIsTheStandardVector) {
  BOOST_TEST(crc32c(bytes_of("123456789")) == 0xE3069283u);
  BOOST_TEST(crc32c({}) == 0u);
  // Updating in pieces gives the same result as one pass.
  std::uint32_t s = crc32c_update(kCrc32cInit, bytes_of("1234"));
  s = crc32c_update(s, bytes_of("56789"));
  BOOST_TEST(crc32c_finish(s) == 0xE3069283u);
}

BOOST_AUTO_TEST_CASE(LongPageHeaderEncodesToPostgreSQLBytes) {
  const PageHeader h = first_page_header(0x0102030405060708ull);
  std::array<std::byte, kLongPageHeaderBytes> out{};
  BOOST_TEST(encode_page_header(h, out.data()) == 40u);
  const auto expected = hex_bytes<40>({
      0x10, 0xD1, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00,  // magic, info, tli
      0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,  // pageaddr 0/1000000
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // rem_len, padding
      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // sysid
      0x00, 0x00, 0x00, 0x01, 0x00, 0x20, 0x00, 0x00,  // seg_size 16 MB, blcksz 8192
  });
  BOOST_TEST(std::memcmp(out.data(), expected.data(), 40) == 0);
  const PageHeader back = decode_page_header(out.data());
  BOOST_TEST(back.is_long());
  BOOST_TEST(back.page_addr == h.page_addr);
  BOOST_TEST(back.system_id == h.system_id);
  BOOST_TEST(back.segment_size_bytes == h.segment_size_bytes);
  BOOST_TEST(back.block_size_bytes == 8192u);
}

// One reading of a first page for the directory scan and `walseg ls` (ls had its own, which
// took a stamp with a damaged CRC for walseg's).
BOOST_AUTO_TEST_CASE(AFirstPageIsALongHeaderOrAValidReadyStampAndNothingElse) {
  const PageHeader h = first_page_header(42);
  std::array<std::byte, kReadyStampBytes> b{};
  BOOST_TEST(!decode_first_page(b.data()).has_value());  // zeros
  encode_page_header(h, b.data());
  auto written = decode_first_page(b.data());
  BOOST_TEST_REQUIRE(written.has_value());
  BOOST_TEST(!written->ready_stamp);
  BOOST_TEST(written->header.system_id == 42u);
  BOOST_TEST(written->header.segment_size_bytes == (16u << 20));
  encode_ready_stamp(h, b.data());
  auto stamp = decode_first_page(b.data());
  BOOST_TEST_REQUIRE(stamp.has_value());
  BOOST_TEST(stamp->ready_stamp);
  BOOST_TEST(stamp->header.system_id == 42u);
  b[kReadyStampCrcOffset] ^= std::byte{1};  // a damaged stamp is nobody's
  BOOST_TEST(!decode_first_page(b.data()).has_value());
  PageHeader short_header = h;
  short_header.info = 0;
  b.fill(std::byte{0});
  encode_page_header(short_header, b.data());
  BOOST_TEST(!decode_first_page(b.data()).has_value());
}

BOOST_AUTO_TEST_CASE(ShortPageHeaderLeavesLongFieldsUnread) {
  PageHeader h;
  h.info = kPageFirstIsContRecord;
  h.timeline = 7;
  h.page_addr = 0x1002000;
  h.rem_len = 300;
  std::array<std::byte, kLongPageHeaderBytes> out{};
  out.fill(std::byte{0xAA});
  BOOST_TEST(encode_page_header(h, out.data()) == 24u);
  BOOST_TEST(std::to_integer<int>(out[20]) == 0);  // padding is zero
  BOOST_TEST(std::to_integer<int>(out[24]) == 0xAA);  // nothing written past 24 bytes
  const PageHeader back = decode_page_header(out.data());
  BOOST_TEST(!back.is_long());
  BOOST_TEST(back.rem_len == 300u);
  BOOST_TEST(back.timeline == 7u);
  BOOST_TEST(back.system_id == 0u);
}

BOOST_AUTO_TEST_CASE(RecordCrcCoversDataThenHeaderUpToCrcField) {
  // A record with a 3-byte payload "abc": header, short data header, payload.
  std::vector<std::byte> rec(kRecordHeaderBytes + 2 + 3);
  RecordHeader h;
  h.total_len = static_cast<std::uint32_t>(rec.size());
  h.prev = 0x1000028;
  h.info = 0x10;
  encode_record_header(h, rec.data());
  BOOST_TEST(encode_data_header(3, rec.data() + kRecordHeaderBytes) == 2u);
  std::memcpy(rec.data() + kRecordHeaderBytes + 2, "abc", 3);
  // Same order as ValidXLogRecord, written out with the generic CRC.
  std::uint32_t s = crc32c_update(kCrc32cInit, std::span(rec).subspan(24));
  s = crc32c_update(s, std::span(rec).first(20));
  const std::uint32_t crc = record_crc(rec);
  BOOST_TEST(crc == crc32c_finish(s));
  // The CRC field itself is not covered.
  h.crc = crc;
  encode_record_header(h, rec.data());
  BOOST_TEST(record_crc(rec) == crc);
  BOOST_TEST(decode_record_header(rec.data()).crc == crc);
  BOOST_TEST(std::to_integer<int>(rec[24]) == kBlockIdDataShort);
  BOOST_TEST(std::to_integer<int>(rec[25]) == 3);
}

BOOST_AUTO_TEST_CASE(LongDataHeaderStoresUnalignedLittleEndianLength) {
  std::array<std::byte, 5> out{};
  BOOST_TEST(encode_data_header(0x01020304, out.data()) == 5u);
  BOOST_TEST(std::to_integer<int>(out[0]) == kBlockIdDataLong);
  BOOST_TEST(load_le32(out.data() + 1) == 0x01020304u);
  BOOST_TEST(std::to_integer<int>(out[1]) == 0x04);
}

BOOST_AUTO_TEST_CASE(RmgrIdsValidAsInPostgreSQL15) {
  BOOST_TEST(is_valid_rmgr_id(0));
  BOOST_TEST(is_valid_rmgr_id(21));
  BOOST_TEST(!is_valid_rmgr_id(22));
  BOOST_TEST(!is_valid_rmgr_id(127));
  BOOST_TEST(is_valid_rmgr_id(128));
  BOOST_TEST(is_valid_rmgr_id(255));
  BOOST_TEST(is_valid_wal_block_size(8192));
  BOOST_TEST(!is_valid_wal_block_size(512));
  BOOST_TEST(!is_valid_wal_block_size(3000));
}
