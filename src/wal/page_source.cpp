// Page reads and page-header validation for the WAL reader (page_source.h).
//
// The checks and their wording follow PostgreSQL's XLogReaderValidatePageHeader, with two
// differences: a page address below the expected one is its own class (kStale), because for
// walseg it means "end of WAL in a recycled file", not damage; and the timeline must equal the
// reader's, because walseg writes one timeline per directory and follows no history files.
#include "page_source.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "walseg/dir_scan.h"
#include "walseg/error.h"

namespace walseg::wal_detail {

PageSource::PageSource(Directory dir, Geometry geometry)
    : dir_path_(dir.path()), dir_(std::move(dir)), g_(geometry) {}

std::string PageSource::segment_path(SegNo segno) const {
  return dir_path_ + "/" + segment_file_name(g_.timeline, segno, g_.segment_size_bytes);
}

std::string PageSource::path_of(Lsn lsn) const {
  return segment_path(segno_of_lsn(lsn, g_.segment_size_bytes));
}

void PageSource::invalidate() {
  cached_page_.reset();
  checked_segno_.reset();
  open_segno_.reset();
  file_ = File();
}

std::optional<std::string> PageSource::open_segment(SegNo segno) {
  if (open_segno_ == segno && file_.is_open()) return std::nullopt;
  const std::string name = segment_file_name(g_.timeline, segno, g_.segment_size_bytes);
  file_ = File();
  open_segno_ = segno;
  checked_segno_.reset();
  // Through the open directory (a directory renamed meanwhile is still the one read), never
  // through a link, and without waiting on a FIFO: only a regular file can be a segment.
  // Not even opened unless it is a regular file: a device's open runs its driver (a tape
  // rewinds, a watchdog starts: break-it round 36 M, recover opened /dev/null's twin).
  struct stat found{};
  try {
    file_ = File::open_at_if_regular(dir_, name, O_RDONLY, found);
    if (!file_.is_open() && S_ISLNK(found.st_mode))
      return fmt::format("WAL segment {} is a symbolic link, not a regular file", name);
  } catch (const Error& e) {
    // A missing file is the end of the WAL, not an error; so is a symbolic link (ELOOP) in its
    // place, which is not a segment; anything else is an I/O failure.
    if (e.errnum() == ENOENT) {
      // walseg 0.1 moved segments aside under this name: the way back is one mv, and a backup
      // restored instead would lose what was written since (new-user trial 16).
      struct stat st{};
      const std::string aside = name + kBrokenSuffix;
      if (::fstatat(dir_.fd(), aside.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
        return fmt::format("WAL segment {} does not exist, but \"{}\" does: a segment walseg 0.1 moved aside under "
                           "that name. If `walseg ls` says it is this WAL's, put it back first (mv \"{}\" \"{}\")",
                           name, dir_.path_of(aside), dir_.path_of(aside), dir_.path_of(name));
      return fmt::format("WAL segment {} does not exist", name);
    }
    if (e.errnum() == ELOOP) return fmt::format("WAL segment {} is a symbolic link, not a regular file", name);
    throw;
  }
  if (!file_.is_open() || !S_ISREG(file_.stat().st_mode)) {
    file_ = File();
    return fmt::format("WAL segment {} is not a regular file", name);
  }
  return std::nullopt;
}

void PageSource::read_bytes(std::uint64_t offset, std::byte* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const std::size_t r = file_.pread(out + got, n - got, offset + got);
    if (r == 0) break;  // past the end of a short file: what was never written reads as zeros
    got += r;
  }
  std::memset(out + got, 0, n - got);
}

PageResult PageSource::result(PageStatus status, Lsn page_lsn, std::string reason) const {
  return PageResult{status, std::move(reason), path_of(page_lsn), file_offset(page_lsn)};
}

PageResult PageSource::validate(Lsn page_lsn, const std::byte* hdr, bool adopt) {
  const std::uint64_t off = file_offset(page_lsn);
  const std::string where =
      fmt::format("in WAL segment {}, LSN {}, offset {}",
                  segment_file_name(g_.timeline, segno_of_lsn(page_lsn, g_.segment_size_bytes),
                                    g_.segment_size_bytes),
                  format_lsn(page_lsn), off);
  if (std::all_of(hdr, hdr + kShortPageHeaderBytes, [](std::byte b) { return b == std::byte{0}; }))
    return result(PageStatus::kZero, page_lsn, fmt::format("zero page header {}", where));
  const PageHeader h = decode_page_header(hdr);
  if (h.magic != kWalPageMagic)
    return result(PageStatus::kInvalid, page_lsn,
                  fmt::format("invalid magic number {:04X} {}", h.magic, where));
  if ((h.info & ~kPageAllFlags) != 0)
    return result(PageStatus::kInvalid, page_lsn,
                  fmt::format("invalid info bits {:04X} {}", h.info, where));
  if (h.page_addr != page_lsn)
    return result(h.page_addr < page_lsn ? PageStatus::kStale : PageStatus::kInvalid, page_lsn,
                  fmt::format("unexpected pageaddr {} {}{}", format_lsn(h.page_addr), where,
                              h.page_addr < page_lsn ? " (left from an earlier use of the file)"
                                                     : ""));
  if (h.timeline != g_.timeline)
    return result(PageStatus::kInvalid, page_lsn,
                  fmt::format("unexpected timeline ID {} {} (expected {})", h.timeline, where,
                              g_.timeline));
  if (h.is_long() != (off == 0))
    return result(PageStatus::kInvalid, page_lsn,
                  fmt::format("{} long page header {}", off == 0 ? "missing" : "unexpected",
                              where));
  if (!h.is_long()) return {};
  if (h.segment_size_bytes != g_.segment_size_bytes || h.block_size_bytes != g_.block_size_bytes)
    return result(PageStatus::kInvalid, page_lsn,
                  fmt::format("WAL file is from a different WAL: segment size {} and block size "
                              "{} in the page header, expected {} and {}, {}",
                              h.segment_size_bytes, h.block_size_bytes, g_.segment_size_bytes,
                              g_.block_size_bytes, where));
  if (g_.system_id && h.system_id != *g_.system_id)
    return result(PageStatus::kInvalid, page_lsn,
                  fmt::format("WAL file is from a different database system: system identifier "
                              "{} in the page header, expected {}, {}",
                              h.system_id, *g_.system_id, where));
  if (adopt && !g_.system_id) g_.system_id = h.system_id;
  return {};
}

PageResult PageSource::read(Lsn page_lsn) {
  if (cached_page_ == page_lsn) return result(PageStatus::kOk, page_lsn, {});
  const SegNo segno = segno_of_lsn(page_lsn, g_.segment_size_bytes);
  const std::uint64_t off = file_offset(page_lsn);
  if (auto missing = open_segment(segno)) return result(PageStatus::kMissingSegment, page_lsn, *missing);
  if (off != 0 && checked_segno_ != segno) {
    std::byte first[kLongPageHeaderBytes];
    read_bytes(0, first, sizeof first);
    PageResult r = validate(page_lsn - off, first, true);
    if (!r.ok()) return r;
    checked_segno_ = segno;
  }
  cached_page_.reset();
  page_.resize(g_.block_size_bytes);
  read_bytes(off, page_.data(), page_.size());
  PageResult r = validate(page_lsn, page_.data(), true);
  if (!r.ok()) return r;
  header_ = decode_page_header(page_.data());
  cached_page_ = page_lsn;
  if (off == 0) checked_segno_ = segno;
  r.path = path_of(page_lsn);
  r.offset = off;
  return r;
}

PageResult PageSource::probe(Lsn page_lsn) {
  const SegNo segno = segno_of_lsn(page_lsn, g_.segment_size_bytes);
  if (auto missing = open_segment(segno)) return result(PageStatus::kMissingSegment, page_lsn, *missing);
  std::byte hdr[kLongPageHeaderBytes];
  read_bytes(file_offset(page_lsn), hdr, sizeof hdr);
  return validate(page_lsn, hdr, false);
}

}  // namespace walseg::wal_detail
