// Codecs and CRC of the WAL byte layout (include/walseg/wal_format.h).
#include "walseg/wal_format.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include <fmt/format.h>

namespace walseg {

namespace {

// Explicit little-endian stores, so that the file bytes never depend on the host.
void store_le(std::byte* out, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}
std::uint64_t load_le(const std::byte* in, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i)
    v |= std::uint64_t{std::to_integer<std::uint8_t>(in[i])} << (8 * i);
  return v;
}

}  // namespace

std::uint32_t load_le32(const std::byte* in) { return static_cast<std::uint32_t>(load_le(in, 4)); }
std::uint64_t load_le64(const std::byte* in) { return load_le(in, 8); }
void store_le32(std::byte* out, std::uint32_t v) { store_le(out, v, 4); }

std::uint32_t crc32c_update(std::uint32_t state, std::span<const std::byte> bytes) {
  // crc32_iscsi takes an int length: feed it in chunks well below INT_MAX.
  constexpr std::size_t kChunkBytes = std::size_t{1} << 30;
  const std::byte* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    std::size_t n = std::min(left, kChunkBytes);
    // ISA-L neither inverts the initial value nor the result: the state is passed through.
    state = crc32_iscsi(reinterpret_cast<unsigned char*>(const_cast<std::byte*>(p)),
                        static_cast<int>(n), state);
    p += n;
    left -= n;
  }
  return state;
}

std::uint32_t crc32c(std::span<const std::byte> bytes) {
  return crc32c_finish(crc32c_update(kCrc32cInit, bytes));
}

std::size_t encode_page_header(const PageHeader& h, std::byte* out) {
  std::memset(out, 0, h.size_bytes());
  store_le(out + kPageMagicOffset, h.magic, 2);
  store_le(out + kPageInfoOffset, h.info, 2);
  store_le(out + kPageTimelineOffset, h.timeline, 4);
  store_le(out + kPageAddrOffset, h.page_addr, 8);
  store_le(out + kPageRemLenOffset, h.rem_len, 4);
  if (h.is_long()) {
    store_le(out + kPageSysIdOffset, h.system_id, 8);
    store_le(out + kPageSegSizeOffset, h.segment_size_bytes, 4);
    store_le(out + kPageBlockSizeOffset, h.block_size_bytes, 4);
  }
  return h.size_bytes();
}

PageHeader decode_page_header(const std::byte* in) {
  PageHeader h;
  h.magic = static_cast<std::uint16_t>(load_le(in + kPageMagicOffset, 2));
  h.info = static_cast<std::uint16_t>(load_le(in + kPageInfoOffset, 2));
  h.timeline = static_cast<TimeLineId>(load_le(in + kPageTimelineOffset, 4));
  h.page_addr = load_le(in + kPageAddrOffset, 8);
  h.rem_len = static_cast<std::uint32_t>(load_le(in + kPageRemLenOffset, 4));
  if (h.is_long()) {
    h.system_id = load_le(in + kPageSysIdOffset, 8);
    h.segment_size_bytes = static_cast<std::uint32_t>(load_le(in + kPageSegSizeOffset, 4));
    h.block_size_bytes = static_cast<std::uint32_t>(load_le(in + kPageBlockSizeOffset, 4));
  }
  return h;
}

void encode_record_header(const RecordHeader& h, std::byte* out) {
  std::memset(out, 0, kRecordHeaderBytes);
  store_le(out + kRecordTotalLenOffset, h.total_len, 4);
  store_le(out + kRecordXidOffset, h.xid, 4);
  store_le(out + kRecordPrevOffset, h.prev, 8);
  out[kRecordInfoOffset] = static_cast<std::byte>(h.info);
  out[kRecordRmidOffset] = static_cast<std::byte>(h.rmid);
  store_le(out + kRecordCrcOffset, h.crc, 4);
}

RecordHeader decode_record_header(const std::byte* in) {
  RecordHeader h;
  h.total_len = static_cast<std::uint32_t>(load_le(in + kRecordTotalLenOffset, 4));
  h.xid = static_cast<std::uint32_t>(load_le(in + kRecordXidOffset, 4));
  h.prev = load_le(in + kRecordPrevOffset, 8);
  h.info = std::to_integer<std::uint8_t>(in[kRecordInfoOffset]);
  h.rmid = std::to_integer<std::uint8_t>(in[kRecordRmidOffset]);
  h.crc = static_cast<std::uint32_t>(load_le(in + kRecordCrcOffset, 4));
  return h;
}

std::size_t encode_data_header(std::uint32_t payload_bytes, std::byte* out) {
  const std::size_t n = data_header_bytes(payload_bytes);
  if (n == kDataHeaderShortBytes) {
    out[0] = static_cast<std::byte>(kBlockIdDataShort);
    out[1] = static_cast<std::byte>(payload_bytes);
  } else if (n == kDataHeaderLongBytes) {
    out[0] = static_cast<std::byte>(kBlockIdDataLong);
    store_le(out + 1, payload_bytes, 4);
  }
  return n;
}

