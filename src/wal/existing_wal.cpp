// check_existing_wal (existing_wal.h).
#include "existing_wal.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/segment_name.h"
#include "walseg/wal_format.h"

namespace walseg {
namespace {

bool strict_hex_name(const std::string& n) {
  return n.size() == kSegmentNameLength &&
         std::all_of(n.begin(), n.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); });
}

// A size as one would write the setting: "16MB", "1GB", else kilobytes (its base unit).
std::string size_setting(std::uint64_t bytes) {
  if (bytes % (1024 * kMiB) == 0) return fmt::format("{}GB", bytes / (1024 * kMiB));
  if (bytes % kMiB == 0) return fmt::format("{}MB", bytes / kMiB);
  return fmt::format("{}kB", bytes / 1024);
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw make_error(EINVAL, "open WAL", path, fmt::format("cannot write to the WAL in \"{}\": {}",
                                                          std::filesystem::path(path).parent_path().string(), why));
}

}  // namespace

void check_existing_wal(const std::string& dir_path, const Config& cfg) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_path, ec)) return;
  Directory dir = Directory::open(dir_path);
  const bool append_mode = cfg.init_method == InitMethod::kNone || cfg.init_method == InitMethod::kFallocateKeepSize;
  std::set<std::uint64_t> system_ids;
  for (const auto& e : dir.list()) {
    if (!e.is_regular || !strict_hex_name(e.name)) continue;
    const std::string path = dir.path_of(e.name);
    File f = File::open(path, O_RDONLY);
    auto size = static_cast<std::uint64_t>(f.stat().st_size);
    std::array<std::byte, kLongPageHeaderBytes> buf{};
    std::size_t n = size >= buf.size() ? f.pread(buf.data(), buf.size(), 0) : 0;
    bool blank = n < buf.size() || std::all_of(buf.begin(), buf.end(), [](std::byte b) { return b == std::byte{0}; });
    if (blank) continue;  // preallocated and never written: nothing to lose
    PageHeader h = decode_page_header(buf.data());
    if (h.magic != kWalPageMagic || !h.is_long()) {
      if (size == cfg.segment_size_bytes)
        refuse(path, fmt::format("file \"{}\" has a segment's name and size but its first page is not a walseg "
                                 "page header; it was not made by walseg and is left alone: move it away",
                                 path));
      continue;  // a wrong-size foreign file: the start-up scan moves it aside
    }
    if (h.segment_size_bytes != cfg.segment_size_bytes)
      refuse(path, fmt::format("file \"{}\" holds WAL with segment size {} bytes, but walseg.segment_size is {} "
                               "bytes; set walseg.segment_size = {}",
                               path, h.segment_size_bytes, cfg.segment_size_bytes, size_setting(h.segment_size_bytes)));
    if (h.block_size_bytes != cfg.block_size_bytes)
      refuse(path, fmt::format("file \"{}\" holds WAL with block size {} bytes, but walseg.block_size is {}; "
                               "set walseg.block_size = {}",
                               path, h.block_size_bytes, cfg.block_size_bytes, h.block_size_bytes));
    if (size < cfg.segment_size_bytes && !append_mode)
      refuse(path, fmt::format("file \"{}\" holds WAL written in append mode ({} of {} bytes); set "
                               "walseg.init_method = none (or fallocate_keep_size) to go on writing it",
                               path, size, cfg.segment_size_bytes));
    system_ids.insert(h.system_id);
  }
  if (system_ids.size() > 1)
    refuse(dir_path + "/", fmt::format("its segments belong to {} different WALs (system identifiers {})",
                                       system_ids.size(), fmt::join(system_ids, ", ")));
}

std::uint64_t clear_unfinished_record(const std::string& dir_path, const Config& cfg, TimeLineId tli,
                                      Lsn end, Lsn stop_page) {
  const std::uint64_t bs = cfg.block_size_bytes, seg = cfg.segment_size_bytes;
  const std::vector<char> zeros(bs, 0);
  std::uint64_t cleared = 0;
  Lsn page = end - end % bs + bs;
  while (page <= stop_page) {
    const SegNo segno = segno_of_lsn(page, seg);
    const Lsn seg_last = (segno + 1) * seg - bs;
    const Lsn last = std::min(stop_page, seg_last);
    const std::string path = dir_path + "/" + segment_file_name(tli, segno, seg);
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0) {
      File f = File::open(path, O_RDWR);
      for (Lsn p = page; p <= last; p += bs) {
        f.pwrite_all(zeros.data(), zeros.size(), segment_offset(p, seg));
        ++cleared;
      }
      f.fdatasync();
      f.close();
    }
    page = last + bs;
  }
  return cleared;
}

}  // namespace walseg
