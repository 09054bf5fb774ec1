// PageSource (private to src/wal): reads the pages of one timeline's WAL from a directory and
// validates each page header, classifying every page that cannot be used.
//
// Classification (the reader turns it into "end of WAL" or "corruption", wal_reader.h):
//   kMissingSegment  no segment file to read: none by that name, or a symbolic link or
//                    anything else that is not a regular file in its place (the reason says which);
//   kZero            the header bytes are all zeros (never written; a file shorter than the
//                    page reads as zeros too, for files that grow by appends);
//   kStale           a well-formed header whose xlp_pageaddr is below the page's LSN: the page
//                    is left from an earlier life of a recycled file (DESIGN.md invariant 5);
//   kInvalid         anything else wrong: magic, info bits, a later page address, timeline,
//                    long header present where it must not be or missing where it must be,
//                    system identifier, segment size or block size.
// When a read enters a segment anywhere but at its first page, the first page is validated
// first (as PostgreSQL's ReadPageInternal does), so the long header is checked once per segment.
//
// Thread-safety: none; one reader thread. Lifetime: page() is valid until the next read().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "walseg/directory.h"
#include "walseg/file.h"
#include "walseg/segment_name.h"
#include "walseg/wal_format.h"

namespace walseg::wal_detail {

/// What the reader knows about the WAL it reads. system_id nullopt: taken from the first valid
/// long header read, then enforced.
struct Geometry {
  std::uint64_t segment_size_bytes = 0;
  std::uint32_t block_size_bytes = 0;
  TimeLineId timeline = 1;
  std::optional<std::uint64_t> system_id;
};

enum class PageStatus { kOk, kMissingSegment, kZero, kStale, kInvalid };

struct PageResult {
  PageStatus status = PageStatus::kOk;
  std::string reason;        ///< empty for kOk
  std::string path;          ///< segment file of the page
  std::uint64_t offset = 0;  ///< byte offset of the page in that file
  bool ok() const { return status == PageStatus::kOk; }
};

class PageSource {
 public:
  /// Reads the segments of `dir` (its own descriptor: the one the caller opened or locked).
  PageSource(Directory dir, Geometry geometry);

  /// Reads the page starting at page_lsn (a page boundary) and validates its header. On kOk,
  /// page() holds block_size_bytes bytes and header() the decoded header. Throws walseg::Error
  /// only for I/O failures (open other than ENOENT, read).
  PageResult read(Lsn page_lsn);
  /// Validates only the header of the page at page_lsn (reads kLongPageHeaderBytes), without
  /// checking the segment's first page and without changing page(). For look-ahead.
  PageResult probe(Lsn page_lsn);

  /// Forgets the cached page and open file, so the next read sees what is on disk now.
  void invalidate();

  const std::byte* page() const { return page_.data(); }
  const PageHeader& header() const { return header_; }
  const Geometry& geometry() const { return g_; }
  const Directory& directory() const { return dir_; }
  std::string segment_path(SegNo segno) const;
  std::string path_of(Lsn lsn) const;
  std::uint64_t file_offset(Lsn lsn) const { return lsn % g_.segment_size_bytes; }

 private:
  // Opens segment segno (cached); nullopt when open, else why there is no segment file to read.
  std::optional<std::string> open_segment(SegNo segno);
  // Reads n bytes at the segment offset into out, zero-filling past the end of the file.
  void read_bytes(std::uint64_t offset, std::byte* out, std::size_t n);
  // Checks the header at hdr (kLongPageHeaderBytes readable); adopt: learn the system id.
  PageResult validate(Lsn page_lsn, const std::byte* hdr, bool adopt);
  PageResult result(PageStatus status, Lsn page_lsn, std::string reason) const;

  std::string dir_path_;
  Directory dir_;
  Geometry g_;
  std::optional<SegNo> open_segno_;
  File file_;
  std::optional<SegNo> checked_segno_;  // segment whose first page was validated
  std::optional<Lsn> cached_page_;      // LSN of the page in page_
  std::vector<std::byte> page_;
  PageHeader header_;
};

}  // namespace walseg::wal_detail
