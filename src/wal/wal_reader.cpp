// WalReader and find_end_of_wal (include/walseg/wal_reader.h): where reading starts, the
// record loop, and the look-ahead that tells a torn tail from damage before valid WAL.
#include "walseg/wal_reader.h"

#include <fcntl.h>

#include <cerrno>

#include <fmt/format.h>

#include "page_source.h"
#include "record_reader.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/file.h"

namespace walseg {

using wal_detail::DecodedRecord;
using wal_detail::Geometry;
using wal_detail::PageStatus;
using wal_detail::ReadFailure;

namespace {

constexpr std::string_view kOp = "read WAL";

// Lowest segment of `tli` among the directory's regular files named validly for `size`.
std::optional<SegNo> lowest_segment(const std::vector<Directory::Entry>& entries,
                                    TimeLineId tli, std::uint64_t size) {
  std::optional<SegNo> best;
  for (const auto& e : entries) {
    if (!e.is_regular) continue;
    const auto name = parse_segment_file_name(e.name, size);
    if (name && name->timeline == tli && (!best || name->segno < *best)) best = name->segno;
  }
  return best;
}

// Fills the sizes missing from `g` from the long header of the lowest-named segment file of
// the timeline. Names sort like (timeline, segment number) for every segment size, so the
// first name that parses with the most permissive size is the lowest.
void learn_sizes(const Directory& d, const std::vector<Directory::Entry>& entries,
                 Geometry* g) {
  const std::string& dir = d.path();
  std::string first;
  for (const auto& e : entries) {
    const auto name = parse_segment_file_name(e.name, kMinSegmentSizeBytes);
    if (e.is_regular && name && name->timeline == g->timeline) {
      first = e.name;
      break;
    }
  }
  if (first.empty())
    throw make_error(EINVAL, kOp, dir,
                     fmt::format("cannot learn the WAL segment size of directory \"{}\": it has "
                                 "no segment file of timeline {}",
                                 dir, g->timeline));
  const std::string path = d.path_of(first);
  struct stat found{};
  File f = File::open_at_if_regular(d, first, O_RDONLY, found);  // a device is never opened
  if (!f.is_open())
    throw make_error(EINVAL, kOp, path,
                     fmt::format("cannot learn the WAL segment size from \"{}\": it is not a regular file", path));
  std::byte hdr[kLongPageHeaderBytes] = {};
  const std::size_t n = f.pread(hdr, sizeof hdr, 0);
  const PageHeader h = decode_page_header(hdr);
  if (n < sizeof hdr || h.magic != kWalPageMagic || !h.is_long())
    throw make_error(EINVAL, kOp, path,
                     fmt::format("cannot learn the WAL segment size from file \"{}\": its first "
                                 "page has no valid long page header",
                                 path));
  if (!g->segment_size_bytes) g->segment_size_bytes = h.segment_size_bytes;
  if (!g->block_size_bytes) g->block_size_bytes = h.block_size_bytes;
}

}  // namespace

struct WalReader::Impl {
  Impl(const Directory& dir, const Geometry& g, std::optional<SegNo> lowest, const WalReaderOptions& o)
      : dir_path(dir.path()), pages(dir.duplicate(), g), reporter(o.reporter), lowest_segno(lowest),
        durable_lsn(o.durable_lsn) {}

  std::uint32_t blk() const { return pages.geometry().block_size_bytes; }
  std::uint64_t seg() const { return pages.geometry().segment_size_bytes; }
  Lsn skip_continuation(Lsn page);
  std::string later_wal(const ReadFailure& f);
  std::optional<SegNo> wal_after_missing_segment(const ReadFailure& f);
  std::optional<SegNo> last_segment_with_wal();
  void stop_at(const ReadFailure& f);
  bool from_earlier_life(const DecodedRecord& d);

