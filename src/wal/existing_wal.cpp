// clear_unfinished_record (existing_wal.h).
#include "existing_wal.h"

#include <fcntl.h>

#include <algorithm>
#include <vector>

#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/segment_name.h"
#include "walseg/wal_format.h"

namespace walseg {

std::uint64_t clear_unfinished_record(const Directory& dir, const WalControl& c, Lsn end, Lsn stop_page) {
  const std::uint64_t bs = c.block_size_bytes, seg = c.segment_size_bytes;
  std::uint64_t cleared = 0;
  // One write per segment the range touches: [page, last] within it.
  for (Lsn page = end - end % bs + bs; page <= stop_page;) {
    const SegNo segno = segno_of_lsn(page, seg);
    const Lsn last = std::min(stop_page, (segno + 1) * seg - bs);
    const std::uint64_t bytes = last + bs - page;
    File f;
    try {
      f = File::open_at(dir, segment_file_name(c.timeline, segno, seg), O_RDWR | O_NOFOLLOW | O_NONBLOCK);
    } catch (const Error& e) {
      if (e.errnum() != ENOENT) throw;  // a missing segment holds nothing to clear
    }
    if (f.is_open()) {
      std::vector<std::byte> zeros(bytes, std::byte{0});
      // A segment's first page goes back to the ready stamp it had before it was written:
      // zeros there would make it a file nobody can tell is walseg's (dir_scan.h).
      if (segment_offset(page, seg) == 0) {
        PageHeader h;
        h.info = kPageLongHeader;
        h.timeline = c.timeline;
        h.page_addr = page;
        h.system_id = c.system_id;
        h.segment_size_bytes = c.segment_size_bytes;
        h.block_size_bytes = c.block_size_bytes;
        encode_ready_stamp(h, zeros.data());
      }
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
