// WalWriter::write_upto: turning ring pages into writes, segment by segment, and syncing them.
#include <algorithm>
#include <cstring>

#include "wal_io.h"
#include "walseg/wal_writer.h"

namespace walseg {

// Writes every page from the one holding written_ up to the insert position (at least up to
// `target`), whole pages, the partial last page from a private copy taken under insert_mu_ so
// appenders can go on filling it; with sync, then syncs every segment file written since the
// last sync and advances flushed_. Caller holds write_mu_. Throws walseg::Error; the caller
// makes it the writer's final error.
void WalWriter::write_upto(Lsn target, bool sync) {
  const std::uint64_t bs = cfg_.block_size_bytes;
  const std::uint64_t seg = cfg_.segment_size_bytes;
  Lsn snap;
  {
    std::lock_guard ilk(insert_mu_);
    snap = insert_;
    if (snap % bs != 0) std::memcpy(staging_, slot(snap - snap % bs), bs);
  }
  (void)target;  // everything inserted so far is written: one write serves every waiter
  Lsn from = written_.load();
  Lsn page = from - from % bs;
  // Runs of contiguous pages in one segment and one buffer, in LSN order.
  std::vector<std::pair<SegNo, WriteRun>> runs;
  for (; page < snap; page += bs) {
    bool partial = page + bs > snap;
    const std::byte* data = partial ? staging_ : slot(page);
    int buf = partial ? 1 : 0;
    SegNo segno = segno_of_lsn(page, seg);
    std::uint64_t off = segment_offset(page, seg);
    if (!runs.empty()) {
      auto& [rs, r] = runs.back();
      if (rs == segno && r.buf_index == buf && r.data + r.len == data && r.offset + r.len == off) {
        r.len += bs;
        continue;
      }
    }
    runs.push_back({segno, WriteRun{data, bs, off, buf}});
  }
  // One backend call per segment: its runs, then (if syncing) its sync linked behind them.
  std::size_t i = 0;
  while (i < runs.size()) {
    SegNo segno = runs[i].first;
    std::vector<WriteRun> part;
    for (; i < runs.size() && runs[i].first == segno; ++i) part.push_back(runs[i].second);
    OpenSegment& s = segment_for(segno);
    io_->write(s.file, part, sync, io_counters_);
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
