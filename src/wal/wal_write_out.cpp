// WalWriter::write_out: turning ring pages into writes, segment by segment, and syncing them.
//
// One write-out writes every byte inserted so far (one write serves every waiter, as
// PostgreSQL's XLogWrite writes as far as it can), then zeros to the end of its page (or memory
// page); a syncing one then syncs every segment file written since the last sync and advances
// flushed_. The steps: plan_write_out (which bytes, from where), write_segment (one backend
// call per segment), sync_earlier_segments, and after_flush (closing and opening segments).
//
// Whole pages come straight from the ring. The memory page holding the insert position comes
// from tail_: its bytes up to the insert position copied (at most 4 kB), zeros after. Not from
// the ring, where appenders go on filling it: a write that caught a record half copied by an
// appender, followed by a complete one, would after a crash look like damage before valid WAL
// (a false corruption report). And as its own piece ending on a memory page boundary, so
// that no write, even one of io_uring's separate SQEs, covers part of an uncached page, which
// the kernel would first read from disk (the zero fill bypassed the page cache: 3600 instead
// of 6200 commits/s for 8 kB records on ext4).
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "wal_io.h"
#include "walseg/error.h"
#include "walseg/wal_writer.h"

namespace walseg {

/// What one write-out covers: settled once, at its start, then read by its steps.
struct WalWriter::WriteOut {
  Lsn snap;   ///< the insert position when it began: every byte below gets written
  Lsn start;  ///< its first byte: written_, back to its sector's start with walseg.direct_io
  Lsn tail;   ///< where tail_ takes over: the memory_unit() holding snap (or start, if later)
  /// Runs contiguous in the file and in the ring, one segment each, in LSN order; the last is
  /// tail_'s (buf_index 1, its length settled by fill_tail) when snap is inside a page.
  std::vector<std::pair<SegNo, WriteRun>> runs;
};

// Caller holds write_mu_. Throws walseg::Error; the caller makes it the writer's final error.
void WalWriter::write_out(bool sync) {
  WriteOut w = plan_write_out();
  for (std::size_t i = 0; i < w.runs.size();) i = write_segment(w, i, sync);
  written_.store(w.snap);
  if (!sync) return;
  sync_earlier_segments();
  refuse_unless_still_named();
  flushed_.store(w.snap);
  ++io_counters_.flushes;
  after_flush(w.snap);
}

// walseg.direct_io: O_DIRECT writes whole sectors, so the write starts at the sector holding
// written_, its bytes before written_ again from the ring (the page holding it is still there;
// direct_unit() never reaches back into an earlier WAL page).
WalWriter::WriteOut WalWriter::plan_write_out() {
  const std::uint64_t bs = cfg_.block_size_bytes;
  WriteOut w;
  {
    std::lock_guard ilk(insert_mu_);
    w.snap = insert_;
  }
  const Lsn from = written_.load();
  const std::uint64_t unit = cfg_.direct_io ? direct_unit() : 1;
  w.start = from - from % unit;
  w.tail = w.snap % bs == 0 ? w.snap : std::max(w.start, w.snap - w.snap % memory_unit());
  add_page_runs(w);
  // The tail's place; its length and bytes are settled once its segment is open.
  if (w.snap % bs != 0)
    w.runs.push_back({segno_of_lsn(w.snap, cfg_.segment_size_bytes),
                      WriteRun{tail_, 0, segment_offset(w.tail, cfg_.segment_size_bytes), 1}});
  return w;
}

// The ring's pages from w.start up to w.tail, merged into runs while they follow each other in
// the file and in the ring. The bytes of the first page below w.start are already in the file:
// starting there rather than at the page start halves what an 8 kB commit writes (buffered I/O
// needs no alignment; the page cache already holds the rest of the page).
void WalWriter::add_page_runs(WriteOut& w) {
  const std::uint64_t bs = cfg_.block_size_bytes;
  const std::uint64_t seg = cfg_.segment_size_bytes;
  for (Lsn page = w.start - w.start % bs; page < w.tail; page += bs) {
    const std::uint64_t skip = page < w.start ? w.start - page : 0;
    const std::byte* data = slot(page) + skip;
    const auto len = static_cast<std::size_t>(std::min(bs, w.tail - page) - skip);
    if (len == 0) continue;
    const SegNo segno = segno_of_lsn(page, seg);
    const std::uint64_t off = segment_offset(page, seg) + skip;
    if (!w.runs.empty()) {
      auto& [rs, r] = w.runs.back();
      if (rs == segno && r.data + r.len == data && r.offset + r.len == off) {
        r.len += len;
        continue;
      }
    }
    w.runs.push_back({segno, WriteRun{data, len, off, 0}});
  }
}

// One backend call for the runs of one segment, from w.runs[i]: its writes, then (if syncing)
// its sync linked behind them. Returns the index of the next segment's first run.
std::size_t WalWriter::write_segment(WriteOut& w, std::size_t i, bool sync) {
  const SegNo segno = w.runs[i].first;
  std::vector<WriteRun> part;
  for (; i < w.runs.size() && w.runs[i].first == segno; ++i) part.push_back(w.runs[i].second);
  OpenSegment& s = segment_for(segno);
  // Whatever an earlier segment got without a sync (ring-full write-outs) is synced before a
  // byte goes into a later one, as PostgreSQL's XLogWrite fsyncs each segment it finishes: so
  // after any crash, WAL in a later segment proves the earlier ones whole, and a stop before
  // it is damage, not a torn tail (the reader relies on it, wal_reader.cpp).
  for (auto& o : segments_)
    if (o->segno < segno && !o->synced) {
      io_->write(o->file, {}, true, io_counters_);
      o->synced = true;
    }
  if (part.back().buf_index == 1) part.back().len = fill_tail(w, s);
  io_->write(s.file, part, sync, io_counters_);
  for (const WriteRun& r : part) io_counters_.bytes_written += r.len;
  s.synced = sync;
  s.written = true;
  return i;
}

// Copies the tail's bytes into tail_ and returns its length: zeros after the insert position
// to the first memory page boundary (with walseg.direct_io, sector boundary: no page cache to
// fill) when the file already reads zeros after it, else to the end of the page, so that no
// stale bytes follow the last record.
std::size_t WalWriter::fill_tail(const WriteOut& w, const OpenSegment& s) {
  const std::uint64_t bs = cfg_.block_size_bytes;
  std::uint64_t end = bs;
  const std::uint64_t end_unit = cfg_.direct_io ? direct_unit() : memory_unit();
  if (s.zeroed) end = std::min(bs, (w.snap % bs + end_unit - 1) / end_unit * end_unit);
  const auto have = static_cast<std::size_t>(w.snap - w.tail);
  const auto len = static_cast<std::size_t>(end - w.tail % bs);
  std::memcpy(tail_, slot(w.tail - w.tail % bs) + w.tail % bs, have);
  std::memset(tail_ + have, 0, len - have);
  return len;
}

// Segments written by earlier write-outs and not synced since (ring-full writes): a commit is
// acknowledged only once every segment holding part of it is synced.
void WalWriter::sync_earlier_segments() {
  for (auto& s : segments_)
    if (!s->synced) {
      io_->write(s->file, {}, true, io_counters_);
      s->synced = true;
    }
}

// Before a commit is acknowledged, every segment written since the last sync must still be under its
// name: one removed or replaced (an `rm` or `mv` of a preallocated segment the writer had
// already opened, break-it round 5 F8) took the synced bytes into a file no reader finds, and
// acknowledging them would lose them. A path lookup per open segment (two at most, usually
// one) per sync, beside an fdatasync; the file's identity was taken when it was opened.
void WalWriter::refuse_unless_still_named() {
  for (const auto& s : segments_) {
    // Only those this sync covers: one done with may already be recycled under another name.
    if (!s->written) continue;
    if (mgr_.directory().names_file(s->name, s->identity)) {
      s->written = false;
      continue;
    }
    const std::string path = mgr_.directory().path_of(s->name);
    throw make_error(ESTALE, "write", path,
                     fmt::format("segment \"{}\" was removed, renamed or replaced while walseg was writing to "
                                 "it: every record in it, those acknowledged before included, is now in no file "
                                 "of the WAL directory, and no commit after the removal was acknowledged. Put "
                                 "the segment file back under its name if you still have it, then run walseg "
                                 "recover",
                                 path));
  }
}

// Synced segments before the one being filled are done with: close them (a segment file stays
// open from its first write until it has been synced, case C14). The one just left is closed a
// segment later: a close() right before the first commit into the next segment made that
// commit's fdatasync measurably slower on ext4. Past half of the segment, open the next one if
// the pool has it ready, so that the commit crossing the boundary does no hand-off work (bench
// phase `switch`).
void WalWriter::after_flush(Lsn snap) {
  const std::uint64_t seg = cfg_.segment_size_bytes;
  const SegNo current = segno_of_lsn(snap == 0 ? 0 : snap - 1, seg);
  std::erase_if(segments_, [&](const std::unique_ptr<OpenSegment>& s) { return s->segno + 1 < current; });
  if (segment_offset(snap, seg) >= seg / 2) open_next_early(current + 1);
}

}  // namespace walseg
