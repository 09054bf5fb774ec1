// The WAL directory a wal_reader_fuzz run reads, held in memory: built by walseg's own encoder
// from the first bytes of the fuzzer's input, then changed by the mutations (wal_mutate.h),
// then written to the scratch directory in one pass. The properties (wal_check.h) are judged
// against these bytes, which are exactly what is on disk, never against the reader's view.
//
// Input layout read by WalModel::build (the Cursor reads zeros past the end of the input):
//   byte 0   block size 1 kB << (b & 7) (7: 8 kB); ((b >> 3) & 3) % 3 + 1 segments of 1 MB;
//            bit 5: append mode (files end where their bytes end, control flag set)
//   byte 1   bits 0-1: first segment (0,1: segment 1; 2: 2 + u16 read next; 3: the last
//            segments of the 64-bit LSN space); bits 2-3: timeline (1, 2, 0x7FFFFFFF,
//            0xFFFFFFFF); bits 4-7: the writer's epoch (xl_xid of every record)
//   byte 2   bits 0-1: durable LSN in the control file (end of WAL, 0, the end of the middle
//            record, one page past the end); bits 2-7: unused
//   [u16]    only with first-segment mode 2: the first segment is 2 + this
//   byte     record count, 1 + b % 32
//   then per record: u16 size code (class = code >> 14: payload code % 256, code & 0x3FFF,
//            (code & 0x3FFF) * 16, (code & 0x3FFF) * 64 bytes), u8 xl_info (high nibble used)
// Records stop early when the WAL would leave its segments or its page budget (which keeps
// one run to a few milliseconds). Segments the WAL does not reach hold a ready stamp, as the
// segment manager's preallocated files do.
//
// Not for: anything but the fuzz target. Thread-safety: none.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS (target wal_reader_fuzz).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "walseg/wal_encoder.h"
#include "walseg/wal_format.h"

namespace walfuzz {

using walseg::Lsn;
using walseg::SegNo;

inline constexpr std::uint64_t kFuzzSegmentBytes = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kFuzzSystemId = 0x0123456789ABCDEFull;

/// One directory entry as the run writes it.
struct ModelFile {
  enum class Kind { kRegular, kSymlink, kDirectory, kFifo };
  Kind kind = Kind::kRegular;
  std::vector<std::byte> bytes;  ///< the first bytes of the file; zeros (a hole) up to size
  std::uint64_t size = 0;        ///< file size (>= bytes.size())
  std::string link_target;       ///< kSymlink only: another entry's name
};

/// A record as the encoder wrote it, before any mutation.
struct OriginalRecord {
  Lsn lsn = 0;
  Lsn end = 0;  ///< next insert position after it
  std::uint32_t total_len = 0;
  std::uint32_t payload_len = 0;
};

/// A positioning call to make on a reader after the full reads (wal_reader_fuzz.cpp).
struct Query {
  enum class Kind { kSeek, kFindNext, kEndFrom };
  Kind kind = Kind::kSeek;
  Lsn lsn = 0;
  bool with_control = false;  ///< on the reader opened from walseg.control, else plain options
};

class WalModel {
 public:
  /// Encodes the WAL the input's first bytes describe (see the layout above).
  static WalModel build(Cursor& c);

  /// Writes every entry and the control file into the (empty) directory dir.
  void write_to(const std::string& dir) const;

  /// Reads n bytes at `off` of entry `name` as the reader sees them: zeros past the end of a
  /// regular file. False when there is no regular file of that name.
  bool read(const std::string& name, std::uint64_t off, std::byte* out, std::size_t n) const;
  /// Writes n bytes at `off` of regular file `name` (extending its size if needed) and notes
  /// the change. Does nothing for a missing or irregular entry.
  void write(const std::string& name, std::uint64_t off, const std::byte* in, std::size_t n);
  /// The file and offset of `lsn` in the geometry the WAL was written with.
  std::string file_of(Lsn lsn) const;
  std::uint64_t offset_of(Lsn lsn) const { return lsn % kFuzzSegmentBytes; }
  /// LSN of byte k of the record whose header is at rec, skipping the page headers between.
  Lsn record_byte_lsn(Lsn rec, std::uint64_t k) const;
  /// Lowers first_change to the LSN of (name, off) when name is a segment of the WAL's
  /// timeline; a change to any other entry cannot alter what a plain reader returns.
  void note_change(const std::string& name, std::uint64_t off);

  walseg::EncoderParams params;  ///< as the WAL was written (the reader may be told otherwise)
  std::map<std::string, ModelFile> files;  ///< sorted by name, as Directory::list sorts
  std::optional<std::vector<std::byte>> control;  ///< walseg.control's bytes; nullopt: none
  walseg::WalControl control_values;               ///< what control held when built
  std::vector<OriginalRecord> records;
  Lsn start = 0;  ///< first byte of the first segment
  Lsn end = 0;    ///< insert position after the last record

  Lsn first_change = std::numeric_limits<Lsn>::max();  ///< lowest LSN a mutation touched
  bool control_changed = false;  ///< walseg.control no longer says what build wrote
  bool mutated = false;          ///< any mutation was applied (even one that changed nothing)
  std::vector<Query> queries;

 private:
  // Encodes the records the input lists from `start`, within `room` bytes of WAL.
  void encode_records(Cursor& c, std::uint64_t room);
  // Gives each of the nsegs segments its size, and those the WAL did not reach a ready stamp.
  void size_segments(std::uint64_t nsegs, bool append);
};

}  // namespace walfuzz
