// libFuzzer target for segment naming and LSN text (segment_name.h): parse_segment_file_name,
// parse_temp_file_name, classify_wal_file_name, parse_timeline_hex and parse_lsn over the
// input as a name, with every valid segment size, and the formatters and segment arithmetic
// over numbers read from the same input.
//
// Besides crashes and sanitizer reports, the target aborts when a property fails:
//  * a name is taken for a segment unless it is exactly 24 upper-case hex digits with a
//    timeline != 0 and a low part below segments_per_xlog_id, or such a name is refused, or
//    its values are not what the digits say;
//  * a parsed name (segment, temporary, history, partial, backup, timeline) does not format
//    back to the same text, or a name of one of those spellings (checked here by a separate
//    grammar) is classified as anything else;
//  * parse_lsn accepts other than 1-8 hex digits '/' 1-8 hex digits, refuses them, or
//    format_lsn's text does not parse back to the same LSN;
//  * a formatted segment or temporary name does not parse back to its values, or the LSN
//    arithmetic (segno_of_lsn, segment_offset, lsn_of_segment, segno_of_lsn_end) does not
//    round-trip; the only exceptions allowed are walseg::Error EINVAL for the inputs the
//    header names (timeline 0, segment number above max_segno, LSN 0 for an end).
// Build and run: tests/fuzz/run_fuzz.sh SECONDS; one input: build-fuzz/bin/segment_name_fuzz FILE
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "walseg/error.h"
#include "walseg/segment_name.h"

using namespace walseg;
using walfuzz::check;

namespace {

bool upper_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

// Hex digits of either case to a value; the caller bounds the length.
std::optional<std::uint64_t> any_hex(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    const int d = c >= '0' && c <= '9' ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<std::uint64_t>(d);
  }
  return v;
}

// Decimal without sign or leading zeros, at most max: the temporary-name grammar.
std::optional<std::uint64_t> decimal(std::string_view s, std::uint64_t max) {
  if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  unsigned __int128 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > max) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

// %08X, as file names spell offsets.
std::string hex8(std::uint64_t v) {
  std::string s(8, '0');
  for (int i = 7; i >= 0; --i, v >>= 4) s[i] = "0123456789ABCDEF"[v & 15];
  return s;
}

// The segment a strict name denotes, by PostgreSQL's grammar: TTTTTTTTXXXXXXXXYYYYYYYY, upper-case hex.
std::optional<SegmentName> spec_segment(std::string_view name, std::uint64_t size) {
  if (name.size() != kSegmentNameLength || !upper_hex(name)) return std::nullopt;
  const std::uint64_t tli = *any_hex(name.substr(0, 8)), hi = *any_hex(name.substr(8, 8)),
                      lo = *any_hex(name.substr(16, 8));
  const std::uint64_t per_id = kXLogIdSpanBytes / size;
  if (tli == 0 || lo >= per_id) return std::nullopt;
  return SegmentName{static_cast<TimeLineId>(tli), hi * per_id + lo};
}

void check_segment_name(std::string_view name, std::uint64_t size) {
  const auto parsed = parse_segment_file_name(name, size);
  const auto spec = spec_segment(name, size);
  check(parsed == spec, "parse_segment_file_name disagrees with the strict grammar");
  if (parsed) {
    check(name.size() == 24 && upper_hex(name), "a segment name that is not 24 upper-case hex digits");
    check(segment_file_name(parsed->timeline, parsed->segno, size) == name,
          "a parsed segment name does not format back to itself");
  }
}

void check_classify(std::string_view name, std::uint64_t size) {
  const WalFileInfo info = classify_wal_file_name(name, size);
  const auto seg = spec_segment(name.substr(0, std::min<std::size_t>(name.size(), 24)), size);
  const std::string seg_text = seg ? segment_file_name(seg->timeline, seg->segno, size) : "";
  const bool history = name.size() == 16 && name.substr(8) == ".history" &&
                       upper_hex(name.substr(0, 8)) && *any_hex(name.substr(0, 8)) != 0;
  const bool partial = seg && name.size() == 32 && name.substr(24) == ".partial";
  const bool backup = seg && name.size() == 40 && name[24] == '.' && name.substr(33) == ".backup" &&
                      upper_hex(name.substr(25, 8)) && *any_hex(name.substr(25, 8)) < size;
  const auto temp = parse_temp_file_name(name);
  WalFileKind want = WalFileKind::kForeign;
  if (seg && name.size() == 24) want = WalFileKind::kSegmentFile;
  else if (temp) want = WalFileKind::kTempFile;
  else if (history) want = WalFileKind::kHistoryFile;
  else if (partial) want = WalFileKind::kPartialFile;
  else if (backup) want = WalFileKind::kBackupFile;
  check(info.kind == want, "classify_wal_file_name disagrees with the name grammars");
  switch (info.kind) {
    case WalFileKind::kSegmentFile:
    case WalFileKind::kPartialFile:
    case WalFileKind::kBackupFile:
      check(info.timeline == seg->timeline && info.segno == seg->segno,
            "a classified name carries other segment values");
      if (info.kind == WalFileKind::kPartialFile) check(seg_text + ".partial" == name, "partial");
      if (info.kind == WalFileKind::kBackupFile)
        check(seg_text + "." + hex8(info.backup_offset) + ".backup" == name,
              "a backup history name does not format back to itself");
      break;
    case WalFileKind::kHistoryFile:
      check(timeline_hex(info.timeline) + ".history" == name, "a history name does not format back");
      break;
    case WalFileKind::kTempFile: check(info.temp == temp, "a temp name carries other values"); break;
    case WalFileKind::kForeign: break;
  }
}

