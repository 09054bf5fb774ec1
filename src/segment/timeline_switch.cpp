// SegmentManager::switch_timeline: the first segment of a new timeline starts as a copy of the
// old timeline's segment up to the switch point (PostgreSQL's XLogInitNewTimeline).
#include <fcntl.h>

#include <algorithm>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "walseg/log.h"
#include "walseg/segment_manager.h"

namespace walseg {

ReadySegment SegmentManager::switch_timeline(TimeLineId new_tli, Lsn switch_lsn) {
  const std::uint64_t size = cfg_.segment_size_bytes;
  const SegNo segno = segno_of_lsn(switch_lsn, size);
  const std::uint64_t valid = segment_offset(switch_lsn, size);
  TimeLineId old_tli;
  {
    std::lock_guard lk(mu_);
    old_tli = book_.timeline();
  }
  if (new_tli == old_tli)
    throw make_error(EINVAL, "switch timeline", dir_.path(),
                     fmt::format("cannot switch to timeline {}: it is the current timeline", new_tli));
  const std::string old_name = segment_file_name(old_tli, segno, size);
  const std::string old_path = dir_.path_of(old_name);
  // Copy the valid part, zero the rest: stale bytes after the switch point must not look like
  // records of the new timeline (their page addresses would be right). The copied pages'
  // headers get the new timeline, as every page of the new timeline's files must carry it
  // for a reader of that timeline (walseg follows no history files).
  const std::uint64_t blk = cfg_.block_size_bytes;
  CustomFill copy = [&](File& f, std::uint64_t, AllocReport& r) {
    File old = File::open_at(dir_, old_name, O_RDONLY | O_NOFOLLOW);
    std::vector<char> buf(kZeroWriteBufferBytes);
    for (std::uint64_t off = 0; off < size; off += buf.size()) {
      std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - off));
      std::fill(buf.begin(), buf.end(), 0);
      if (off < valid) {
        std::size_t keep = static_cast<std::size_t>(std::min<std::uint64_t>(want, valid - off));
        for (std::size_t got = 0; got < keep;) {
          std::size_t n = old.pread(buf.data() + got, keep - got, off + got);
          if (n == 0)
            throw make_error(EIO, "read", old_path,
                             fmt::format("could not read file \"{}\": unexpected end of file at offset {}", old_path, off + got));
          got += n;
        }
        for (std::uint64_t page = off; page < off + keep; page += blk)  // off is a multiple of blk
          store_le32(reinterpret_cast<std::byte*>(buf.data()) + (page - off) + kPageTimelineOffset, new_tli);
      }
      f.pwrite_all(buf.data(), want, off);
    }
    r.used = InitMethod::kZeroWrite;
  };
  {
    std::lock_guard lk(mu_);
    book_.begin(segno);
  }
  CreateReport rep;
  try {
    // A leftover of the new timeline (from an earlier, interrupted switch) is never replaced.
    // With nothing to copy the file is zeros, and only a stamp says it is this WAL's.
    const auto stamp = stamp_for(new_tli, segno);
    rep = create_segment(dir_, segment_file_name(new_tli, segno, size), size, alloc_, copy,
                         valid == 0 ? std::span<const std::byte>(stamp) : std::span<const std::byte>());
  } catch (...) {
    std::lock_guard lk(mu_);
    book_.end(segno);
    throw;
  }
  {
    std::lock_guard lk(mu_);
    book_.end(segno);
    book_.add(SegmentName{new_tli, segno}, SegmentBook::Entry{false, false, rep.file});  // another timeline's, until set_timeline below
  }
  {
    // From here on, recovery reads the new timeline, from the copied segment on.
    std::lock_guard ck(control_mu_);
    WalControl next = control_;
    next.timeline = new_tli;
    next.oldest_lsn = std::max(next.oldest_lsn, lsn_of_segment(segno, 0, size));
    update_control_locked(next);
  }
  set_timeline(new_tli);
  log(LogLevel::kLog, fmt::format("switched to timeline {} at {}: segment \"{}\" starts with {} bytes of timeline {}",
                                  new_tli, format_lsn(switch_lsn), rep.name, valid, old_tli));
  ReadySegment seg;
  seg.timeline = new_tli;
  seg.segno = segno;
  seg.name = rep.name;
  seg.path = dir_.path_of(rep.name);
  seg.file = rep.file;
  return seg;
}

}  // namespace walseg
