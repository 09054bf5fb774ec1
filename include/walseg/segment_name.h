// Segment naming and LSN arithmetic: the pure functions that turn a write-ahead-log position
// (LSN) into a segment number, a segment number into a pg_wal file name and back, and that
// decide what any name found in a WAL directory is. They mirror PostgreSQL's
// xlog_internal.h macros (named on each function) for every valid segment size, so walseg's
// directories can be read by PostgreSQL's tools and the other way round.
//
// Names are parsed strictly (case C20: nothing else is ever taken for a segment): a segment name is exactly 24 upper-case hex
// digits `TTTTTTTTXXXXXXXXYYYYYYYY` with a non-zero timeline and an in-range low part for the
// segment size in use. Anything else in the directory is classified, never taken for a segment.
// Timelines are hex in file names and decimal in human messages (fmt::format("{}", tli)).
//
// walseg's own temporary files use ONE pattern, PostgreSQL's: `xlogtemp.<pid>` or
// `xlogtemp.<pid>.<n>` (decimal, no leading zeros). PostgreSQL removes every `xlogtemp.*` entry
// of pg_wal after a crash, so a file walseg leaves behind in a shared pg_wal is cleaned up by
// either program.
//
// Not for: touching the filesystem (the segment manager lists and acts), page or record
// formats (wal layer), choosing the timeline (the caller passes the current one).
// Thread-safety: every function is pure or reads only its arguments; call from any thread.
// Lifetime: string_view arguments are only read during the call; nothing is retained.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace walseg {

/// A byte position in the write-ahead log (PostgreSQL's XLogRecPtr).
using Lsn = std::uint64_t;
/// A segment number: LSN / segment size (PostgreSQL's XLogSegNo).
using SegNo = std::uint64_t;
/// A timeline id; 0 is never a valid timeline (PostgreSQL's TimeLineID, first is 1).
using TimeLineId = std::uint32_t;

inline constexpr std::uint64_t kMinSegmentSizeBytes = std::uint64_t{1} << 20;  // 1 MiB
inline constexpr std::uint64_t kMaxSegmentSizeBytes = std::uint64_t{1} << 30;  // 1 GiB
/// Bytes covered by one "xlogid", the middle 8 hex digits of a file name (4 GiB).
inline constexpr std::uint64_t kXLogIdSpanBytes = std::uint64_t{1} << 32;
/// Length of a segment file name `TTTTTTTTXXXXXXXXYYYYYYYY`.
inline constexpr std::size_t kSegmentNameLength = 24;
/// Prefix of every temporary file walseg creates (and PostgreSQL removes after a crash).
inline constexpr std::string_view kTempFilePrefix = "xlogtemp.";

/// True when bytes is a power of two in [kMinSegmentSizeBytes, kMaxSegmentSizeBytes], the range
/// PostgreSQL's IsValidWalSegSize accepts. Never throws.
constexpr bool is_valid_segment_size(std::uint64_t bytes) noexcept {
  return bytes >= kMinSegmentSizeBytes && bytes <= kMaxSegmentSizeBytes &&
         (bytes & (bytes - 1)) == 0;
}

/// Throws walseg::Error (EINVAL, op "check segment size") naming `bytes` when
/// is_valid_segment_size(bytes) is false. Every function below that takes a segment size
/// calls it first, so an invalid size is always reported, never silently used.
void check_segment_size(std::uint64_t segment_size_bytes);

/// Segments per 4 GiB xlogid (XLogSegmentsPerXLogId): 4096 for 1 MiB segments, 256 for
/// 16 MiB, 4 for 1 GiB. Throws Error (EINVAL) for an invalid segment size.
std::uint64_t segments_per_xlog_id(std::uint64_t segment_size_bytes);

/// Largest segment number whose bytes are addressable by a 64-bit LSN: 2^64 / size - 1.
/// Throws Error (EINVAL) for an invalid segment size.
SegNo max_segno(std::uint64_t segment_size_bytes);

/// Segment that contains the byte at `lsn` (XLByteToSeg): lsn / size.
/// Throws Error (EINVAL) for an invalid segment size.
SegNo segno_of_lsn(Lsn lsn, std::uint64_t segment_size_bytes);

/// Segment that contains the byte just before `lsn` (XLByteToPrevSeg), i.e. the segment a
/// record ending exactly at `lsn` lives in. Throws Error (EINVAL) for lsn 0 or an invalid size.
SegNo segno_of_lsn_end(Lsn lsn, std::uint64_t segment_size_bytes);

/// LSN of byte `offset_bytes` of segment `segno` (XLogSegNoOffsetToRecPtr): segno * size +
/// offset. Throws Error (EINVAL) when the size is invalid, offset_bytes >= size, or segno >
/// max_segno(size) (the result would not fit in 64 bits).
Lsn lsn_of_segment(SegNo segno, std::uint64_t offset_bytes, std::uint64_t segment_size_bytes);

/// Byte offset of `lsn` inside its segment (XLogSegmentOffset): lsn % size.
/// Throws Error (EINVAL) for an invalid segment size.
std::uint64_t segment_offset(Lsn lsn, std::uint64_t segment_size_bytes);

