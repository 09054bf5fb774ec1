// The properties wal_reader_fuzz holds every record a WalReader returns to, judged from the
// bytes the run wrote (WalModel), with checks written here again rather than borrowed from
// the reader, so a reader that skips one is caught:
//   * identity: every page the record touches has the magic, allowed info bits, the reader's
//     timeline and xlp_pageaddr equal to its own LSN, the long header exactly on a segment's
//     first page, and that first page names the reader's segment size, block size and system
//     identifier; continuation pages carry the contrecord flag and the exact xlp_rem_len;
//   * content: xl_tot_len in bounds, the CRC-32C recomputed over the reassembled bytes equals
//     xl_crc, header fields, data header and payload equal what the reader returned, and
//     end_lsn is the 8-aligned end of its last byte;
//   * chain (ChainCheck): xl_prev below the record's LSN always, and between two records
//     read without repositioning, xl_prev names the one before, the record starts where that
//     one ended, and xl_xid (the writer's epoch) never decreases.
// A failed property aborts (fuzz_util.h's check), which libFuzzer reports with the input.
//
// Not for: anything but the fuzz target. Thread-safety: none.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS (target wal_reader_fuzz).
#pragma once

#include <cstdint>
#include <optional>

#include "wal_model.h"
#include "walseg/wal_reader.h"

namespace walfuzz {

/// What a reader was told or learnt: the geometry its records are judged in.
struct ReaderGeometry {
  std::uint64_t segment_size_bytes = 0;
  std::uint32_t block_size_bytes = 0;
  walseg::TimeLineId timeline = 0;
  std::optional<std::uint64_t> system_id;
};

ReaderGeometry geometry_of(const walseg::WalReader& reader);

/// Aborts unless `rec` passes the identity and content properties above in the model's bytes.
void check_record(const WalModel& m, const ReaderGeometry& g, const walseg::WalRecord& rec);

/// The chain property over the records of one reader between positionings.
class ChainCheck {
 public:
  /// After open, seek or find_next_record: the next record only needs xl_prev below itself.
  void reset() { last_.reset(); }
  void add(const ReaderGeometry& g, const walseg::WalRecord& rec);
  /// The end_lsn of the last record added since reset, if any.
  std::optional<Lsn> last_end() const;

 private:
  struct Link {
    Lsn lsn, end;
    std::uint32_t xid;
  };
  std::optional<Link> last_;
};

}  // namespace walfuzz
