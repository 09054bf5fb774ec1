// File-level, control-file and query operations of wal_reader_fuzz (wal_mutate.h):
// truncation, removal, moves and swaps of segments, ready stamps, entries that are not
// regular files, walseg.control values and damage, and the queries run after the reads.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS (target wal_reader_fuzz).
#include <algorithm>
#include <utility>

#include "wal_mutate_ops.h"
#include "walseg/segment_name.h"

namespace walfuzz {
namespace {

constexpr std::size_t kMaxQueries = 8;

ModelFile* regular(WalModel& m, const std::string* name) {
  if (name == nullptr) return nullptr;
  ModelFile& f = m.files[*name];
  return f.kind == ModelFile::Kind::kRegular ? &f : nullptr;
}

// A segment name near the WAL: the first segment moved by a signed step (below it, inside,
// after it), on the WAL's timeline.
std::string nearby_name(Cursor& c, const WalModel& m, SegNo from) {
  const SegNo segno = from + static_cast<std::int8_t>(c.u8());
  const SegNo max = walseg::max_segno(kFuzzSegmentBytes);
  return walseg::segment_file_name(m.params.timeline, std::min(segno, max), kFuzzSegmentBytes);
}

std::vector<std::byte> encoded(const walseg::WalControl& v) {
  std::vector<std::byte> b(walseg::kControlFileBytes);
  walseg::encode_control(v, b.data());
  return b;
}

}  // namespace

void truncate_entry(Cursor& c, WalModel& m) {
  const std::string* name = pick_entry(c, m);
  ModelFile* f = regular(m, name);
  if (f == nullptr) return;
  std::uint64_t size = 0;
  switch (c.u8() % 4) {
    case 0: size = pick_page(c, m, *name); break;
    case 1: {
      const OriginalRecord* r = pick_record(c, m);
      if (r != nullptr) size = m.offset_of((c.u8() & 1) ? r->end : r->lsn);
      break;
    }
    case 2: size = c.u32() % (f->size + 1); break;
    default: size = (c.u32() % (f->size + 1)) & ~std::uint64_t{4095}; break;
  }
  f->size = std::min(size, f->size);
  if (f->bytes.size() > f->size) f->bytes.resize(f->size);
  m.note_change(*name, f->size);
}

void remove_entry(Cursor& c, WalModel& m) {
  const std::string* name = pick_entry(c, m);
  if (name == nullptr) return;
  const std::string gone = *name;
  m.files.erase(gone);
  m.note_change(gone, 0);
}

// A rename: to a neighbour (a recycled segment under a later name, or one moved below the
// start), to another timeline, to the top of the LSN space, or away from segment names.
void move_entry(Cursor& c, WalModel& m) {
  const std::string* name = pick_entry(c, m);
  if (name == nullptr) return;
  const std::string from = *name;
  const auto seg = walseg::parse_segment_file_name(from, kFuzzSegmentBytes);
  const SegNo segno = seg ? seg->segno : m.start / kFuzzSegmentBytes;
  std::string to;
  switch (c.u8() % 4) {
    case 0: to = nearby_name(c, m, segno); break;
    case 1: {
      const walseg::TimeLineId tli = m.params.timeline + ((c.u8() & 1) ? 1 : -1);
      to = walseg::segment_file_name(tli == 0 ? 1 : tli, segno, kFuzzSegmentBytes);
      break;
    }
    case 2: to = walseg::segment_file_name(m.params.timeline, walseg::max_segno(kFuzzSegmentBytes),
                                           kFuzzSegmentBytes); break;
    default: to = from + ".partial"; break;
  }
  if (to == from) return;
  m.files[to] = std::move(m.files[from]);
  m.files.erase(from);
  m.note_change(from, 0);
  m.note_change(to, 0);
}

void swap_entries(Cursor& c, WalModel& m) {
  const std::string* a = pick_entry(c, m);
  const std::string* b = pick_entry(c, m);
  if (a == nullptr || b == nullptr || *a == *b) return;
  std::swap(m.files[*a], m.files[*b]);
  m.note_change(*a, 0);
  m.note_change(*b, 0);
}

// The first page replaced by a ready stamp: a segment the writer had not reached (if the
// stamp is right) or one of another system or place (if not).
void ready_stamp(Cursor& c, WalModel& m) {
  const std::string* name = pick_entry(c, m);
  ModelFile* f = regular(m, name);
  if (f == nullptr) return;
  const std::uint8_t how = c.u8();
  walseg::PageHeader h;
  h.info = walseg::kPageLongHeader;
  h.timeline = (how & 8) ? m.params.timeline + 1 : m.params.timeline;
  h.page_addr = lsn_of_entry(*name, 0) + ((how & 16) ? kFuzzSegmentBytes : 0);
  h.system_id = (how & 1) ? kFuzzSystemId + 1 : kFuzzSystemId;
  h.segment_size_bytes = kFuzzSegmentBytes;
  h.block_size_bytes = m.params.block_size_bytes;
  std::vector<std::byte> page(walseg::kReadyStampBytes);
  walseg::encode_ready_stamp(h, page.data());
  if (how & 2) page.resize(m.params.block_size_bytes);  // the rest of the page zeroed too
  const std::string target = *name;
  m.write(target, 0, page.data(), page.size());
  if (how & 4) {  // an append-mode segment that was never written: the stamp alone
    f->size = walseg::kReadyStampBytes;
    f->bytes.resize(walseg::kReadyStampBytes);
  }
}

// An entry under a segment name that is no segment: a symlink, a directory, a FIFO, or a
// regular file of someone else's bytes.
void irregular(Cursor& c, WalModel& m) {
  const std::uint8_t how = c.u8();
  std::string name;
  if ((how & 1) && !m.files.empty()) {
    name = *pick_entry(c, m);
  } else {
    name = nearby_name(c, m, m.start / kFuzzSegmentBytes);
  }
  ModelFile f;
  switch ((how >> 1) % 4) {
    case 0: {
      f.kind = ModelFile::Kind::kSymlink;
      const std::string* target = pick_entry(c, m);
      f.link_target = target == nullptr ? "nowhere" : *target;
      break;
    }
    case 1: f.kind = ModelFile::Kind::kDirectory; break;
    case 2: f.kind = ModelFile::Kind::kFifo; break;
    default:
      f.bytes.resize(64);
      for (auto& b : f.bytes) b = static_cast<std::byte>(c.u8());
      f.size = kFuzzSegmentBytes;
      break;
  }
  m.files[name] = std::move(f);
  m.note_change(name, 0);
}

// A control file with a valid CRC that says something else: the reader trusts it, so what it
// returns must still be records of the WAL it names.
void control_value(Cursor& c, WalModel& m) {
  walseg::WalControl v = m.control_values;
  if (m.control) {
    if (auto d = walseg::decode_control(*m.control, nullptr)) v = *d;
  }
  const std::uint8_t field = c.u8() % 8;
  const std::uint64_t old[] = {v.system_id,  v.segment_size_bytes, v.block_size_bytes,
                               v.timeline,   v.append_mode,        v.oldest_lsn,
                               v.durable_lsn, v.epoch};
  std::uint64_t x = mutate_value(c, m, old[field], m.start);
  switch (field) {
    case 0: v.system_id = x; break;
    case 1: v.segment_size_bytes = (c.u8() & 1) ? std::uint32_t{1} << (20 + x % 11) : x; break;
    case 2: v.block_size_bytes = (c.u8() & 1) ? std::uint32_t{1} << (10 + x % 7) : x; break;
    case 3: v.timeline = static_cast<walseg::TimeLineId>(x); break;
    case 4: v.append_mode = !v.append_mode; break;
    case 5: v.oldest_lsn = (c.u8() & 1) ? x - x % kFuzzSegmentBytes : x; break;
    case 6: v.durable_lsn = x; break;
    default: v.epoch = static_cast<std::uint32_t>(x); break;
  }
  m.control = encoded(v);
  m.control_changed = m.mutated = true;
}

void control_bytes(Cursor& c, WalModel& m) {
  const std::uint8_t how = c.u8();
  if (how % 3 == 0 || !m.control) {
    m.control.reset();
  } else if (how % 3 == 1 && !m.control->empty()) {
    const std::size_t at = c.u16() % m.control->size();
    (*m.control)[at] ^= static_cast<std::byte>(c.u8() | 1);
  } else {
    m.control->resize(c.u16() % 1024);
  }
  m.control_changed = m.mutated = true;
}

void add_query(Cursor& c, WalModel& m) {
  const std::uint8_t how = c.u8();
  Query q;
  q.kind = static_cast<Query::Kind>((how & 3) % 3);
  q.with_control = (how >> 2) & 1;
  const std::uint64_t blk = m.params.block_size_bytes;
  const OriginalRecord* r = pick_record(c, m);
  const Lsn rec = r == nullptr ? m.start : r->lsn;
  switch ((how >> 3) % 5) {
    case 0: q.lsn = rec; break;
    case 1: q.lsn = m.start + c.u32() % (m.end - m.start + 2 * blk + 1); break;
    case 2: q.lsn = m.start + c.u16() % ((m.end - m.start) / blk + 2) * blk; break;
    case 3: q.lsn = c.u64(); break;
    default: q.lsn = rec + static_cast<std::int8_t>(c.u8()); break;
  }
  if (m.queries.size() < kMaxQueries) m.queries.push_back(q);
}

}  // namespace walfuzz
