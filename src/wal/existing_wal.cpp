// clear_unfinished_record (existing_wal.h).
#include "existing_wal.h"

#include <fcntl.h>

#include <algorithm>
#include <vector>

#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/segment_name.h"

namespace walseg {

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
