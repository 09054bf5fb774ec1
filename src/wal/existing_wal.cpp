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
#include "walseg/guc_value.h"
#include "walseg/segment_name.h"
#include "walseg/wal_format.h"

namespace walseg {
namespace {

bool strict_hex_name(const std::string& n) {
  return n.size() == kSegmentNameLength &&
         std::all_of(n.begin(), n.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); });
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
  const bool appending = append_mode(cfg.init_method);
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
                               path, h.segment_size_bytes, cfg.segment_size_bytes, guc::format_int(static_cast<std::int64_t>(h.segment_size_bytes / 1024), guc::Unit::kKilobytes)));
    if (h.block_size_bytes != cfg.block_size_bytes)
      refuse(path, fmt::format("file \"{}\" holds WAL with block size {} bytes, but walseg.block_size is {}; "
                               "set walseg.block_size = {}",
                               path, h.block_size_bytes, cfg.block_size_bytes, h.block_size_bytes));
    if (size < cfg.segment_size_bytes && !appending)
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
  std::uint64_t cleared = 0;
  // One write per segment the range touches: [page, last] within it.
  for (Lsn page = end - end % bs + bs; page <= stop_page;) {
    const SegNo segno = segno_of_lsn(page, seg);
    const Lsn last = std::min(stop_page, (segno + 1) * seg - bs);
    const std::uint64_t bytes = last + bs - page;
    File f;
    try {
      f = File::open(dir_path + "/" + segment_file_name(tli, segno, seg), O_RDWR);
    } catch (const Error& e) {
      if (e.errnum() != ENOENT) throw;  // a missing segment holds nothing to clear
    }
    if (f.is_open()) {
      const std::vector<char> zeros(bytes, 0);
      f.pwrite_all(zeros.data(), zeros.size(), segment_offset(page, seg));
      f.fdatasync();
      f.close();
      cleared += bytes / bs;
    }
    page = last + bs;
  }
  return cleared;
}

}  // namespace walseg