std::uint32_t record_crc(std::span<const std::byte> record) {
  // The header goes last because xl_crc sits inside it (COMP_CRC32C order in
  // XLogRecordAssemble and ValidXLogRecord).
  std::uint32_t state = crc32c_update(kCrc32cInit, record.subspan(kRecordHeaderBytes));
  state = crc32c_update(state, record.first(kRecordCrcOffset));
  return crc32c_finish(state);
}

void encode_ready_stamp(const PageHeader& h, std::byte* out) {
  PageHeader stamp = h;
  stamp.magic = kReadySegmentMagic;
  stamp.info = kPageLongHeader;
  stamp.rem_len = 0;
  encode_page_header(stamp, out);
  store_le(out + kReadyStampCrcOffset, crc32c(std::span(out, kLongPageHeaderBytes)), 4);
}

std::optional<PageHeader> decode_ready_stamp(const std::byte* in) {
  PageHeader h = decode_page_header(in);
  if (h.magic != kReadySegmentMagic || h.info != kPageLongHeader) return std::nullopt;
  if (load_le32(in + kReadyStampCrcOffset) != crc32c(std::span(in, kLongPageHeaderBytes))) return std::nullopt;
  return h;
}

std::optional<FirstPage> decode_first_page(const std::byte* in) {
  if (auto stamp = decode_ready_stamp(in)) return FirstPage{true, *stamp};
  PageHeader h = decode_page_header(in);
  if (h.magic != kWalPageMagic || !h.is_long()) return std::nullopt;
  return FirstPage{false, h};
}

void encode_control(const WalControl& c, std::byte* out) {
  std::memset(out, 0, kControlFileBytes);
  store_le(out, kControlMagic, 4);
  store_le(out + 4, kControlVersion, 4);
  store_le(out + kControlSysIdOffset, c.system_id, 8);
  store_le(out + kControlSegSizeOffset, c.segment_size_bytes, 4);
  store_le(out + kControlBlockSizeOffset, c.block_size_bytes, 4);
  store_le(out + kControlTimelineOffset, c.timeline, 4);
  store_le(out + kControlFlagsOffset, c.append_mode ? kControlAppendMode : 0, 4);
  store_le(out + kControlOldestLsnOffset, c.oldest_lsn, 8);
  store_le(out + kControlDurableLsnOffset, c.durable_lsn, 8);
  store_le(out + kControlEpochOffset, c.epoch, 4);
  store_le(out + kControlCrcOffset, crc32c(std::span(out, kControlCrcOffset)), 4);
}

std::optional<WalControl> decode_control(std::span<const std::byte> in, std::string* why) {
  auto fail = [&](std::string text) -> std::optional<WalControl> {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  if (in.size() < kControlCrcOffset + 4) return fail(fmt::format("file is {} bytes, expected {}", in.size(), kControlFileBytes));
  if (const std::uint32_t m = load_le32(in.data()); m != kControlMagic)
    return fail(fmt::format("bad magic number 0x{:08X}", m));
  // The CRC first: a version or flag read from damaged bytes would mislead the message.
  if (load_le32(in.data() + kControlCrcOffset) != crc32c(in.first(kControlCrcOffset)))
    return fail("incorrect checksum (CRC-32C mismatch)");
  // The padding is outside the CRC, and walseg writes zeros there: anything else is damage
  // the CRC cannot see (or a later version's field this one would ignore).
  for (std::size_t i = kControlCrcOffset + 4; i < in.size(); ++i)
    if (in[i] != std::byte{0}) return fail(fmt::format("byte {} after the checksum is not zero", i));
  if (const std::uint32_t v = load_le32(in.data() + 4); v != kControlVersion)
    return fail(fmt::format("unsupported version {} (this walseg reads version {})", v, kControlVersion));
  WalControl c;
  c.system_id = load_le64(in.data() + kControlSysIdOffset);
  c.segment_size_bytes = load_le32(in.data() + kControlSegSizeOffset);
  c.block_size_bytes = load_le32(in.data() + kControlBlockSizeOffset);
  c.timeline = load_le32(in.data() + kControlTimelineOffset);
  const std::uint32_t flags = load_le32(in.data() + kControlFlagsOffset);
  c.oldest_lsn = load_le64(in.data() + kControlOldestLsnOffset);
  c.durable_lsn = load_le64(in.data() + kControlDurableLsnOffset);
  c.epoch = load_le32(in.data() + kControlEpochOffset);
  if ((flags & ~kControlAppendMode) != 0) return fail(fmt::format("unknown flags 0x{:X}", flags));
  c.append_mode = (flags & kControlAppendMode) != 0;
  if (!is_valid_segment_size(c.segment_size_bytes)) return fail(fmt::format("invalid segment size {}", c.segment_size_bytes));
  if (!is_valid_wal_block_size(c.block_size_bytes) || c.block_size_bytes > c.segment_size_bytes)
    return fail(fmt::format("invalid block size {}", c.block_size_bytes));
  if (c.timeline == 0) return fail("invalid timeline 0");
  if (c.oldest_lsn % c.segment_size_bytes != 0)
    return fail(fmt::format("oldest LSN {:X}/{:X} is not the start of a segment", c.oldest_lsn >> 32,
                             c.oldest_lsn & 0xFFFFFFFF));
  return c;
}

}  // namespace walseg
