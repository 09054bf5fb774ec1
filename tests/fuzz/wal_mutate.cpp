// Byte-level mutations of wal_reader_fuzz (wal_mutate.h): page and record fields, data
// headers, payloads, zeroed ranges, copied pages, overwrites. File-level, control-file and
// query operations are in wal_mutate_files.cpp.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS (target wal_reader_fuzz).
#include "wal_mutate.h"

#include <algorithm>
#include <array>
#include <vector>

#include "wal_mutate_ops.h"
#include "walseg/segment_name.h"

namespace walfuzz {
namespace {

struct Field {
  std::size_t offset;
  int width;
};
// Page header fields (wal_format.h's offset table), long-header ones last.
constexpr std::array<Field, 8> kPageFields = {{{0, 2}, {2, 2}, {4, 4}, {8, 8}, {16, 4},
                                               {24, 8}, {32, 4}, {36, 4}}};
// Record header fields, padding included.
constexpr std::array<Field, 7> kRecordFields = {{{0, 4}, {4, 4}, {8, 8}, {16, 1}, {17, 1},
                                                 {18, 2}, {20, 4}}};

void put_le(WalModel& m, const std::string& name, std::uint64_t off, std::uint64_t v, int width) {
  std::byte b[8];
  for (int i = 0; i < width; ++i) b[i] = static_cast<std::byte>(v >> (8 * i));
  m.write(name, off, b, width);
}

std::uint64_t get_le(const WalModel& m, const std::string& name, std::uint64_t off, int width) {
  std::byte b[8] = {};
  m.read(name, off, b, width);
  std::uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= std::uint64_t{std::to_integer<std::uint8_t>(b[i])} << (8 * i);
  return v;
}

// Record bytes live at LSNs that skip page headers; each is read or written on its own.
std::uint64_t get_record_le(const WalModel& m, Lsn rec, std::uint64_t k, int width) {
  std::uint64_t v = 0;
  for (int i = 0; i < width; ++i) {
    const Lsn at = m.record_byte_lsn(rec, k + i);
    v |= get_le(m, m.file_of(at), m.offset_of(at), 1) << (8 * i);
  }
  return v;
}

void put_record_le(WalModel& m, Lsn rec, std::uint64_t k, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) {
    const Lsn at = m.record_byte_lsn(rec, k + i);
    put_le(m, m.file_of(at), m.offset_of(at), (v >> (8 * i)) & 0xFF, 1);
  }
}

// The first n bytes of the record at rec, gathered page by page (its page headers skipped).
std::vector<std::byte> record_bytes(const WalModel& m, Lsn rec, std::uint64_t n) {
  const std::uint64_t blk = m.params.block_size_bytes;
  std::vector<std::byte> buf(n);
  Lsn pos = rec;
  for (std::uint64_t got = 0; got < n;) {
    const std::uint64_t k = std::min(n - got, blk - pos % blk);
    m.read(m.file_of(pos), m.offset_of(pos), buf.data() + got, k);
    got += k;
    pos = m.record_byte_lsn(pos, k);  // the next record byte, after a page header if need be
  }
  return buf;
}

// Recomputes xl_crc over the record as its (possibly changed) xl_tot_len now says, so that
// the record is valid byte-wise and only the reader's identity checks can refuse it.
void fix_crc(WalModel& m, Lsn rec) {
  const std::uint64_t total = get_record_le(m, rec, 0, 4);
  if (total < walseg::kRecordHeaderBytes || total > 4 * kFuzzSegmentBytes) return;
  put_record_le(m, rec, walseg::kRecordCrcOffset, walseg::record_crc(record_bytes(m, rec, total)), 4);
}

void page_field(Cursor& c, WalModel& m) {
  const std::string* name = pick_entry(c, m);
  if (name == nullptr) return;
  const std::uint64_t off = pick_page(c, m, *name);
  const Field f = kPageFields[c.u8() % kPageFields.size()];
  const std::uint64_t old = get_le(m, *name, off + f.offset, f.width);
  put_le(m, *name, off + f.offset, mutate_value(c, m, old, lsn_of_entry(*name, off)), f.width);
}

void record_field(Cursor& c, WalModel& m) {
  const OriginalRecord* r = pick_record(c, m);
  if (r == nullptr) return;
  const Field f = kRecordFields[c.u8() % kRecordFields.size()];
  const std::uint64_t old = get_record_le(m, r->lsn, f.offset, f.width);
  put_record_le(m, r->lsn, f.offset, mutate_value(c, m, old, r->lsn), f.width);
  if (c.u8() & 1) fix_crc(m, r->lsn);
}

void data_header(Cursor& c, WalModel& m) {
  const OriginalRecord* r = pick_record(c, m);
  if (r == nullptr) return;
  const std::uint64_t k = walseg::kRecordHeaderBytes + c.u8() % walseg::kDataHeaderLongBytes;
  const std::uint8_t how = c.u8();
  const std::uint64_t old = get_record_le(m, r->lsn, k, 1);
  put_record_le(m, r->lsn, k, (how & 2) ? c.u8() : old ^ (1u << (how >> 5)), 1);
  if (how & 1) fix_crc(m, r->lsn);
}

void payload_byte(Cursor& c, WalModel& m) {
  const OriginalRecord* r = pick_record(c, m);
  if (r == nullptr) return;
  const std::uint64_t k = c.u32() % r->total_len;
  const std::uint8_t how = c.u8();
  put_record_le(m, r->lsn, k, get_record_le(m, r->lsn, k, 1) ^ (how | 1), 1);
  if (how & 2) fix_crc(m, r->lsn);
}

// A write that did not reach the medium, in the units it may be lost in.
void zero_range(Cursor& c, WalModel& m) {
  const std::string* name = pick_entry(c, m);
  if (name == nullptr) return;
  const std::uint64_t size = m.files[*name].size;
  const std::uint64_t units[] = {512, 4096, m.params.block_size_bytes, 8};
  const std::uint64_t unit = units[c.u8() % 4];
  const std::uint64_t off = (c.u32() % (size + 1)) / unit * unit;
  const std::uint64_t lens[] = {512, 4096, m.params.block_size_bytes, c.u16() + 1u};
  const std::uint64_t len = std::min(lens[c.u8() % 4], size > off ? size - off : 0);
  const std::vector<std::byte> zeros(len);
  m.write(*name, off, zeros.data(), zeros.size());
}

// One page over another: a torn write that kept an older version of a page, or a page of
// another segment at the same place (what a recycled file holds).
void copy_page(Cursor& c, WalModel& m) {
  const std::string* from = pick_entry(c, m);
  const std::string* to = pick_entry(c, m);
  if (from == nullptr || to == nullptr) return;
  const std::uint64_t src = pick_page(c, m, *from), dst = pick_page(c, m, *to);
  std::vector<std::byte> page(m.params.block_size_bytes);
  if (!m.read(*from, src, page.data(), page.size())) return;
  m.write(*to, dst, page.data(), page.size());
}

void overwrite(Cursor& c, WalModel& m) {
  const std::string* name = pick_entry(c, m);
  if (name == nullptr) return;
  const std::uint64_t off = c.u32() % (m.files[*name].size + 1);
  std::vector<std::byte> bytes(1 + c.u8() % 32);
  for (auto& b : bytes) b = static_cast<std::byte>(c.u8());
  m.write(*name, off, bytes.data(), bytes.size());
}

using Mutation = void (*)(Cursor&, WalModel&);
constexpr Mutation kMutations[] = {page_field,   record_field,  data_header,   payload_byte,
                                   zero_range,   copy_page,     overwrite,     truncate_entry,
                                   remove_entry, move_entry,    swap_entries,  ready_stamp,
                                   irregular,    control_value, control_bytes, add_query};

}  // namespace

