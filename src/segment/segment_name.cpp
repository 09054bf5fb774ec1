// Segment naming and LSN arithmetic (include/walseg/segment_name.h).
//
// All parsing here is hand-written over string_view rather than sscanf/strtoul: those accept
// leading spaces, signs, lower case and "0x", which is exactly the looseness case C20 is about.
#include "walseg/segment_name.h"

#include <cerrno>
#include <limits>

#include <fmt/format.h>

#include "walseg/error.h"

namespace walseg {
namespace {

constexpr std::string_view kHistorySuffix = ".history";
constexpr std::string_view kPartialSuffix = ".partial";
constexpr std::string_view kBackupSuffix = ".backup";
constexpr std::size_t kHexFieldLength = 8;  // each of T, X, Y and a backup offset

Error invalid_argument(std::string_view op, std::string message) {
  return make_error(EINVAL, op, {}, std::move(message));
}

// Value of one upper-case hex digit, or -1. Lower case is rejected on purpose: PostgreSQL
// writes upper case only, so "0000000a..." was not written by PostgreSQL or walseg.
int upper_hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int any_hex_value(char c) {
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return upper_hex_value(c);
}

// Exactly 8 upper-case hex digits -> value; nullopt otherwise.
std::optional<std::uint32_t> parse_hex8(std::string_view s) {
  if (s.size() != kHexFieldLength) return std::nullopt;
  std::uint32_t v = 0;
  for (char c : s) {
    const int d = upper_hex_value(c);
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<std::uint32_t>(d);
  }
  return v;
}

// 1..8 hex digits of either case (pg_lsn input) -> value; nullopt otherwise.
std::optional<std::uint32_t> parse_lsn_half(std::string_view s) {
  if (s.empty() || s.size() > kHexFieldLength) return std::nullopt;
  std::uint32_t v = 0;
  for (char c : s) {
    const int d = any_hex_value(c);
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<std::uint32_t>(d);
  }
  return v;
}

// Decimal without sign, spaces or leading zeros ("0" itself is allowed), at most `max`.
std::optional<std::uint64_t> parse_decimal(std::string_view s, std::uint64_t max) {
  if (s.empty() || (s.size() > 1 && s.front() == '0')) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (max - d) / 10) return std::nullopt;  // v * 10 + d would exceed max
    v = v * 10 + d;
  }
  return v;
}

}  // namespace

void check_segment_size(std::uint64_t segment_size_bytes) {
  if (is_valid_segment_size(segment_size_bytes)) return;
  // Worded like PostgreSQL's check of the control file's segment size.
  throw invalid_argument(
      "check segment size",
      fmt::format("invalid WAL segment size {} bytes: the WAL segment size must be a power of "
                  "two between {} (1 MB) and {} (1 GB) bytes",
                  segment_size_bytes, kMinSegmentSizeBytes, kMaxSegmentSizeBytes));
}

std::uint64_t segments_per_xlog_id(std::uint64_t segment_size_bytes) {
  check_segment_size(segment_size_bytes);
  return kXLogIdSpanBytes / segment_size_bytes;
}

SegNo max_segno(std::uint64_t segment_size_bytes) {
  check_segment_size(segment_size_bytes);
  // The size is a power of two, so floor((2^64 - 1) / size) == 2^64 / size - 1.
  return std::numeric_limits<Lsn>::max() / segment_size_bytes;
}

SegNo segno_of_lsn(Lsn lsn, std::uint64_t segment_size_bytes) {
  check_segment_size(segment_size_bytes);
  return lsn / segment_size_bytes;
}

SegNo segno_of_lsn_end(Lsn lsn, std::uint64_t segment_size_bytes) {
  check_segment_size(segment_size_bytes);
  // PostgreSQL computes (0 - 1) / size here without complaint; no record ends at LSN 0, so a
  // caller passing 0 has a bug that a huge segment number would only hide.
  if (lsn == 0)
    throw invalid_argument("segno of lsn end", "invalid end LSN 0/0: no record ends there");
  return (lsn - 1) / segment_size_bytes;
}

Lsn lsn_of_segment(SegNo segno, std::uint64_t offset_bytes, std::uint64_t segment_size_bytes) {
  const SegNo max = max_segno(segment_size_bytes);
  if (offset_bytes >= segment_size_bytes)
    throw invalid_argument("lsn of segment",
                           fmt::format("invalid offset {} bytes in a WAL segment of {} bytes",
                                       offset_bytes, segment_size_bytes));
  if (segno > max)
    throw invalid_argument("lsn of segment",
                           fmt::format("invalid WAL segment number {}: the largest for {}-byte "
                                       "segments is {}",
                                       segno, segment_size_bytes, max));
  return segno * segment_size_bytes + offset_bytes;
}

std::uint64_t segment_offset(Lsn lsn, std::uint64_t segment_size_bytes) {
  check_segment_size(segment_size_bytes);
  return lsn & (segment_size_bytes - 1);
}

