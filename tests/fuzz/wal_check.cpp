// Record properties of wal_reader_fuzz (wal_check.h): an independent reassembly of each
// returned record from the bytes on disk, page header checks, CRC, and the xl_prev chain.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS (target wal_reader_fuzz).
#include "wal_check.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "walseg/segment_name.h"

namespace walfuzz {
namespace {

using walseg::PageHeader;

class Reassembly {
 public:
  Reassembly(const WalModel& m, const ReaderGeometry& g) : m_(m), g_(g) {}

  // The header of the page at page_lsn, after checking it and its segment's first page.
  PageHeader page(Lsn page_lsn) {
    const std::uint64_t off = page_lsn % g_.segment_size_bytes;
    if (off != 0) page_at(page_lsn - off);
    return page_at(page_lsn);
  }
  // Reads n bytes at lsn of a page already checked.
  void bytes(Lsn lsn, std::byte* out, std::size_t n) const {
    m_.read(name_of(lsn), lsn % g_.segment_size_bytes, out, n);
  }

 private:
  std::string name_of(Lsn lsn) const {
    return walseg::segment_file_name(g_.timeline, lsn / g_.segment_size_bytes,
                                     g_.segment_size_bytes);
  }
  PageHeader page_at(Lsn page_lsn) const {
    const std::uint64_t off = page_lsn % g_.segment_size_bytes;
    std::byte raw[walseg::kLongPageHeaderBytes];
    check(m_.read(name_of(page_lsn), off, raw, sizeof raw),
          "a record was returned from a segment that is not a regular file");
    const PageHeader h = walseg::decode_page_header(raw);
    check(h.magic == walseg::kWalPageMagic, "record on a page with a wrong magic");
    check((h.info & ~walseg::kPageAllFlags) == 0, "record on a page with unknown info bits");
    check(h.page_addr == page_lsn, "record on a page whose xlp_pageaddr is not its LSN");
    check(h.timeline == g_.timeline, "record on a page of another timeline");
    check(h.is_long() == (off == 0), "record on a page with a misplaced long header");
    if (h.is_long()) {
      check(h.segment_size_bytes == g_.segment_size_bytes && h.block_size_bytes == g_.block_size_bytes,
            "record in a segment whose long header has other sizes");
      check(g_.system_id.has_value() && h.system_id == *g_.system_id,
            "record in a segment of another system identifier");
    }
    return h;
  }

  const WalModel& m_;
  const ReaderGeometry& g_;
};

void check_payload(const std::vector<std::byte>& buf, const walseg::WalRecord& rec) {
  const std::size_t body = buf.size() - walseg::kRecordHeaderBytes;
  std::size_t dh = 0, len = 0;
  if (body > 0) {
    const auto id = std::to_integer<std::uint8_t>(buf[walseg::kRecordHeaderBytes]);
    if (id == walseg::kBlockIdDataShort && body >= walseg::kDataHeaderShortBytes) {
      dh = walseg::kDataHeaderShortBytes;
      len = std::to_integer<std::uint8_t>(buf[walseg::kRecordHeaderBytes + 1]);
    } else {
      check(id == walseg::kBlockIdDataLong && body >= walseg::kDataHeaderLongBytes,
            "record returned with an unsupported data header");
      dh = walseg::kDataHeaderLongBytes;
      len = walseg::load_le32(buf.data() + walseg::kRecordHeaderBytes + 1);
    }
  }
  check(dh + len == body, "record returned whose data length disagrees with xl_tot_len");
  check(rec.payload.size() == len, "record returned with a payload of the wrong length");
  check(len == 0 || std::memcmp(rec.payload.data(), buf.data() + walseg::kRecordHeaderBytes + dh,
                                len) == 0,
        "record returned with a payload other than its bytes on disk");
}

}  // namespace

ReaderGeometry geometry_of(const walseg::WalReader& reader) {
  return {reader.segment_size_bytes(), reader.block_size_bytes(), reader.timeline(),
          reader.system_id()};
}

void check_record(const WalModel& m, const ReaderGeometry& g, const walseg::WalRecord& rec) {
  const std::uint64_t blk = g.block_size_bytes;
  Reassembly pages(m, g);
  check(rec.lsn % walseg::kWalAlignBytes == 0, "record returned at an unaligned LSN");
  Lsn cur = rec.lsn - rec.lsn % blk;
  check(rec.lsn % blk >= pages.page(cur).size_bytes(), "record returned inside a page header");
  std::byte len[4];
  pages.bytes(rec.lsn, len, sizeof len);
  const std::uint32_t total = walseg::load_le32(len);
  check(total >= walseg::kRecordHeaderBytes && total <= walseg::kMaxRecordTotalBytes,
        "record returned with xl_tot_len out of bounds");
  std::vector<std::byte> buf(std::min<std::uint64_t>(total, blk - rec.lsn % blk));
  pages.bytes(rec.lsn, buf.data(), buf.size());
  Lsn last_end = rec.lsn + buf.size();
  while (buf.size() < total) {
    cur += blk;
    const PageHeader h = pages.page(cur);
    const std::uint64_t left = total - buf.size();
    check((h.info & walseg::kPageFirstIsContRecord) != 0 &&
              (h.info & walseg::kPageFirstIsOverwriteContRecord) == 0,
          "record continued on a page without the contrecord flag");
    check(h.rem_len == left, "record continued on a page with a wrong xlp_rem_len");
    const std::size_t n = std::min<std::uint64_t>(left, blk - h.size_bytes());
    buf.resize(buf.size() + n);
    pages.bytes(cur + h.size_bytes(), buf.data() + buf.size() - n, n);
    last_end = cur + h.size_bytes() + n;
  }
  const walseg::RecordHeader h = walseg::decode_record_header(buf.data());
  check(walseg::record_crc(buf) == h.crc, "record returned whose CRC does not match its bytes");
  check(h.prev == rec.prev_lsn && h.xid == rec.xid && h.info == rec.info && h.rmid == rec.rmid,
        "record returned with header fields other than its bytes on disk");
  check(walseg::is_valid_rmgr_id(h.rmid), "record returned with an invalid resource manager");
  check(rec.end_lsn == walseg::wal_align(last_end), "record returned with a wrong end_lsn");
  check(rec.prev_lsn < rec.lsn, "record returned whose xl_prev is not below it");
  check_payload(buf, rec);
}

void ChainCheck::add(const ReaderGeometry& g, const walseg::WalRecord& rec) {
  if (last_) {
    Lsn expected = last_->end;
    if (expected % g.block_size_bytes == 0)
      expected += expected % g.segment_size_bytes == 0 ? walseg::kLongPageHeaderBytes
                                                       : walseg::kShortPageHeaderBytes;
    check(rec.prev_lsn == last_->lsn, "record returned whose xl_prev is not the record before");
    check(rec.lsn == expected, "record returned that does not start where the one before ended");
    check(rec.xid >= last_->xid, "record returned whose epoch is below the one before");
  }
  last_ = Link{rec.lsn, rec.end_lsn, rec.xid};
}

std::optional<Lsn> ChainCheck::last_end() const {
  if (!last_) return std::nullopt;
  return last_->end;
}

}  // namespace walfuzz