const std::string* pick_entry(Cursor& c, WalModel& m) {
  if (m.files.empty()) return nullptr;
  auto it = m.files.begin();
  std::advance(it, c.u8() % m.files.size());
  return &it->first;
}

const OriginalRecord* pick_record(Cursor& c, const WalModel& m) {
  if (m.records.empty()) return nullptr;
  return &m.records[c.u8() % m.records.size()];
}

std::uint64_t pick_page(Cursor& c, const WalModel& m, const std::string& name) {
  const std::uint64_t blk = m.params.block_size_bytes;
  const auto it = m.files.find(name);
  const std::uint64_t pages = it == m.files.end() ? 1 : it->second.bytes.size() / blk + 1;
  return c.u16() % pages * blk;
}

Lsn lsn_of_entry(const std::string& name, std::uint64_t off) {
  const auto seg = walseg::parse_segment_file_name(name, kFuzzSegmentBytes);
  return seg ? seg->segno * kFuzzSegmentBytes + off : off;
}

std::uint64_t mutate_value(Cursor& c, const WalModel& m, std::uint64_t old, Lsn here) {
  const std::uint64_t blk = m.params.block_size_bytes, seg = kFuzzSegmentBytes;
  switch (c.u8() % 5) {
    case 0: return c.u64();
    case 1: return old + static_cast<std::int8_t>(c.u8());
    case 2: return old ^ (std::uint64_t{1} << (c.u8() % 64));
    case 3: {
      const OriginalRecord* r = pick_record(c, m);
      return r == nullptr ? 0 : (c.u8() & 1) ? r->end : r->lsn;
    }
    default: {
      const std::uint64_t v[] = {0, ~0ull, here, here - blk, here + blk, here + seg, here - seg,
                                 blk, seg, m.start, m.end, walseg::kWalPageMagic,
                                 walseg::kReadySegmentMagic, kFuzzSystemId, kFuzzSystemId + 1,
                                 walseg::kMaxRecordTotalBytes, walseg::kMaxRecordTotalBytes + 1,
                                 walseg::kRecordHeaderBytes - 1, m.params.xid - 1u, 1ull << 31};
      return v[c.u8() % std::size(v)];
    }
  }
}

void apply_mutations(Cursor& c, WalModel& m) {
  for (int i = 0; i < kMaxMutations && !c.empty(); ++i)
    kMutations[c.u8() % std::size(kMutations)](c, m);
}

}  // namespace walfuzz
