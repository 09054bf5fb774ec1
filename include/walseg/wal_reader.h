// wal_reader.h: reads the records of a walseg (or PostgreSQL-15-format) WAL directory in LSN
// order, validating every page and record, and decides where the WAL ends after a crash.
//
// Every page header is checked (magic, info bits, timeline, xlp_pageaddr equal to the page's
// LSN, the long header's system identifier, segment size and block size on the first page of
// each segment, the continuation flag and xlp_rem_len), and every record (length bounds,
// resource manager id, xl_prev equal to the previous record's LSN, CRC-32C, data header).
//
// Where reading stops, and what that means (doc/wal_format.md, "End of WAL"):
//   The reader stops at the first record it cannot read: zeros where a page or record header
//   should be, a missing segment file, a page left from an earlier life of a recycled file
//   (xlp_pageaddr below the page's LSN), or any failed check. It never skips damage: records
//   after a hole are not a prefix of what was written, so they are not returned.
//   A record whose xl_xid (the writer's epoch, wal_format.h) is below the previous record's
//   also stops it: a torn write of an earlier life left it at the same LSN.
//   With a known durable LSN (options.durable_lsn, from walseg.control) the stop is
//   corruption exactly when it is before that LSN. Without one it is classified by looking
//   ahead, never by its cause alone:
//     - corruption: valid WAL of this life exists after the stop: the record that the failed
//       record's length points to is valid and its xl_prev names the failed record, or a page
//       after the failure (to the end of that segment, plus the first page of the next one)
//       carries a valid header with its own LSN. Then bytes that were once complete were lost
//       (media damage, or a write reordered behind a crash: the reader cannot tell which).
//       The reporter, if any, is told, with the file and the byte offset.
//     - end of WAL otherwise: a torn tail (the writer died mid-write) or simply the end.
//   Either way end_lsn is the position after the last valid record, where a writer resumes.
// Data damage is never thrown: it is the stop's value. Only I/O failures (open other than
// ENOENT, read) throw walseg::Error.
//
// Not for: decoding PostgreSQL's own records (block references, origins: a record with them
// stops the reader), following timeline switches (one timeline per reader; xlp_tli must equal
// it), writing or repairing WAL.
// Thread-safety: a WalReader is used by one thread at a time. Lifetime: the directory must not
// be removed while a reader is open; the reporter must outlive the reader; a WalRecord's payload
// is valid until the next call on the reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "walseg/directory.h"
#include "walseg/segment_name.h"
#include "walseg/wal_control.h"
#include "walseg/wal_format.h"

namespace walseg {

/// Where and why a reader stopped.
struct WalStop {
  Lsn end_lsn = 0;           ///< after the last valid record: the next insert position
  Lsn failed_lsn = 0;        ///< the record (or position) that could not be read
  std::string path;          ///< segment file where the problem was detected
  std::uint64_t offset = 0;  ///< byte offset of the problem in that file
  Lsn detected_page = 0;     ///< the page on which it was detected (look-ahead starts after it)
  std::string reason;        ///< what was found, in PostgreSQL's wording where it has one
  bool corruption = false;   ///< valid WAL follows (see above)
  std::string evidence;      ///< for corruption: what valid WAL was found after the stop
  /// For corruption by a segment file that is missing (or not a regular file) while a later
  /// segment holds WAL of this system, both named: "WAL segment X does not exist (file
  /// "PATH"), but segment "Y" after it holds WAL of this system"; empty otherwise.
  std::string gap;
};

/// Receives corruption found by a reader (LevelDB's log::Reader::Reporter). Called at most
/// once per stop, on the reading thread; never for a clean end of WAL.
class WalReporter {
 public:
  virtual ~WalReporter() = default;
  virtual void corruption(const WalStop& stop) = 0;
};

struct WalReaderOptions {
  TimeLineId timeline = 1;  ///< only this timeline's segment files are read
  /// nullopt: taken from the long header of the lowest segment present.
  std::optional<std::uint64_t> segment_size_bytes;
  std::optional<std::uint32_t> block_size_bytes;
  /// nullopt: taken from the first valid long header read, then required of every segment.
  std::optional<std::uint64_t> system_id;
  /// Where the WAL starts: a page boundary, walseg.control's oldest LSN (reader_options_for).
  /// nullopt: the first page of the lowest segment file of the timeline, for a directory
  /// without a control file (PostgreSQL's pg_wal, a copy of segments).
  std::optional<Lsn> start_lsn;
  /// Every record ending at or below it is known to have been acknowledged (walseg.control's
  /// durable LSN, or a live writer's flushed_lsn()). Set: a stop before it is corruption and
  /// a stop at or after it is the end of WAL, whatever follows (a power cut may keep any
  /// subset of what was written after the last sync). nullopt: the look-ahead decides.
  std::optional<Lsn> durable_lsn;
  WalReporter* reporter = nullptr;  ///< may be null
};

/// One record as read back.
struct WalRecord {
  Lsn lsn = 0;       ///< LSN of its header
  Lsn end_lsn = 0;   ///< next insert position after it
  Lsn prev_lsn = 0;  ///< xl_prev
  std::uint32_t xid = 0;
  std::uint8_t info = 0;
  std::uint8_t rmid = 0;
  std::span<const std::byte> payload;  ///< valid until the next call on the reader
};

class WalReader {
 public:
  /// Opens the WAL in dir_path. Sizes missing from options are read from the first page of
  /// the lowest segment file of the timeline. The defaults (timeline 1, from the lowest
  /// segment) are for a directory without walseg.control (PostgreSQL's pg_wal); a walseg WAL
  /// is read with reader_options_for(*read_control(dir)), which gives its timeline, sizes and
  /// oldest LSN (on another timeline the defaults find no segment and read nothing). The reader starts at start_lsn() (options'
  /// start_lsn when given: a missing segment there is then where the WAL ends).
  /// Throws walseg::Error: the directory cannot be opened; a size is missing and cannot be
  /// learnt (no segment, or its first page has no valid long header) (EINVAL); a size given
  /// or learnt is invalid (EINVAL).
  static WalReader open(const std::string& dir_path, const WalReaderOptions& options = {});
  /// The same through an open directory (a descriptor of its own is kept): what a writer that
  /// holds the directory's lock reads, even if its path names another directory by then.
  static WalReader open(const Directory& dir, const WalReaderOptions& options = {});

