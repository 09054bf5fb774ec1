// The pure record encoder (include/walseg/wal_encoder.h).
//
// Splitting follows PostgreSQL's CopyXLogRecordToWAL: record bytes fill the rest of the current
// page; each further page starts with a header whose xlp_rem_len counts the record bytes still
// to come (header bytes included when the record header itself is split), so a reader can
// cross-check the length and find the next record without the record's first page.
#include "walseg/wal_encoder.h"

#include <cerrno>

#include <fmt/format.h>

#include "walseg/error.h"

namespace walseg {

namespace {

constexpr std::string_view kOp = "encode WAL record";
constexpr std::byte kZeros[512] = {};

[[noreturn]] void invalid(std::string message) { throw make_error(EINVAL, kOp, "", message); }

std::uint64_t page_offset(const EncoderParams& p, Lsn lsn) { return lsn % p.block_size_bytes; }

void check_insert_position(const EncoderParams& p, Lsn pos) {
  if (!is_valid_insert_position(p, pos))
    invalid(fmt::format("invalid WAL insert position {}: must be a multiple of {} and either a "
                        "page boundary or after the page header",
                        format_lsn(pos), kWalAlignBytes));
}

std::uint32_t total_len_of(std::size_t payload_bytes) {
  if (payload_bytes > kMaxRecordPayloadBytes)
    invalid(fmt::format("WAL record payload of {} bytes exceeds the maximum of {} bytes",
                        payload_bytes, kMaxRecordPayloadBytes));
  return static_cast<std::uint32_t>(kRecordHeaderBytes + data_header_bytes(payload_bytes) +
                                    payload_bytes);
}

// Emits record bytes from `pos` on, adding a continuation page header at every page boundary
// that more record bytes must cross.
class PageWalker {
 public:
  PageWalker(const EncoderParams& p, const WalSink& sink, Lsn pos, std::uint32_t total_len)
      : p_(p), sink_(sink), pos_(pos), remaining_(total_len) {}

  void put(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      if (page_offset(p_, pos_) == 0) pos_ = encode_page_header(p_, pos_, remaining_, sink_);
      const std::size_t room = p_.block_size_bytes - page_offset(p_, pos_);
      const std::size_t n = std::min(room, bytes.size());
      sink_(pos_, bytes.data(), n);
      pos_ += n;
      remaining_ -= static_cast<std::uint32_t>(n);
      bytes = bytes.subspan(n);
    }
  }
  Lsn pos() const { return pos_; }

 private:
  const EncoderParams& p_;
  const WalSink& sink_;
  Lsn pos_;
  std::uint32_t remaining_;  // record bytes not yet emitted: the next page's xlp_rem_len
};

}  // namespace

void check_encoder_params(const EncoderParams& p) {
  check_segment_size(p.segment_size_bytes);
  if (!is_valid_wal_block_size(p.block_size_bytes) || p.block_size_bytes > p.segment_size_bytes)
    invalid(fmt::format("invalid WAL block size {} bytes: must be a power of two from {} to {} "
                        "and not above the segment size",
                        p.block_size_bytes, kMinWalBlockSizeBytes, kMaxWalBlockSizeBytes));
  if (p.timeline == 0) invalid("invalid timeline 0: timelines start at 1");
}

Lsn wal_start_lsn(const EncoderParams& p) {
  check_encoder_params(p);
  return lsn_of_segment(1, 0, p.segment_size_bytes);
}

std::size_t page_header_bytes(const EncoderParams& p, Lsn page_lsn) {
  return page_lsn % p.segment_size_bytes == 0 ? kLongPageHeaderBytes : kShortPageHeaderBytes;
}

bool is_valid_insert_position(const EncoderParams& p, Lsn pos) {
  if (p.block_size_bytes == 0 || p.segment_size_bytes == 0) return false;
  if (pos % kWalAlignBytes != 0) return false;
  const std::uint64_t off = page_offset(p, pos);
  return off == 0 || off >= page_header_bytes(p, pos - off);
}

