// WalWriter::write_upto: turning ring pages into writes, segment by segment, and syncing them.
#include <algorithm>
#include <cstring>

#include "wal_io.h"
#include "walseg/wal_writer.h"

namespace walseg {
namespace {

// The page cache's unit: a write covering only part of one that is not cached reads it first.
constexpr std::uint64_t kMemoryPageBytes = 4096;

}  // namespace

// Writes every byte from written_ up to the insert position (at least up to `target`) straight
// from the ring; with sync, then syncs every segment file written since the last sync and
// advances flushed_. Caller holds write_mu_. Throws walseg::Error; the caller makes it the
// writer's final error.
//
// Appenders may go on filling the partial last page while it is being written, as in
// PostgreSQL's XLogWrite: bytes after the snapshot may reach the file half-made, but they lie
// beyond what this write makes durable and the next write-out starts at the snapshot again.
// (A private copy of the page cost an 8 kB memcpy and a second write per commit.)
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
  Lsn page = from - from % bs;
  // Runs of pages contiguous in the file and in the ring, one segment each, in LSN order.
  std::vector<std::pair<SegNo, WriteRun>> runs;
  // The bytes of the first page below `from` are already in the file: starting at `from`
  // rather than at the page start halves what an 8 kB commit writes (buffered I/O needs no
  // alignment; the page cache already holds the rest of the page).
  for (; page < snap; page += bs) {
    std::uint64_t skip = page < from ? from - page : 0;
    const std::byte* data = slot(page) + skip;
    std::size_t len = static_cast<std::size_t>(bs - skip);
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
  // One backend call per segment: its runs, then (if syncing) its sync linked behind them.
  std::size_t i = 0;
  while (i < runs.size()) {
    SegNo segno = runs[i].first;
    std::vector<WriteRun> part;
    for (; i < runs.size() && runs[i].first == segno; ++i) part.push_back(runs[i].second);
    OpenSegment& s = segment_for(segno);
    // The partial last page ends at the first memory page boundary after the insert position
    // when the file already reads zeros after it; otherwise it is written whole, so no stale
    // bytes follow the last record. Ending mid memory page would make the kernel read that
    // page from disk first (the zero fill bypassed the page cache): 3600 instead of 6200
    // commits/s for 8 kB records on ext4.
    if (s.zeroed && snap % bs != 0 && segno == segno_of_lsn(snap, seg)) {
      std::uint64_t end = snap % bs + kMemoryPageBytes - 1;
      end -= end % kMemoryPageBytes;
      if (end < bs) part.back().len -= static_cast<std::size_t>(bs - end);
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
