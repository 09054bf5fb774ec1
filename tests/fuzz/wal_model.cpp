// The in-memory WAL directory of wal_reader_fuzz (wal_model.h): encoding, byte access, and
// writing it out.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS (target wal_reader_fuzz).
#include "wal_model.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "walseg/segment_name.h"
#include "walseg/wal_control.h"

namespace walfuzz {
namespace {

using walseg::EncoderParams;

// The reader walks every page a record touches, so the WAL is kept to this many pages
// whatever the block size: small blocks give many pages, large blocks segment crossings.
constexpr std::uint64_t kMaxWalPages = 512;
constexpr std::uint32_t kTimelines[] = {1, 2, 0x7FFFFFFF, 0xFFFFFFFF};

// Payload bytes: one pattern, sliced at a different place per record, so that records differ
// and a payload read from the wrong place does not compare equal.
const std::vector<std::byte>& pattern() {
  static const std::vector<std::byte> bytes = [] {
    std::vector<std::byte> b(2 * kFuzzSegmentBytes);
    std::uint32_t x = 0x9E3779B9u;
    for (auto& v : b) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      v = static_cast<std::byte>(x);
    }
    return b;
  }();
  return bytes;
}

std::size_t payload_size(std::uint16_t code) {
  const std::size_t v = code & 0x3FFF;
  switch (code >> 14) {
    case 0: return code % 256;
    case 1: return v;
    case 2: return v * 16;
    default: return v * 64;
  }
}

SegNo first_segno(Cursor& c, std::uint8_t mode, std::uint64_t nsegs) {
  switch (mode) {
    case 2: return 2 + c.u16();
    case 3: return walseg::max_segno(kFuzzSegmentBytes) - (nsegs - 1);
    default: return 1;
  }
}

std::vector<std::byte> encoded_control(const walseg::WalControl& v) {
  std::vector<std::byte> b(walseg::kControlFileBytes);
  walseg::encode_control(v, b.data());
  return b;
}

}  // namespace

std::string WalModel::file_of(Lsn lsn) const {
  return walseg::segment_file_name(params.timeline, lsn / kFuzzSegmentBytes, kFuzzSegmentBytes);
}

Lsn WalModel::record_byte_lsn(Lsn rec, std::uint64_t k) const {
  const std::uint64_t blk = params.block_size_bytes;
  Lsn pos = rec;
  for (;;) {
    const std::uint64_t room = blk - pos % blk;
    if (k < room) return pos + k;
    k -= room;
    pos += room;  // a page boundary: its header is not record bytes
    pos += walseg::page_header_bytes(params, pos);
  }
}

bool WalModel::read(const std::string& name, std::uint64_t off, std::byte* out,
                    std::size_t n) const {
  const auto it = files.find(name);
  if (it == files.end() || it->second.kind != ModelFile::Kind::kRegular) return false;
  const auto& b = it->second.bytes;
  std::memset(out, 0, n);
  if (off < b.size()) std::memcpy(out, b.data() + off, std::min<std::uint64_t>(n, b.size() - off));
  return true;
}

void WalModel::write(const std::string& name, std::uint64_t off, const std::byte* in,
                     std::size_t n) {
  const auto it = files.find(name);
  if (it == files.end() || it->second.kind != ModelFile::Kind::kRegular || n == 0) return;
  // Bounded so a mutation far past a segment's end cannot make a huge sparse-less file.
  if (off > 2 * kFuzzSegmentBytes) return;
  ModelFile& f = it->second;
  if (f.bytes.size() < off + n) f.bytes.resize(off + n);
  std::memcpy(f.bytes.data() + off, in, n);
  f.size = std::max<std::uint64_t>(f.size, off + n);
  note_change(name, off);
}

void WalModel::note_change(const std::string& name, std::uint64_t off) {
  mutated = true;
  const auto seg = walseg::parse_segment_file_name(name, kFuzzSegmentBytes);
  if (!seg || seg->timeline != params.timeline) return;
  const Lsn at = seg->segno * kFuzzSegmentBytes + std::min(off, kFuzzSegmentBytes - 1);
  first_change = std::min(first_change, at);
}