std::string segment_file_name(TimeLineId tli, SegNo segno, std::uint64_t segment_size_bytes) {
  const std::uint64_t per_id = segments_per_xlog_id(segment_size_bytes);
  if (tli == 0)
    throw invalid_argument("segment file name",
                           fmt::format("invalid timeline 0 for WAL segment {}: timelines start "
                                       "at 1",
                                       segno));
  // Beyond max_segno the high part would need more than 8 hex digits.
  const SegNo max = max_segno(segment_size_bytes);
  if (segno > max)
    throw invalid_argument("segment file name",
                           fmt::format("invalid WAL segment number {}: the largest for {}-byte "
                                       "segments is {}",
                                       segno, segment_size_bytes, max));
  return fmt::format("{:08X}{:08X}{:08X}", tli, segno / per_id, segno % per_id);
}

std::optional<SegmentName> parse_segment_file_name(std::string_view name,
                                                   std::uint64_t segment_size_bytes) {
  const std::uint64_t per_id = segments_per_xlog_id(segment_size_bytes);
  if (name.size() != kSegmentNameLength) return std::nullopt;
  const auto tli = parse_hex8(name.substr(0, 8));
  const auto hi = parse_hex8(name.substr(8, 8));
  const auto lo = parse_hex8(name.substr(16, 8));
  if (!tli || !hi || !lo) return std::nullopt;
  // Timeline 0 never exists; a low part >= per_id would alias another segment's name
  // (for 16 MB, ...00000100 "is" segment 0x100 but is really spelled ...0000000100000000).
  if (*tli == 0 || *lo >= per_id) return std::nullopt;
  return SegmentName{*tli, std::uint64_t{*hi} * per_id + *lo};
}

std::string timeline_hex(TimeLineId tli) { return fmt::format("{:08X}", tli); }

std::optional<TimeLineId> parse_timeline_hex(std::string_view text) {
  const auto v = parse_hex8(text);
  if (!v || *v == 0) return std::nullopt;
  return *v;
}

std::string format_lsn(Lsn lsn) {
  return fmt::format("{:X}/{:X}", static_cast<std::uint32_t>(lsn >> 32),
                     static_cast<std::uint32_t>(lsn));
}

std::optional<Lsn> parse_lsn(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto hi = parse_lsn_half(text.substr(0, slash));
  const auto lo = parse_lsn_half(text.substr(slash + 1));  // a second '/' fails here
  if (!hi || !lo) return std::nullopt;
  return (Lsn{*hi} << 32) | *lo;
}

std::string temp_file_name(std::uint32_t pid, std::optional<std::uint64_t> counter) {
  if (!counter) return fmt::format("{}{}", kTempFilePrefix, pid);
  return fmt::format("{}{}.{}", kTempFilePrefix, pid, *counter);
}

std::optional<TempFileName> parse_temp_file_name(std::string_view name) {
  if (!name.starts_with(kTempFilePrefix)) return std::nullopt;
  name.remove_prefix(kTempFilePrefix.size());
  const auto dot = name.find('.');
  const auto pid = parse_decimal(name.substr(0, dot), std::numeric_limits<std::uint32_t>::max());
  if (!pid) return std::nullopt;
  TempFileName out{static_cast<std::uint32_t>(*pid), std::nullopt};
  if (dot == std::string_view::npos) return out;
  out.counter = parse_decimal(name.substr(dot + 1), std::numeric_limits<std::uint64_t>::max());
  if (!out.counter) return std::nullopt;  // also rejects a third '.' part
  return out;
}

WalFileInfo classify_wal_file_name(std::string_view name, std::uint64_t segment_size_bytes) {
  WalFileInfo info;
  if (const auto seg = parse_segment_file_name(name, segment_size_bytes)) {
    info.kind = WalFileKind::kSegmentFile;
    info.timeline = seg->timeline;
    info.segno = seg->segno;
    return info;
  }
  if (auto temp = parse_temp_file_name(name)) {
    info.kind = WalFileKind::kTempFile;
    info.temp = temp;
    return info;
  }
  // TTTTTTTT.history
  if (name.size() == kHexFieldLength + kHistorySuffix.size() && name.ends_with(kHistorySuffix)) {
    if (const auto tli = parse_timeline_hex(name.substr(0, kHexFieldLength))) {
      info.kind = WalFileKind::kHistoryFile;
      info.timeline = *tli;
    }
    return info;
  }
  // Both remaining kinds start with a full segment name, which must itself be strict.
  if (name.size() <= kSegmentNameLength || name[kSegmentNameLength] != '.') return info;
  const auto seg = parse_segment_file_name(name.substr(0, kSegmentNameLength), segment_size_bytes);
  if (!seg) return info;
  const std::string_view rest = name.substr(kSegmentNameLength);
  if (rest == kPartialSuffix) {
    info.kind = WalFileKind::kPartialFile;
  } else if (rest.size() == 1 + kHexFieldLength + kBackupSuffix.size() &&
             rest.ends_with(kBackupSuffix)) {
    // .OOOOOOOO.backup: the backup's start offset inside that segment, in bytes.
    const auto offset = parse_hex8(rest.substr(1, kHexFieldLength));
    if (!offset || *offset >= segment_size_bytes) return info;
    info.kind = WalFileKind::kBackupFile;
    info.backup_offset = *offset;
  } else {
    return info;
  }
  info.timeline = seg->timeline;
  info.segno = seg->segno;
  return info;
}

}  // namespace walseg