  WalReader(WalReader&&) noexcept;
  WalReader& operator=(WalReader&&) noexcept;
  ~WalReader();

  /// options.start_lsn, or the first page of the lowest segment of the timeline (0 when there
  /// is none). Reading from there skips a record continued from a removed segment, as
  /// pg_waldump does.
  Lsn start_lsn() const;
  /// Positions the reader at lsn: a page boundary (a leading continuation is skipped) or the
  /// LSN of a record header. Clears a previous stop. The first record read after a seek is
  /// only required to have xl_prev below its own LSN. Throws Error (EINVAL) for a position
  /// that can hold neither (unaligned, inside a page header).
  void seek(Lsn lsn);
  /// Positions the reader at the first record that begins at or after lsn, as PostgreSQL's
  /// XLogFindNextRecord does for pg_waldump --start: from the start of lsn's page it skips
  /// the rest of a record continued from earlier pages (xlp_rem_len, as seek does), then reads
  /// records until one begins at or after lsn. Any lsn is accepted: a record's start, a
  /// position inside a record or a page header, a page boundary. The records passed over are
  /// checked like any others, and the one found must link back to the last of them.
  /// Returns the found record's LSN, which next() returns first. Returns nullopt when reading
  /// stops before one is found (damage, or the end of WAL before lsn): then next() returns
  /// false and stop() says why, classified as for next(). Clears a previous stop. Throws only
  /// for I/O errors.
  std::optional<Lsn> find_next_record(Lsn lsn);
  /// Reads the next record into *record and returns true, or returns false once stopped
  /// (then stop() says why; further calls keep returning false). Throws only for I/O errors.
  bool next(WalRecord* record);
  /// Meaningful after next() returned false.
  const WalStop& stop() const;

  /// The highest segment of the timeline whose first page is this WAL's own: a valid long
  /// page header carrying that segment's own LSN (not a ready stamp, nor a recycled file's
  /// earlier life), with the reader's sizes and system identifier. WAL may lie anywhere up
  /// to it, whatever next() has read: a segment missing below it is a gap in the WAL (a
  /// stop there is corruption), and nothing may be made at or below it. nullopt when no
  /// segment holds WAL. Throws only for I/O errors.
  std::optional<SegNo> last_segment_with_wal();

  std::uint64_t segment_size_bytes() const;
  std::uint32_t block_size_bytes() const;
  TimeLineId timeline() const;
  /// The system identifier in use (nullopt until a long header has been read).
  std::optional<std::uint64_t> system_id() const;

 private:
  struct Impl;
  explicit WalReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Options that read the WAL `control` describes: its timeline, sizes, system identifier, and
/// from its oldest LSN. Nothing is learnt from file names.
WalReaderOptions reader_options_for(const WalControl& control);

/// What find_end_of_wal found.
struct RecoveryResult {
  Lsn end_lsn = 0;          ///< next insert position: after the last valid record
  Lsn last_record_lsn = 0;  ///< LSN of the last valid record (0 if none): the next xl_prev
  std::uint64_t records = 0;
  std::string stop_reason;  ///< reason, file and offset (and evidence, for corruption)
  bool corruption = false;  ///< valid WAL follows the stop (see above)
  Lsn stop_page = 0;        ///< WalStop::detected_page: where the unreadable part was found
  std::uint32_t last_xid = 0;  ///< xl_xid (the writer's epoch) of the last valid record
  std::string gap;          ///< WalStop::gap
};

/// Reads every record from the start of the WAL in dir_path (or from `from`, as seek) and
/// returns where it ends. With no segment file of the timeline and sizes given, returns zero
/// records, end_lsn 0 and a reason saying so. Throws like WalReader::open and next.
RecoveryResult find_end_of_wal(const std::string& dir_path, const WalReaderOptions& options = {},
                               std::optional<Lsn> from = std::nullopt);
/// The same through an open directory (WalReader::open(const Directory&)).
RecoveryResult find_end_of_wal(const Directory& dir, const WalReaderOptions& options = {},
                               std::optional<Lsn> from = std::nullopt);

/// "reason (file "PATH", offset N)" plus the evidence for corruption: one line for logs.
std::string describe(const WalStop& stop);

/// For a command that refuses to write into a WAL whose recovery `r` found corruption
/// (Wal::open, `walseg create`): what is wrong, naming the file, and what to do about it.
/// A missing segment before later WAL names that segment file and says to put it back;
/// anything else names the durable point (walseg.control's durable_lsn) and the stop.
std::string describe_corruption(const RecoveryResult& r, Lsn durable_lsn);

}  // namespace walseg
