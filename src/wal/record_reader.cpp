// Record reassembly and validation (record_reader.h). Messages use PostgreSQL's wording where
// PostgreSQL has the check, so that a walseg report and a pg_waldump error read alike.
#include "record_reader.h"

#include <algorithm>

#include <fmt/format.h>

namespace walseg::wal_detail {

bool RecordReader::fail(ReadFailure* f, Lsn at, Lsn page, std::string reason) const {
  f->reason = std::move(reason);
  f->path = pages_.path_of(at);
  f->offset = pages_.file_offset(at);
  f->detected_page = page;
  f->page_status = PageStatus::kOk;
  return false;
}

bool RecordReader::fail_page(ReadFailure* f, Lsn page, const PageResult& r) const {
  f->reason = r.reason;
  f->path = r.path;
  f->offset = r.offset;
  f->detected_page = page;
  f->page_status = r.status;
  return false;
}

bool RecordReader::check_header(Lsn rec, Lsn page, std::optional<Lsn> expected_prev,
                                ReadFailure* f) const {
  const RecordHeader h = decode_record_header(buf_.data());
  if (!is_valid_rmgr_id(h.rmid))
    return fail(f, rec, page,
                fmt::format("invalid resource manager ID {} at {}", h.rmid, format_lsn(rec)));
  // An exact prev-link is what tells a stale but well-formed record (a torn page that kept an
  // older version of its sectors) from the successor of the record just read.
  const bool prev_ok = expected_prev ? h.prev == *expected_prev : h.prev < rec;
  if (!prev_ok)
    return fail(f, rec, page,
                fmt::format("record with incorrect prev-link {} at {}", format_lsn(h.prev),
                            format_lsn(rec)));
  return true;
}

bool RecordReader::read_continuation(Lsn rec, Lsn page, std::uint32_t total_len,
                                     std::optional<Lsn> expected_prev, Lsn* last_end,
                                     ReadFailure* f) {
  const std::uint32_t blk = pages_.geometry().block_size_bytes;
  Lsn cur = page;
  while (buf_.size() < total_len) {
    cur += blk;
    const PageResult r = pages_.read(cur);
    if (!r.ok()) return fail_page(f, cur, r);
    const PageHeader& h = pages_.header();
    const std::uint64_t left = total_len - buf_.size();
    if ((h.info & kPageFirstIsOverwriteContRecord) != 0)
      return fail(f, cur, cur,
                  fmt::format("continuation of record at {} was overwritten at {}",
                              format_lsn(rec), format_lsn(cur)));
    if ((h.info & kPageFirstIsContRecord) == 0)
      return fail(f, cur, cur, fmt::format("there is no contrecord flag at {}", format_lsn(cur)));
    if (h.rem_len != left)
      return fail(f, cur, cur,
                  fmt::format("invalid contrecord length {} (expected {}) at {}", h.rem_len, left,
                              format_lsn(cur)));
    const std::size_t n = std::min<std::uint64_t>(left, blk - h.size_bytes());
    const std::byte* p = pages_.page() + h.size_bytes();
    const bool had_header = buf_.size() >= kRecordHeaderBytes;
    buf_.insert(buf_.end(), p, p + n);
    // A record header split over two pages is checked as soon as it is whole.
    if (!had_header && buf_.size() >= kRecordHeaderBytes &&
        !check_header(rec, cur, expected_prev, f))
      return false;
    *last_end = cur + h.size_bytes() + n;
  }
  return true;
}

bool RecordReader::decode_payload(Lsn rec, Lsn page, DecodedRecord* out, ReadFailure* f) const {
  const std::size_t body = buf_.size() - kRecordHeaderBytes;
  if (body == 0) {
    out->payload = {};
    return true;
  }
  const auto id = std::to_integer<std::uint8_t>(buf_[kRecordHeaderBytes]);
  std::size_t dh = 0;
  std::uint64_t len = 0;
  if (id == kBlockIdDataShort && body >= kDataHeaderShortBytes) {
    dh = kDataHeaderShortBytes;
    len = std::to_integer<std::uint8_t>(buf_[kRecordHeaderBytes + 1]);
  } else if (id == kBlockIdDataLong && body >= kDataHeaderLongBytes) {
    dh = kDataHeaderLongBytes;
    len = load_le32(buf_.data() + kRecordHeaderBytes + 1);
  } else {
    return fail(f, rec, page,
                fmt::format("unsupported block ID {} in record at {}: walseg reads main data "
                            "only",
                            id, format_lsn(rec)));
  }
  if (dh + len != body)
    return fail(f, rec, page,
                fmt::format("invalid main data length {} in record at {}: {} bytes follow the "
                            "data header",
                            len, format_lsn(rec), body - dh));
  out->payload = std::span<const std::byte>(buf_.data() + kRecordHeaderBytes + dh, len);
  return true;
}

bool RecordReader::read(Lsn pos, std::optional<Lsn> expected_prev, DecodedRecord* out,
                        ReadFailure* f) {
  const std::uint32_t blk = pages_.geometry().block_size_bytes;
  *f = ReadFailure{};
  f->record_lsn = pos;
  const Lsn page = pos - pos % blk;
  const PageResult r = pages_.read(page);
  if (!r.ok()) return fail_page(f, page, r);
  const PageHeader& ph = pages_.header();
  if (pos == page) {
    if ((ph.info & kPageFirstIsContRecord) != 0)
      return fail(f, pos, page, fmt::format("contrecord is requested by {}", format_lsn(pos)));
    pos += ph.size_bytes();
  } else if (pos % blk < ph.size_bytes()) {
    return fail(f, pos, page,
                fmt::format("invalid record offset at {}", format_lsn(pos)));  // PostgreSQL 15's words
  }
  f->record_lsn = pos;
  // xl_tot_len is always on this page: records start 8-aligned, at least 8 bytes before its end.
  const std::byte* p = pages_.page() + pos % blk;
  const std::uint32_t total = load_le32(p);
  if (total < kRecordHeaderBytes)
    return fail(f, pos, page,
                fmt::format("invalid record length at {}: wanted {}, got {}",  // as PostgreSQL 15's xlogreader
                            format_lsn(pos), kRecordHeaderBytes, total));
  if (total > kMaxRecordTotalBytes)
    return fail(f, pos, page,
                fmt::format("record length {} at {} too long (at most {})", total,
                            format_lsn(pos), kMaxRecordTotalBytes));
  const std::size_t first = std::min<std::uint64_t>(total, blk - pos % blk);
  buf_.assign(p, p + first);
  if (first >= kRecordHeaderBytes && !check_header(pos, page, expected_prev, f)) {
    // A record on one page has its length at hand: look-ahead may try the record after it.
    if (first == total) f->next_lsn = wal_align(pos + total);
    return false;
  }
  Lsn last_end = pos + first;
  if (!read_continuation(pos, page, total, expected_prev, &last_end, f)) return false;

  out->lsn = pos;
  out->end_lsn = wal_align(last_end);
  // Where the next record starts if this one's length is right; look-ahead only believes it
  // when a valid record there links back to this one.
  f->next_lsn = out->end_lsn;
  const Lsn last_page = (last_end - 1) - (last_end - 1) % blk;
  out->header = decode_record_header(buf_.data());
  if (record_crc(buf_) != out->header.crc)
    return fail(f, pos, last_page,
                fmt::format("incorrect resource manager data checksum in record at {}",
                            format_lsn(pos)));
  return decode_payload(pos, last_page, out, f);
}

}  // namespace walseg::wal_detail