void WalModel::encode_records(Cursor& c, std::uint64_t room) {
  const unsigned count = 1 + c.u8() % 32;
  const walseg::WalSink sink = [this](Lsn lsn, const std::byte* data, std::size_t len) {
    ModelFile& f = files[file_of(lsn)];
    if (f.bytes.empty()) f.bytes.reserve(kFuzzSegmentBytes);  // one allocation per segment
    const std::uint64_t off = lsn % kFuzzSegmentBytes;
    if (f.bytes.size() < off + len) f.bytes.resize(off + len);
    std::memcpy(f.bytes.data() + off, data, len);
  };
  Lsn pos = start, prev = 0;
  for (unsigned i = 0; i < count; ++i) {
    const std::size_t n = std::min(payload_size(c.u16()), pattern().size() / 2);
    const std::uint8_t info = c.u8() & 0xF0;
    Lsn rec = 0;
    const Lsn next = walseg::reserve_record(params, pos, n, &rec);
    if (next < pos || next - start > room) break;  // would wrap or leave the budget
    const std::size_t from = (i * 4099) % (pattern().size() / 2);
    const std::span<const std::byte> payload(pattern().data() + from, n);
    walseg::encode_record(params, pos, prev, info, payload, sink, nullptr);
    const auto total = static_cast<std::uint32_t>(walseg::kRecordHeaderBytes +
                                                  walseg::data_header_bytes(n) + n);
    records.push_back({rec, next, total, static_cast<std::uint32_t>(n)});
    prev = rec;
    pos = next;
  }
  end = pos;
}

// Segments the WAL did not reach, as the segment manager leaves them: a ready stamp, then
// zeros (or nothing, in append mode).
void WalModel::size_segments(std::uint64_t nsegs, bool append) {
  for (std::uint64_t s = 0; s < nsegs; ++s) {
    const Lsn seg_lsn = start + s * kFuzzSegmentBytes;
    ModelFile& f = files[file_of(seg_lsn)];
    if (f.bytes.empty()) {
      walseg::PageHeader h;
      h.info = walseg::kPageLongHeader;
      h.timeline = params.timeline;
      h.page_addr = seg_lsn;
      h.system_id = kFuzzSystemId;
      h.segment_size_bytes = kFuzzSegmentBytes;
      h.block_size_bytes = params.block_size_bytes;
      f.bytes.resize(walseg::kReadyStampBytes);
      walseg::encode_ready_stamp(h, f.bytes.data());
    }
    f.size = append ? f.bytes.size() : kFuzzSegmentBytes;
  }
}

WalModel WalModel::build(Cursor& c) {
  WalModel m;
  const std::uint8_t g = c.u8(), ids = c.u8(), ctl = c.u8();
  const std::uint8_t shift = g & 7;
  m.params.segment_size_bytes = kFuzzSegmentBytes;
  m.params.block_size_bytes = shift <= 6 ? 1024u << shift : 8192u;
  m.params.timeline = kTimelines[(ids >> 2) & 3];
  m.params.system_id = kFuzzSystemId;
  m.params.xid = ids >> 4;
  const bool append = (g >> 5) & 1;
  const std::uint64_t nsegs = ((g >> 3) & 3) % 3 + 1;
  m.start = first_segno(c, ids & 3, nsegs) * kFuzzSegmentBytes;
  m.encode_records(c, std::min(nsegs * kFuzzSegmentBytes - 64,
                               kMaxWalPages * m.params.block_size_bytes));
  m.size_segments(nsegs, append);

  walseg::WalControl& v = m.control_values;
  v.system_id = kFuzzSystemId;
  v.segment_size_bytes = kFuzzSegmentBytes;
  v.block_size_bytes = m.params.block_size_bytes;
  v.timeline = m.params.timeline;
  v.append_mode = append;
  v.oldest_lsn = m.start;
  v.epoch = m.params.xid;
  const std::array<Lsn, 4> durable = {
      m.end, 0, m.records.empty() ? 0 : m.records[m.records.size() / 2].end,
      m.end + m.params.block_size_bytes};
  v.durable_lsn = durable[ctl & 3];
  m.control = encoded_control(v);
  return m;
}

void WalModel::write_to(const std::string& dir) const {
  auto put = [](const std::string& path, const std::vector<std::byte>& b, std::uint64_t size) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    check(fd >= 0, "cannot create a file in the scratch directory");
    check(b.empty() || ::pwrite(fd, b.data(), b.size(), 0) == static_cast<ssize_t>(b.size()),
          "short write to the scratch directory");
    check(::ftruncate(fd, static_cast<off_t>(size)) == 0, "cannot size a scratch file");
    ::close(fd);
  };
  for (const auto& [name, f] : files) {
    const std::string path = dir + "/" + name;
    switch (f.kind) {
      case ModelFile::Kind::kRegular: put(path, f.bytes, f.size); break;
      case ModelFile::Kind::kSymlink: check(::symlink(f.link_target.c_str(), path.c_str()) == 0, "symlink"); break;
      case ModelFile::Kind::kDirectory: check(::mkdir(path.c_str(), 0700) == 0, "mkdir"); break;
      case ModelFile::Kind::kFifo: check(::mkfifo(path.c_str(), 0600) == 0, "mkfifo"); break;
    }
  }
  if (control) put(dir + "/" + walseg::kControlFileName, *control, control->size());
}

}  // namespace walfuzz
