// Start-up scan of a WAL directory (include/walseg/dir_scan.h).
#include "walseg/dir_scan.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "walseg/auto_method.h"
#include "walseg/dir_lock.h"
#include "walseg/error.h"
#include "walseg/log.h"

namespace walseg {
namespace {

std::string free_broken_name(const Directory& dir, const std::string& name) {
  std::string candidate = name + kBrokenSuffix;
  for (int n = 1; dir.exists(candidate); ++n) candidate = fmt::format("{}{}.{}", name, kBrokenSuffix, n);
  return candidate;
}

}  // namespace

ScanReport scan_wal_directory(Directory& dir, std::uint64_t segment_size_bytes, bool append_mode) {
  ScanReport report;
  bool changed = false;
  for (const auto& e : dir.list()) {
    if (e.name == kLockFileName || e.name == kAutoCacheFileName) continue;  // our own
    WalFileInfo info = classify_wal_file_name(e.name, segment_size_bytes);
    struct stat st{};
    if (::fstatat(dir.fd(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // removed under us; nothing to classify
      throw file_error(errno, "stat", dir.path_of(e.name));
    }
    auto size = static_cast<std::uint64_t>(st.st_size);
    if (info.kind == WalFileKind::kTempFile && S_ISREG(st.st_mode)) {
      dir.unlink(e.name, true);
      changed = true;
      report.removed_temps.push_back(e.name);
      log(LogLevel::kLog, fmt::format("removed leftover temporary file \"{}\"", dir.path_of(e.name)));
      continue;
    }
    if (info.kind == WalFileKind::kSegmentFile && S_ISREG(st.st_mode)) {
      bool complete = size == segment_size_bytes || (append_mode && size < segment_size_bytes);
      if (complete) {
        report.segments.push_back(SegmentName{info.timeline, info.segno});
        continue;
      }
      std::string aside = free_broken_name(dir, e.name);
      dir.rename_noreplace(e.name, aside);
      changed = true;
      report.moved_aside.push_back(e.name + " -> " + aside);
      log(LogLevel::kWarning,
          fmt::format("file \"{}\" has size {} bytes, expected {}: it is never used as a segment; "
                      "moved aside as \"{}\"",
                      dir.path_of(e.name), size, segment_size_bytes, aside));
      continue;
    }
    std::string what = S_ISREG(st.st_mode) ? std::string(to_string(info.kind)) : "not a regular file";
    report.left_alone.push_back(fmt::format("{} ({})", e.name, what));
    log(LogLevel::kLog, fmt::format("leaving \"{}\" alone: {}", dir.path_of(e.name), what));
  }
  if (changed) dir.fsync();
  std::sort(report.segments.begin(), report.segments.end(), [](const SegmentName& a, const SegmentName& b) {
    return a.timeline != b.timeline ? a.timeline < b.timeline : a.segno < b.segno;
  });
  return report;
}

}  // namespace walseg
