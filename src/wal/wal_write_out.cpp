// WalWriter::write_upto: turning ring pages into writes, segment by segment, and syncing them.
#include <algorithm>
#include <cstring>

#include "wal_io.h"
#include "walseg/wal_writer.h"

namespace walseg {

// Writes every byte from written_ up to the insert position (at least up to `target`), then
// zeros to the end of its page (or memory page); with sync, then syncs every segment file
// written since the last sync and advances flushed_. Caller holds write_mu_. Throws
// walseg::Error; the caller makes it the writer's final error.
//
// Whole pages come straight from the ring. The memory page holding the insert position comes
// from tail_: its bytes up to the insert position copied (at most 4 kB), zeros after. Not from
// the ring, where appenders go on filling it: a write that caught a record half copied by an
// appender, followed by a complete one, would after a crash look like damage before valid WAL
// (a false corruption report). And as its own piece ending on a memory page boundary, so
// that no write, even one of io_uring's separate SQEs, covers part of an uncached page, which
// the kernel would first read from disk (the zero fill bypassed the page cache: 3600 instead
// of 6200 commits/s for 8 kB records on ext4).
void WalWriter::write_upto(Lsn target, bool sync) {
  const std::uint64_t bs = cfg_.block_size_bytes;
  const std::uint64_t seg = cfg_.segment_size_bytes;
  Lsn snap;
  {
    std::lock_guard ilk(insert_mu_);
    snap = insert_;
  }
  (void)target;  // everything inserted so far is written: one write serves every waiter
  Lsn from = written_.load();
  // walseg.direct_io: O_DIRECT writes whole sectors, so the write starts at the sector holding
  // `from`, its bytes before `from` again from the ring (the page holding `from` is still
  // there; direct_unit() never reaches back into an earlier WAL page).
  const std::uint64_t mp = memory_unit();
  const std::uint64_t unit = cfg_.direct_io ? direct_unit() : 1;
  const Lsn start = from - from % unit;
  Lsn page = start - start % bs;
  // Runs of pages contiguous in the file and in the ring, one segment each, in LSN order.
  std::vector<std::pair<SegNo, WriteRun>> runs;
  // Where tail_ takes over: the memory_unit() holding snap (or `start`, if later).
  const Lsn tail = snap % bs == 0 ? snap : std::max(start, snap - snap % mp);
  // The bytes of the first page below `start` are already in the file: starting there rather
  // than at the page start halves what an 8 kB commit writes (buffered I/O needs no alignment;
  // the page cache already holds the rest of the page).
  for (; page < tail; page += bs) {
    std::uint64_t skip = page < start ? start - page : 0;
    const std::byte* data = slot(page) + skip;
    std::size_t len = static_cast<std::size_t>(std::min(bs, tail - page) - skip);
    if (len == 0) continue;
    SegNo segno = segno_of_lsn(page, seg);
    std::uint64_t off = segment_offset(page, seg) + skip;
    if (!runs.empty()) {
      auto& [rs, r] = runs.back();
      if (rs == segno && r.data + r.len == data && r.offset + r.len == off) {
        r.len += len;
        continue;
      }
    }
    runs.push_back({segno, WriteRun{data, len, off, 0}});
  }
  // The tail's place; its length and bytes are settled below, once its segment is open.
  if (snap % bs != 0) runs.push_back({segno_of_lsn(snap, seg), WriteRun{tail_, 0, segment_offset(tail, seg), 1}});
  // One backend call per segment: its runs, then (if syncing) its sync linked behind them.
  std::size_t i = 0;
  while (i < runs.size()) {
    SegNo segno = runs[i].first;
    std::vector<WriteRun> part;
    for (; i < runs.size() && runs[i].first == segno; ++i) part.push_back(runs[i].second);
    OpenSegment& s = segment_for(segno);
    // The tail: zeros after the insert position to the first memory page boundary (with
    // walseg.direct_io, sector boundary: no page cache to fill) when the file already reads
    // zeros after it, else to the end of the page, so no stale bytes follow the last record.
    if (part.back().buf_index == 1) {
      std::uint64_t end = bs;
      const std::uint64_t end_unit = cfg_.direct_io ? direct_unit() : mp;
      if (s.zeroed) end = std::min(bs, (snap % bs + end_unit - 1) / end_unit * end_unit);
      const std::size_t have = static_cast<std::size_t>(snap - tail);
      const std::size_t len = static_cast<std::size_t>(end - tail % bs);
      std::memcpy(tail_, slot(tail - tail % bs) + tail % bs, have);
      std::memset(tail_ + have, 0, len - have);
      part.back().len = len;
    }
    io_->write(s.file, part, sync, io_counters_);
    for (const WriteRun& r : part) io_counters_.bytes_written += r.len;
    s.synced = sync;
  }
  written_.store(snap);
  if (!sync) return;
  // Segments written by earlier write-outs and not synced since (ring-full writes).
  for (auto& s : segments_)
    if (!s->synced) {
      io_->write(s->file, {}, true, io_counters_);
      s->synced = true;
    }
  flushed_.store(snap);
  ++io_counters_.flushes;
  // Synced segments before the one being filled are done with: close them (a segment file
  // stays open from its first write until it has been synced, case C14). The one just left is
  // closed a segment later: a close() right before the first commit into the next segment
  // made that commit's fdatasync measurably slower on ext4.
  SegNo current = segno_of_lsn(snap == 0 ? 0 : snap - 1, seg);
  std::erase_if(segments_, [&](const std::unique_ptr<OpenSegment>& s) { return s->segno + 1 < current; });
  // Past half of the segment, open the next one if the pool has it ready, so that the commit
  // crossing the boundary does no hand-off work (bench phase `switch`).
  if (segment_offset(snap, seg) >= seg / 2) open_next_early(current + 1);
}

}  // namespace walseg