Lsn encode_page_header(const EncoderParams& p, Lsn page_lsn, std::uint32_t rem_len,
                       const WalSink& sink) {
  check_encoder_params(p);
  if (page_offset(p, page_lsn) != 0)
    invalid(fmt::format("WAL page header position {} is not a page boundary",
                        format_lsn(page_lsn)));
  PageHeader h;
  h.info = rem_len != 0 ? kPageFirstIsContRecord : 0;
  h.timeline = p.timeline;
  h.page_addr = page_lsn;
  h.rem_len = rem_len;
  if (page_header_bytes(p, page_lsn) == kLongPageHeaderBytes) {
    h.info |= kPageLongHeader;
    h.system_id = p.system_id;
    h.segment_size_bytes = static_cast<std::uint32_t>(p.segment_size_bytes);
    h.block_size_bytes = p.block_size_bytes;
  }
  std::byte buf[kLongPageHeaderBytes];
  const std::size_t n = encode_page_header(h, buf);
  sink(page_lsn, buf, n);
  return page_lsn + n;
}

Lsn reserve_record(const EncoderParams& p, Lsn insert_pos, std::size_t payload_bytes,
                   Lsn* record_start) {
  check_encoder_params(p);
  check_insert_position(p, insert_pos);
  std::uint64_t remaining = total_len_of(payload_bytes);
  Lsn pos = insert_pos;
  if (page_offset(p, pos) == 0) pos += page_header_bytes(p, pos);
  if (record_start) *record_start = pos;
  for (;;) {
    const std::uint64_t n = std::min<std::uint64_t>(remaining, p.block_size_bytes -
                                                                   page_offset(p, pos));
    pos += n;
    remaining -= n;
    if (remaining == 0) return wal_align(pos);
    pos += page_header_bytes(p, pos);  // pos is a page boundary here
  }
}

Lsn encode_record(const EncoderParams& p, Lsn insert_pos, Lsn prev_record_lsn,
                  std::uint8_t info, std::span<const std::byte> payload, const WalSink& sink,
                  Lsn* record_start) {
  Lsn start = 0;
  const Lsn end = reserve_record(p, insert_pos, payload.size(), &start);
  if ((info & kRecordInfoMask) != 0)
    invalid(fmt::format("WAL record info {:#04x} sets reserved bits {:#04x}", info,
                        kRecordInfoMask));
  if (prev_record_lsn >= start)
    invalid(fmt::format("previous record {} is not before the new record at {}",
                        format_lsn(prev_record_lsn), format_lsn(start)));

  // Header and data header are contiguous in `head`; the CRC covers the data header and the
  // payload first, then the record header up to xl_crc.
  std::byte head[kRecordHeaderBytes + kDataHeaderLongBytes];
  RecordHeader rh;
  rh.total_len = total_len_of(payload.size());
  rh.xid = p.xid;
  rh.prev = prev_record_lsn;
  rh.info = info;
  const std::size_t dh = encode_data_header(static_cast<std::uint32_t>(payload.size()),
                                            head + kRecordHeaderBytes);
  encode_record_header(rh, head);
  std::uint32_t crc = crc32c_update(kCrc32cInit, std::span(head + kRecordHeaderBytes, dh));
  crc = crc32c_update(crc, payload);
  rh.crc = crc32c_finish(crc32c_update(crc, std::span(head, kRecordCrcOffset)));
  encode_record_header(rh, head);

  if (page_offset(p, insert_pos) == 0) encode_page_header(p, insert_pos, 0, sink);
  PageWalker walker(p, sink, start, rh.total_len);
  walker.put(std::span<const std::byte>(head, kRecordHeaderBytes + dh));
  walker.put(payload);
  // Alignment padding never crosses a page: page sizes and headers are multiples of 8.
  if (walker.pos() != end) sink(walker.pos(), kZeros, end - walker.pos());
  if (record_start) *record_start = start;
  return end;
}

Lsn encode_page_tail(const EncoderParams& p, Lsn pos, const WalSink& sink) {
  check_encoder_params(p);
  if (pos % kWalAlignBytes != 0)
    invalid(fmt::format("WAL position {} is not a multiple of {}", format_lsn(pos),
                        kWalAlignBytes));
  if (page_offset(p, pos) == 0) return pos;
  const Lsn page_end = pos - page_offset(p, pos) + p.block_size_bytes;
  while (pos < page_end) {
    const std::size_t n = std::min<std::uint64_t>(sizeof kZeros, page_end - pos);
    sink(pos, kZeros, n);
    pos += n;
  }
  return page_end;
}

}  // namespace walseg
