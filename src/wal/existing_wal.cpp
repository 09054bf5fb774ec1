// clear_unfinished_record and make_recovered_wal_durable (existing_wal.h).
#include "existing_wal.h"

#include <fcntl.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "walseg/dir_scan.h"
#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/segment_name.h"
#include "walseg/wal_format.h"

namespace walseg {

namespace {

// Recovery read these segments by name, and the control file's update came between: a file
// moved onto a segment's name then is not written into (break-it round 11 F1: a user's file
// had pages zeroed). Checked on what was opened, before any write.
void refuse_unless_this_wals(File& f, const WalControl& c) {
  if (!is_this_wals_segment(f, c))
    throw make_error(EEXIST, "open WAL", f.path(),
                     fmt::format("\"{}\" is no longer a segment of this WAL (another file was moved onto its name "
                                 "since recovery read it); nothing was written to it: move it out of the directory",
                                 f.path()));
}

}  // namespace

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
    if (f.is_open()) refuse_unless_this_wals(f, c);
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

std::uint64_t make_recovered_wal_durable(const Directory& dir, const WalControl& c, Lsn from, Lsn end) {
  const std::uint64_t bs = c.block_size_bytes, seg = c.segment_size_bytes;
  constexpr std::uint64_t kChunkBytes = 1 << 20;
  std::vector<std::byte> buf;
  std::uint64_t rewritten = 0;
  // Whole pages: the one holding `end` too, since its bytes before `end` are records.
  for (Lsn pos = from - from % bs; pos < end;) {
    const SegNo segno = segno_of_lsn(pos, seg);
    const Lsn seg_end = std::min(end + (bs - end % bs) % bs, (segno + 1) * seg);
    File f;
    try {
      f = File::open_at(dir, segment_file_name(c.timeline, segno, seg), O_RDWR | O_NOFOLLOW | O_NONBLOCK);
    } catch (const Error& e) {
      if (e.errnum() != ENOENT) throw;  // recovery found the WAL ending at its start
    }
    if (f.is_open()) refuse_unless_this_wals(f, c);
    if (f.is_open()) {
      for (Lsn at = pos; at < seg_end;) {
        const std::size_t n = static_cast<std::size_t>(std::min(kChunkBytes, seg_end - at));
        buf.resize(n);
        const std::size_t got = f.pread(buf.data(), n, segment_offset(at, seg));
        if (got == 0) break;  // an append-mode segment ends here
        f.pwrite_all(buf.data(), got, segment_offset(at, seg));
        rewritten += got;
        at += got;
      }
      f.fdatasync();
      f.close();
    }
    pos = seg_end;
  }
  return rewritten;
}

}  // namespace walseg