void check_temp_name(std::string_view name) {
  std::optional<TempFileName> spec;
  if (name.starts_with(kTempFilePrefix)) {
    const std::string_view rest = name.substr(kTempFilePrefix.size());
    const std::size_t dot = rest.find('.');
    const auto pid = decimal(rest.substr(0, dot), 0xFFFFFFFFu);
    if (pid && dot == std::string_view::npos) spec = TempFileName{static_cast<std::uint32_t>(*pid), std::nullopt};
    if (pid && dot != std::string_view::npos)
      if (const auto n = decimal(rest.substr(dot + 1), ~0ull))
        spec = TempFileName{static_cast<std::uint32_t>(*pid), n};
  }
  const auto parsed = parse_temp_file_name(name);
  check(parsed == spec, "parse_temp_file_name disagrees with the temporary-name grammar");
  if (parsed) check(temp_file_name(parsed->pid, parsed->counter) == name, "temp name round trip");
}

void check_text(std::string_view text) {
  const auto tli = parse_timeline_hex(text);
  const bool tli_spec = text.size() == 8 && upper_hex(text) && *any_hex(text) != 0;
  check(tli.has_value() == tli_spec, "parse_timeline_hex disagrees with 8 upper-case hex digits");
  if (tli) check(timeline_hex(*tli) == text && *tli == *any_hex(text), "timeline round trip");

  const std::size_t slash = text.find('/');
  std::optional<Lsn> spec;
  if (slash != std::string_view::npos && slash <= 8 && text.size() - slash - 1 <= 8) {
    const auto hi = any_hex(text.substr(0, slash)), lo = any_hex(text.substr(slash + 1));
    if (hi && lo) spec = (*hi << 32) | *lo;
  }
  const auto lsn = parse_lsn(text);
  check(lsn == spec, "parse_lsn disagrees with the X/X grammar");
  if (lsn) check(parse_lsn(format_lsn(*lsn)) == lsn, "format_lsn does not parse back");
  check_temp_name(text);
}

// Formatting first: values from the input, names made and parsed back.
void check_numbers(walfuzz::Cursor& c, std::uint64_t size) {
  const TimeLineId tli = c.u32();
  const std::uint64_t raw = c.u64();
  const SegNo segno = (c.u8() & 1) ? raw : raw % (max_segno(size) + 2);
  const bool valid = tli != 0 && segno <= max_segno(size);
  try {
    const std::string name = segment_file_name(tli, segno, size);
    check(valid && parse_segment_file_name(name, size) == SegmentName{tli, segno},
          "a formatted segment name does not parse back to its values");
  } catch (const Error& e) {
    check(!valid && e.errnum() == EINVAL, "segment_file_name refused a valid name");
  }
  const Lsn lsn = c.u64();
  const SegNo s = segno_of_lsn(lsn, size);
  check(lsn_of_segment(s, segment_offset(lsn, size), size) == lsn, "LSN arithmetic round trip");
  if (lsn != 0) check(segno_of_lsn_end(lsn, size) == segno_of_lsn(lsn - 1, size), "segno of end");
  check(parse_lsn(format_lsn(lsn)) == lsn, "format_lsn does not parse back");
  const std::uint32_t pid = c.u32();
  const std::optional<std::uint64_t> counter =
      (c.u8() & 1) ? std::optional<std::uint64_t>(c.u64()) : std::nullopt;
  check(parse_temp_file_name(temp_file_name(pid, counter)) == TempFileName{pid, counter},
        "a formatted temp name does not parse back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check_text(text);
    for (std::uint64_t seg = kMinSegmentSizeBytes; seg <= kMaxSegmentSizeBytes; seg <<= 1) {
      check_segment_name(text, seg);
      check_classify(text, seg);
      walfuzz::Cursor c(data, size);
      check_numbers(c, seg);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception escaped: %s\n", e.what());
    check(false, "a naming function threw where it may not");
  }
  return 0;
}
