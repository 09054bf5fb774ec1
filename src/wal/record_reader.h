// RecordReader (private to src/wal): reads one record at a WAL position through a PageSource,
// reassembling it across pages and checking everything PostgreSQL's XLogDecodeNextRecord,
// ValidXLogRecordHeader, ValidXLogRecord and DecodeXLogRecord check for a main-data-only
// record: record offset, length bounds, resource manager id, xl_prev, the continuation flag
// and xlp_rem_len of every further page, CRC-32C, and the data header's length.
//
// It never trusts a length before the bytes that carry it were validated: buffers grow as
// pages are read, so a garbage xl_tot_len costs at most one page of memory.
//
// Thread-safety: none. Lifetime: the PageSource must outlive the RecordReader; a returned
// payload span is valid until the next read().
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "page_source.h"

namespace walseg::wal_detail {

struct DecodedRecord {
  Lsn lsn = 0;      ///< LSN of the record header
  Lsn end_lsn = 0;  ///< next insert position (8-aligned end)
  RecordHeader header;
  std::span<const std::byte> payload;
};

/// Why a record could not be read, and what look-ahead needs to classify it.
struct ReadFailure {
  std::string reason;
  std::string path;          ///< segment file where the problem was detected
  std::uint64_t offset = 0;  ///< byte offset of the problem in that file
  Lsn detected_page = 0;     ///< page on which it was detected; look-ahead starts after it
  Lsn record_lsn = 0;        ///< the record's header LSN (or the position tried)
  /// Set when the record's bytes were all read (the failure is its CRC, xl_prev or data
  /// header): where the next record would start, so look-ahead can try it.
  std::optional<Lsn> next_lsn;
  PageStatus page_status = PageStatus::kOk;  ///< the page's class when a page failed
};

class RecordReader {
 public:
  explicit RecordReader(PageSource& pages) : pages_(pages) {}

  /// Reads the record at pos: a page boundary (the page header is skipped; a page that starts
  /// with a continuation is a failure) or a record LSN. expected_prev: xl_prev must equal it;
  /// nullopt: xl_prev must only be below the record's LSN (random access, as PostgreSQL).
  /// Returns true and fills *out, or false and fills *failure. Throws only for I/O errors.
  bool read(Lsn pos, std::optional<Lsn> expected_prev, DecodedRecord* out, ReadFailure* failure);

 private:
  bool fail(ReadFailure* f, Lsn at, Lsn page, std::string reason) const;
  bool fail_page(ReadFailure* f, Lsn page, const PageResult& r) const;
  // Reads the rest of a record of total_len bytes whose first `buf_.size()` bytes came from
  // `page`, page by page. Sets *last_end to the end of its last byte.
  bool read_continuation(Lsn rec, Lsn page, std::uint32_t total_len,
                         std::optional<Lsn> expected_prev, Lsn* last_end, ReadFailure* f);
  bool check_header(Lsn rec, Lsn page, std::optional<Lsn> expected_prev, ReadFailure* f) const;
  bool decode_payload(Lsn rec, Lsn page, DecodedRecord* out, ReadFailure* f) const;

  PageSource& pages_;
  std::vector<std::byte> buf_;  // the record being assembled, header first
};

}  // namespace walseg::wal_detail