  std::string dir_path;
  wal_detail::PageSource pages;
  wal_detail::RecordReader records{pages};
  WalReporter* reporter;
  std::optional<SegNo> lowest_segno;
  std::optional<Lsn> durable_lsn;
  Lsn pos = 0;
  std::optional<Lsn> prev;  // xl_prev the next record must carry; nullopt after a seek
  std::optional<std::uint32_t> last_xid;  // xl_xid of the last record read (the writer's epoch)
  bool stopped = false;
  WalStop stop;
};

// XLogFindNextRecord's walk: from a page boundary, skip the pages (and the part of a page)
// holding the rest of a record that began before `page`. A page that cannot be read ends the
// walk there, and next() reports it.
Lsn WalReader::Impl::skip_continuation(Lsn page) {
  for (;;) {
    if (!pages.read(page).ok()) return page;
    const PageHeader& h = pages.header();
    if ((h.info & kPageFirstIsContRecord) == 0) return page;
    const std::uint64_t rest = wal_align(h.rem_len);
    if (rest < blk() - h.size_bytes()) return page + h.size_bytes() + rest;
    page += blk();
  }
}

// The look-ahead of wal_reader.h: returns what valid WAL of this life follows the failure, or
// "" when none does (a clean end).
std::string WalReader::Impl::later_wal(const ReadFailure& f) {
  if (f.next_lsn) {
    DecodedRecord d;
    ReadFailure ignored;
    if (records.read(*f.next_lsn, f.record_lsn, &d, &ignored))
      return fmt::format("the record at {} after it is valid and links back to it",
                         format_lsn(d.lsn));
  }
  // Pages after the failure: the rest of its segment (unless the segment is missing), then
  // the first page of the next segment. Bounded, so recovery reads at most one more segment.
  const Lsn seg_end = f.detected_page - f.detected_page % seg() + seg();
  Lsn q = f.page_status == PageStatus::kMissingSegment ? seg_end : f.detected_page + blk();
  for (; q <= seg_end; q += blk()) {
    const auto r = pages.probe(q);
    if (r.ok()) return fmt::format("the page at {} has a valid header", format_lsn(q));
    if (r.status == PageStatus::kMissingSegment && q < seg_end) q = seg_end - blk();
  }
  return {};
}

// A segment is installed durably before the writer is handed the next one, and only segments
// below the WAL's start are ever removed, so no power cut leaves a missing segment with WAL
// after it: a later segment whose first page is this WAL's own proves that one was lost
// (removed or moved by hand), however far ahead it lies.
std::optional<SegNo> WalReader::Impl::wal_after_missing_segment(const ReadFailure& f) {
  const std::optional<SegNo> last = last_segment_with_wal();
  if (!last || *last <= segno_of_lsn(f.detected_page, seg())) return std::nullopt;
  return last;
}

std::optional<SegNo> WalReader::Impl::last_segment_with_wal() {
  const auto entries = pages.directory().list();
  // Names sort like (timeline, segment number): the first one that holds WAL from the end is it.
  for (auto e = entries.rbegin(); e != entries.rend(); ++e) {
    const auto name = parse_segment_file_name(e->name, seg());
    if (!e->is_regular || !name || name->timeline != pages.geometry().timeline) continue;
    if (pages.probe(lsn_of_segment(name->segno, 0, seg())).ok()) return name->segno;
  }
  return std::nullopt;
}

void WalReader::Impl::stop_at(const ReadFailure& f) {
  stopped = true;
  stop = WalStop{};
  stop.end_lsn = pos;
  stop.failed_lsn = f.record_lsn;
  stop.path = f.path;
  stop.offset = f.offset;
  stop.detected_page = f.detected_page;
  stop.reason = f.reason;
  stop.evidence = later_wal(f);
  // With a durable position known (walseg.control), it alone decides: a power cut may keep
  // any subset of what was written after the last sync, so valid pages after a stop past it
  // are a torn write, not damage, while a stop before it has lost acknowledged records.
  // Without one, the look-ahead decides (and may take a torn write for damage).
  stop.corruption = durable_lsn ? pos < *durable_lsn : !stop.evidence.empty();
  // The writer syncs a segment before it writes into the next (wal_write_out.cpp): WAL of this
  // system in a later segment means everything before it was on disk, so a stop here is
  // damage whatever the durable point says (break-it round 6 F3: 16 bytes damaged in segment
  // 2, segments 3 to 31 full of acknowledged WAL, "corruption: no", 4739 records overwritten).
  if (!stop.corruption && f.page_status != PageStatus::kMissingSegment) {
    const SegNo here = segno_of_lsn(f.detected_page, seg());
    if (const std::optional<SegNo> later = last_segment_with_wal(); later && *later > here) {
      stop.corruption = true;
      stop.evidence = fmt::format("segment \"{}\" after it holds WAL of this system, and walseg syncs a segment "
                                  "before it writes into the next",
                                  segment_file_name(pages.geometry().timeline, *later, seg()));
    }
  }
  if (f.page_status == PageStatus::kMissingSegment) {
    if (const std::optional<SegNo> later = wal_after_missing_segment(f)) {
      const TimeLineId tli = pages.geometry().timeline;
      const std::string later_name = segment_file_name(tli, *later, seg());
      stop.corruption = true;
      stop.evidence = fmt::format("segment \"{}\" is missing, but segment \"{}\" after it holds WAL of this system",
                                  segment_file_name(tli, segno_of_lsn(f.detected_page, seg()), seg()), later_name);
      stop.gap = fmt::format("{} (file \"{}\"), but segment \"{}\" after it holds WAL of this system", f.reason,
                             f.path, later_name);
    }
  }
  if (stop.corruption && stop.evidence.empty())
    stop.evidence = fmt::format("records up to {} were acknowledged (walseg.control's durable LSN)",
                                format_lsn(*durable_lsn));
  if (stop.corruption && reporter) reporter->corruption(stop);
}

// Records of one writer's life share xl_xid (its epoch) and a later life's are larger. A
// record whose epoch is below the one before it was left at the same LSN by a write a crash
// tore and this life never wrote there: its bytes, CRC and even xl_prev can be right, since
// the same records may fall at the same positions. It ends the WAL like any unreadable one.
bool WalReader::Impl::from_earlier_life(const DecodedRecord& d) {
  if (!last_xid || d.header.xid >= *last_xid) return false;
  ReadFailure f;
  f.reason = fmt::format("record at {} was written by an earlier writer (epoch {} after {}): a write a crash "
                         "tore left it",
                         format_lsn(d.lsn), d.header.xid, *last_xid);
  f.path = pages.path_of(d.lsn);
  f.offset = segment_offset(d.lsn, seg());
  f.detected_page = d.lsn - d.lsn % blk();
  f.record_lsn = d.lsn;
  stop_at(f);
  return true;
}

WalReader WalReader::open(const std::string& dir_path, const WalReaderOptions& options) {
  return open(Directory::open(dir_path), options);
}

WalReader WalReader::open(const Directory& dir, const WalReaderOptions& options) {
  const std::string& dir_path = dir.path();
  const auto entries = dir.list();
  Geometry g;
  g.timeline = options.timeline;
  g.system_id = options.system_id;
  g.segment_size_bytes = options.segment_size_bytes.value_or(0);
  g.block_size_bytes = options.block_size_bytes.value_or(0);
  if (g.segment_size_bytes == 0 || g.block_size_bytes == 0) learn_sizes(dir, entries, &g);
  check_segment_size(g.segment_size_bytes);
  if (!is_valid_wal_block_size(g.block_size_bytes) || g.block_size_bytes > g.segment_size_bytes)
    throw make_error(EINVAL, kOp, dir_path,
                     fmt::format("invalid WAL block size {} bytes for directory \"{}\"",
                                 g.block_size_bytes, dir_path));
  if (options.start_lsn) {
    if (*options.start_lsn % g.block_size_bytes != 0)
      throw make_error(EINVAL, kOp, dir_path,
                       fmt::format("WAL start {} is not a page boundary", format_lsn(*options.start_lsn)));
    WalReader reader(std::make_unique<Impl>(dir, g, segno_of_lsn(*options.start_lsn, g.segment_size_bytes),
                                            options));
    reader.seek(*options.start_lsn);
    return reader;
  }
  const auto lowest = lowest_segment(entries, g.timeline, g.segment_size_bytes);
  WalReader reader(std::make_unique<Impl>(dir, g, lowest, options));
  if (lowest) reader.seek(lsn_of_segment(*lowest, 0, g.segment_size_bytes));
  return reader;
}

WalReader::WalReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WalReader::WalReader(WalReader&&) noexcept = default;
WalReader& WalReader::operator=(WalReader&&) noexcept = default;
WalReader::~WalReader() = default;

Lsn WalReader::start_lsn() const {
  return impl_->lowest_segno ? lsn_of_segment(*impl_->lowest_segno, 0, impl_->seg()) : 0;
}

void WalReader::seek(Lsn lsn) {
  Impl& m = *impl_;
  m.stopped = false;
  m.stop = WalStop{};
  m.prev.reset();
  m.last_xid.reset();
  m.pages.invalidate();  // a writer may have written since the last read
  if (lsn % m.blk() == 0) {
    m.pos = m.skip_continuation(lsn);
    return;
  }
  const std::size_t header = lsn % m.seg() < m.blk() ? kLongPageHeaderBytes
                                                     : kShortPageHeaderBytes;
  if (lsn % kWalAlignBytes != 0 || lsn % m.blk() < header)
    throw make_error(EINVAL, kOp, m.dir_path,
                     fmt::format("WAL position {} is neither a page boundary nor a possible "
                                 "record start",
                                 format_lsn(lsn)));
  m.pos = lsn;
}

std::optional<Lsn> WalReader::find_next_record(Lsn lsn) {
  Impl& m = *impl_;
  seek(lsn - lsn % m.blk());
  if (!m.lowest_segno) return std::nullopt;  // next() says that there is no segment
  DecodedRecord d;
  ReadFailure f;
  for (;;) {
    const Lsn at = m.pos;
    const std::optional<Lsn> prev = m.prev;
    if (!m.records.read(at, prev, &d, &f)) {
      m.stop_at(f);
      return std::nullopt;
    }
    if (d.lsn >= lsn) {
      // Back to where this record was read from (its page boundary, perhaps), so that next()
      // returns it: a second read of its pages, once per call.
      m.pos = at;
      m.prev = prev;
      return d.lsn;
    }
    m.prev = d.lsn;
    m.pos = d.end_lsn;
  }
}

bool WalReader::next(WalRecord* record) {
  Impl& m = *impl_;
  if (m.stopped) return false;
  if (!m.lowest_segno) {
    m.stopped = true;
    m.stop = WalStop{};
    m.stop.reason = fmt::format("no WAL segment file of timeline {} in directory \"{}\"",
                                m.pages.geometry().timeline, m.dir_path);
    return false;
  }
  DecodedRecord d;
  ReadFailure f;
  if (!m.records.read(m.pos, m.prev, &d, &f)) {
    m.stop_at(f);
    return false;
  }
  if (m.from_earlier_life(d)) return false;
  m.last_xid = d.header.xid;
  *record = WalRecord{d.lsn, d.end_lsn, d.header.prev, d.header.xid,
                      d.header.info, d.header.rmid, d.payload};
  m.prev = d.lsn;
  m.pos = d.end_lsn;
  return true;
}

const WalStop& WalReader::stop() const { return impl_->stop; }
std::optional<SegNo> WalReader::last_segment_with_wal() { return impl_->last_segment_with_wal(); }
std::uint64_t WalReader::segment_size_bytes() const { return impl_->seg(); }
std::uint32_t WalReader::block_size_bytes() const { return impl_->blk(); }
TimeLineId WalReader::timeline() const { return impl_->pages.geometry().timeline; }
std::optional<std::uint64_t> WalReader::system_id() const {
  return impl_->pages.geometry().system_id;
}

WalReaderOptions reader_options_for(const WalControl& control) {
  WalReaderOptions o;
  o.timeline = control.timeline;
  o.segment_size_bytes = control.segment_size_bytes;
  o.block_size_bytes = control.block_size_bytes;
  o.system_id = control.system_id;
  o.start_lsn = control.oldest_lsn;
  o.durable_lsn = control.durable_lsn;
  return o;
}

std::string describe(const WalStop& stop) {
  std::string s = stop.reason;
  if (!stop.path.empty()) s += fmt::format(" (file \"{}\", offset {})", stop.path, stop.offset);
  if (stop.corruption) s += fmt::format("; corruption: {}", stop.evidence);
  return s;
}

RecoveryResult find_end_of_wal(const std::string& dir_path, const WalReaderOptions& options,
                               std::optional<Lsn> from) {
  return find_end_of_wal(Directory::open(dir_path), options, from);
}

RecoveryResult find_end_of_wal(const Directory& dir, const WalReaderOptions& options, std::optional<Lsn> from) {
  WalReader reader = WalReader::open(dir, options);
  if (from) reader.seek(*from);
  RecoveryResult result;
  WalRecord record;
  while (reader.next(&record)) {
    ++result.records;
    result.last_record_lsn = record.lsn;
    result.last_xid = record.xid;
  }
  const WalStop& stop = reader.stop();
  result.end_lsn = stop.end_lsn;
  result.stop_reason = describe(stop);
  result.corruption = stop.corruption;
  result.stop_page = stop.detected_page;
  result.gap = stop.gap;
  return result;
}

std::string describe_corruption(const RecoveryResult& r, Lsn durable_lsn) {
  if (!r.gap.empty())
    return fmt::format("{}. Put that segment file back into the directory (from where it was moved, or from a "
                       "backup)",
                       r.gap);
  // Found by what follows the stop (later WAL), not by the durable point.
  if (r.end_lsn >= durable_lsn)
    return fmt::format("its WAL cannot be read past {}, though WAL of it follows ({}). Copy the directory away "
                       "for investigation, or restore it from a backup",
                       format_lsn(r.end_lsn), r.stop_reason);
  return fmt::format("records before its durable point {} cannot be read ({}). Copy the directory away for "
                     "investigation, or restore it from a backup",
                     format_lsn(durable_lsn), r.stop_reason);
}

}  // namespace walseg