/// File name of segment `segno` on timeline `tli` (XLogFileName): upper-case hex
/// `%08X` tli, `%08X` segno / segments_per_xlog_id, `%08X` segno % segments_per_xlog_id.
/// Throws Error (EINVAL) for tli 0 (no such timeline; the name would not parse back), segno >
/// max_segno(size), or an invalid size.
std::string segment_file_name(TimeLineId tli, SegNo segno, std::uint64_t segment_size_bytes);

/// What a segment file name encodes.
struct SegmentName {
  TimeLineId timeline = 0;
  SegNo segno = 0;
  friend bool operator==(const SegmentName&, const SegmentName&) = default;
};

/// Strict inverse of segment_file_name (IsXLogFileName + XLogFromFileName): exactly 24
/// characters, digits and upper-case A-F only, timeline != 0, low part < segments_per_xlog_id.
/// Returns nullopt for any other name and never throws for one; throws Error (EINVAL) only
/// for an invalid segment size (a caller bug, not a foreign name).
std::optional<SegmentName> parse_segment_file_name(std::string_view name,
                                                   std::uint64_t segment_size_bytes);

/// `%08X` of tli, as it appears in file names: 10 -> "0000000A". Accepts any value (history
/// files and messages may need 0 spelled out); segment_file_name rejects 0.
std::string timeline_hex(TimeLineId tli);

/// Strict inverse of timeline_hex for file names: 8 upper-case hex digits, value != 0;
/// "0000000A" -> 10. nullopt otherwise; never throws.
std::optional<TimeLineId> parse_timeline_hex(std::string_view text);

/// LSN in PostgreSQL's text form "%X/%X": upper 32 bits, '/', lower 32 bits, upper-case hex,
/// no padding ("0/1000000", "1/0"). PostgreSQL 18 pads the low part ("0/01000000");
/// parse_lsn accepts both.
std::string format_lsn(Lsn lsn);

/// Parses "X/X" as PostgreSQL's pg_lsn input does: 1 to 8 hex digits (either case), '/',
/// 1 to 8 hex digits, nothing else (no spaces, no sign). nullopt otherwise; never throws.
std::optional<Lsn> parse_lsn(std::string_view text);

/// Name of a walseg temporary file: "xlogtemp.<pid>" when counter is nullopt (exactly
/// PostgreSQL's name), otherwise "xlogtemp.<pid>.<counter>", so one process can prepare
/// several files at once. Decimal, no padding. Never throws (beyond std::bad_alloc).
std::string temp_file_name(std::uint32_t pid, std::optional<std::uint64_t> counter = std::nullopt);

/// What a temporary file name encodes.
struct TempFileName {
  std::uint32_t pid = 0;
  std::optional<std::uint64_t> counter;
  friend bool operator==(const TempFileName&, const TempFileName&) = default;
};

/// Strict inverse of temp_file_name: "xlogtemp." + decimal pid [+ "." + decimal counter],
/// each number without leading zeros (except "0" itself) and within its type. nullopt for any
/// other name, including other `xlogtemp.*` spellings; never throws.
std::optional<TempFileName> parse_temp_file_name(std::string_view name);

/// How an entry of a WAL directory is treated (for reporting and for the manager's rules).
enum class WalFileKind {
  kSegmentFile,  ///< TTTTTTTTXXXXXXXXYYYYYYYY, strictly valid for the segment size
  kTempFile,     ///< xlogtemp.<pid>[.<n>]: ours or PostgreSQL's leftover, removable at start
  kHistoryFile,  ///< TTTTTTTT.history (IsTLHistoryFileName), timeline != 0
  kPartialFile,  ///< <segment name>.partial (IsPartialXLogFileName)
  kBackupFile,   ///< <segment name>.OOOOOOOO.backup (IsBackupHistoryFileName), offset < size
  kForeign,      ///< anything else: reported once, never recycled, renamed or deleted
};
inline constexpr std::array<std::string_view, 6> kWalFileKindNames = {
    "segment", "temporary file", "timeline history file", "partial segment",
    "backup history file", "foreign file"};
inline std::string_view to_string(WalFileKind k) {
  return kWalFileKindNames[static_cast<std::size_t>(k)];
}

/// Result of classify_wal_file_name. Fields that the kind does not carry stay 0/nullopt:
/// segment, partial and backup carry timeline and segno; history carries timeline; backup
/// also carries backup_offset (the backup's start offset in that segment, bytes); temp
/// carries temp.
struct WalFileInfo {
  WalFileKind kind = WalFileKind::kForeign;
  TimeLineId timeline = 0;
  SegNo segno = 0;
  std::uint64_t backup_offset = 0;
  std::optional<TempFileName> temp;
};

/// Classifies one directory entry name, strictly: the segment part of partial and backup names
/// must itself be a valid segment name for this size, and all hex is upper-case. Never throws
/// for any name; throws Error (EINVAL) only for an invalid segment size.
WalFileInfo classify_wal_file_name(std::string_view name, std::uint64_t segment_size_bytes);

}  // namespace walseg
