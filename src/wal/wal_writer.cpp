// WalWriter: the ring of WAL pages, append, group-commit flush (include/walseg/wal_writer.h).
#include "walseg/wal_writer.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "wal_io.h"
#include "walseg/dir_scan.h"
#include "walseg/own_files.h"

namespace walseg {

namespace {

constexpr std::size_t kMinRingPages = 4;
// The ring and the tail copy: page-aligned, which also suits O_DIRECT (statx dio_mem_align).
constexpr std::size_t kBufferAlign = 4096;

int open_flags(const Config& c) {
  int direct = c.direct_io ? O_DIRECT : 0;
  switch (c.sync_method) {
    case SyncMethod::kOpenDatasync: return O_RDWR | O_DSYNC | direct;
    case SyncMethod::kOpenSync: return O_RDWR | O_SYNC | direct;
    default: return O_RDWR | direct;
  }
}

// The file offset and length granularity of O_DIRECT on f as the kernel reports it (statx
// STATX_DIOALIGN, Linux 6.1); 0 where it does not say (tmpfs and btrfs on 6.18, which take any
// alignment).
std::uint32_t direct_io_alignment(const File& f) {
  struct statx st {};
  if (::statx(f.fd(), "", AT_EMPTY_PATH, STATX_DIOALIGN, &st) == 0 && (st.stx_mask & STATX_DIOALIGN) &&
      st.stx_dio_offset_align != 0) {
    if (st.stx_dio_mem_align > kBufferAlign)
      throw make_error(EINVAL, "open", f.path(),
                       fmt::format("walseg.direct_io = on: O_DIRECT on \"{}\" needs buffers aligned to {} bytes, "
                                   "more than the {} walseg provides; set walseg.direct_io = off",
                                   f.path(), st.stx_dio_mem_align, kBufferAlign));
    return st.stx_dio_offset_align;
  }
  return 0;
}

std::byte* alloc_pages(std::size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, kBufferAlign, bytes) != 0) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  return static_cast<std::byte*>(p);
}

}  // namespace

WalWriter::WalWriter(SegmentManager& manager, WalWriterOptions opts)
    : mgr_(manager), cfg_(manager.config()) {
  params_ = EncoderParams{cfg_.segment_size_bytes, cfg_.block_size_bytes, manager.timeline(), opts.system_id,
                          opts.epoch};
  check_encoder_params(params_);
  pages_ = static_cast<std::size_t>(cfg_.wal_buffers_bytes / cfg_.block_size_bytes);
  if (pages_ < kMinRingPages)
    throw make_error(EINVAL, "create WAL writer", manager.directory().path(),
                     fmt::format("walseg.wal_buffers = {} bytes is less than {} pages of {} bytes",
                                 cfg_.wal_buffers_bytes, kMinRingPages, cfg_.block_size_bytes));
  Lsn start = opts.resume_lsn.value_or(wal_start_lsn(params_));
  if (!is_valid_insert_position(params_, start))
    throw make_error(EINVAL, "create WAL writer", manager.directory().path(),
                     fmt::format("invalid resume position {}", format_lsn(start)));
  ring_ = alloc_pages(pages_ * cfg_.block_size_bytes);
  tail_ = alloc_pages(cfg_.block_size_bytes);
  std::vector<struct iovec> bufs = {{ring_, pages_ * cfg_.block_size_bytes}, {tail_, cfg_.block_size_bytes}};
  io_ = cfg_.io_method == IoMethod::kIoUring ? make_uring_io(cfg_.sync_method, bufs)
                                             : make_pwrite_io(cfg_.sync_method);
  insert_ = start;
  prev_ = opts.prev_record_lsn;
  written_ = start;
  flushed_ = start;
  if (start % cfg_.block_size_bytes != 0) load_resume_page(start);
}

WalWriter::~WalWriter() {
  std::free(ring_);
  std::free(tail_);
}

std::byte* WalWriter::slot(Lsn page_lsn) {
  return ring_ + ((page_lsn / cfg_.block_size_bytes) % pages_) * cfg_.block_size_bytes;
}

// Resuming in the middle of a page: the written part is read into the ring, so that the ring
// holds the page as the file does. Write-outs start at the resume position and never write
// the bytes before it again, but a ring slot with zeros there would be a trap for any change
// that did (it would erase flushed records).
void WalWriter::load_resume_page(Lsn pos) {
  Lsn page = pos - pos % cfg_.block_size_bytes;
  std::lock_guard wl(write_mu_);
  File& seg = segment_for(segno_of_lsn(page, cfg_.segment_size_bytes)).file;
  // With walseg.direct_io, through a buffered descriptor of its own: the segment's is O_DIRECT,
  // which would refuse a length that is not a whole number of sectors.
  std::optional<File> buffered;
  if (cfg_.direct_io) buffered = seg.reopen(O_RDONLY);
  File& s = buffered ? *buffered : seg;
  std::uint64_t off = segment_offset(page, cfg_.segment_size_bytes);
  std::size_t want = static_cast<std::size_t>(pos - page);
  for (std::size_t got = 0; got < want;) {
    std::size_t n = s.pread(slot(page) + got, want - got, off + got);
    // Past the end of a segment that grows by appends (a power cut may keep a size inside the
    // last record's padding): what was never written reads as zeros, as the reader read it
    // when it found the end here (page_source.h), and the ring slot is zeros already.
    if (n == 0) break;
    got += n;
  }
}

void WalWriter::fail(const Error& e) {
  {
    std::lock_guard lk(error_mu_);
    if (!error_) error_ = e;
  }
  wake_flush_waiters();  // so that none sleeps on, waiting for a flush that will not come
}

void WalWriter::throw_if_failed() const {
  std::lock_guard lk(error_mu_);
  if (error_) throw *error_;
}

Lsn WalWriter::insert_lsn() const {
  std::lock_guard lk(insert_mu_);
  return insert_;
}

WalWriterStats WalWriter::stats() const {
  std::lock_guard wl(write_mu_);  // lock order: write_mu_, then insert_mu_
  std::lock_guard lk(insert_mu_);
  WalWriterStats s = stats_;
  s.writes = io_counters_.writes;
  s.bytes_written = io_counters_.bytes_written;
  s.short_writes = io_counters_.short_writes;
  s.syncs = io_counters_.syncs;
  s.flushes = io_counters_.flushes;
  s.flush_waits = flush_waits_.load();
  s.commit_delays = commit_delays_.load();
  s.segment_switches = io_counters_.segment_switches;
  return s;
}

// Whether every page the record [insert_, end) touches has a free slot: the page that used the
// slot before it has been written out.
bool WalWriter::has_space_locked(Lsn end) const {
  const std::uint64_t bs = cfg_.block_size_bytes;
  Lsn last_page = (end - 1) - (end - 1) % bs;
  return last_page + bs <= pages_ * bs || written_.load() >= last_page + bs - pages_ * bs;
}

// The ring is full: write everything inserted so far out (without syncing), as XLogInsert's
// AdvanceXLInsertBuffer does when wal_buffers is full. The pages whose slots the next record
// needs all lie below the insert position (append refuses a record larger than the ring less
// two pages), so this frees them; writing no less keeps one write-out serving every waiter.
void WalWriter::make_space_locked(std::unique_lock<std::mutex>& ilk) {
  ++stats_.buffer_full_writes;
  ilk.unlock();
  {
    std::lock_guard wl(write_mu_);
    try {
      write_out(false);
    } catch (const Error& e) {
      fail(e);
      ilk.lock();
      throw;
    }
  }
  ilk.lock();
  throw_if_failed();
}

Lsn WalWriter::append(std::span<const std::byte> payload, std::uint8_t info) {
  throw_if_failed();
  const std::uint64_t bs = cfg_.block_size_bytes;
  if (payload.size() > max_payload_bytes(cfg_))
    throw make_error(EINVAL, "append", mgr_.directory().path(),
                     fmt::format("record of {} bytes does not fit in walseg.wal_buffers ({} bytes)",
                                 payload.size(), cfg_.wal_buffers_bytes));
  std::unique_lock ilk(insert_mu_);
  Lsn start = 0;
  // Others may append while this one writes pages out: re-check for the current position.
  for (Lsn end = reserve_record(params_, insert_, payload.size(), &start); !has_space_locked(end);
       end = reserve_record(params_, insert_, payload.size(), &start)) {
    // Everything inserted is written out and the record still does not fit: no write-out can
    // make room, so waiting would never end (break-it round 28 M1 spun here for good).
    if (written_.load() >= insert_)
      throw make_error(EINVAL, "append", mgr_.directory().path(),
                       fmt::format("record of {} bytes does not fit in walseg.wal_buffers ({} bytes) with its page "
                                   "headers",
                                   payload.size(), cfg_.wal_buffers_bytes));
    make_space_locked(ilk);
  }
  WalSink sink = [this, bs](Lsn lsn, const std::byte* data, std::size_t len) {
    std::byte* page = slot(lsn - lsn % bs);
    if (lsn % bs == 0) std::memset(page, 0, bs);  // a new page: no bytes of its slot's last use
    std::memcpy(page + lsn % bs, data, len);
  };
  Lsn got_end = encode_record(params_, insert_, prev_, info, payload, sink, &start);
  prev_ = start;
  stats_.bytes_inserted += got_end - insert_;
  insert_ = got_end;
  ++stats_.records;
  return got_end;
}

namespace {

// The name was walseg's segment when the manager scanned or made it, but the writer opens it
// by name later (minutes later, for a preallocated one): something may have been moved onto
// it or linked to it since. Checked on a descriptor of its own (the writer's may be O_DIRECT,
// which a 40-byte pread cannot use) that must be the same file as the writer's.
// `made`: the file the manager made, recycled or found under the name; a copy of it moved
// onto the name since carries the same stamp or page (break-it round 30 H2).
struct stat refuse_unless_still_ours(const Directory& dir, const std::string& name, File& writer_file,
                                     const WalControl& control, const FileIdentity& made) {
  File check = File::open_at(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  const struct stat a = writer_file.stat();
  const struct stat b = check.stat();
  bool ready = false;
  std::optional<std::string> why = not_walsegs_to_change(b);
  if (!why) why = foreign_reason(check, control, &ready);
  const bool this_wals_pages = !why && !ready;  // a WAL page of this WAL's first, not a ready stamp
  if (!why && (a.st_dev != b.st_dev || a.st_ino != b.st_ino)) why = "it was replaced while being opened";
  if (!why && made.known() && !same_identity(made, identity_of_fd(writer_file.fd())))
    why = "another file is under its name than the one walseg made there (moved or copied onto the name since)";
  if (!why) return a;
  const std::string path = dir.path_of(name);
  // This WAL's pages (not a ready stamp) under the name, in another file than the one walseg
  // had: its records are this WAL's, and moving it out takes them out of the WAL (break-it
  // round 37: overlayfs copies a lower-layer file up when it is first opened for writing, with
  // a new identity, and the advice to move it out lost 93 acknowledged records).
  if (this_wals_pages)
    throw make_error(EEXIST, "open", path,
                     fmt::format("could not write to segment \"{}\": {}, but it holds this WAL's pages, so do not "
                                 "move it out: that takes its records out of the WAL. Nothing was written to it. A "
                                 "copy restored over it, or overlayfs copying it up from a lower layer, gives a "
                                 "segment a new identity: start the writer again, whose opening reads the "
                                 "directory as it is then (and refuses it if a record it acknowledged is missing)",
                                 path, *why));
  throw make_error(EEXIST, "open", path,
                   fmt::format("could not write to segment \"{}\": it is no longer the segment walseg made: {}. "
                               "Something replaced or linked it after walseg made it; walseg writes only into "
                               "its own files, and nothing was written to it. Move it out of the directory and "
                               "start the writer again",
                               path, *why));
}

}  // namespace

// Through the manager's open directory, by name: a directory renamed or re-pointed meanwhile
// must not make the writer write into another WAL that took its name.
File WalWriter::open_segment(const ReadySegment& rs, struct stat* identity) {
  File f = open_segment_file(rs.name);
  *identity = refuse_unless_still_ours(mgr_.directory(), rs.name, f, mgr_.control(), rs.file);
  return f;
}

File WalWriter::open_segment_file(const std::string& name) {
  const std::string path = mgr_.directory().path_of(name);
  const int flags = open_flags(cfg_) | O_NOFOLLOW;
  if (!cfg_.direct_io) return File::open_at(mgr_.directory(), name, flags);
  File f = [&] {
    try {
      return File::open_at(mgr_.directory(), name, flags);
    } catch (const Error& e) {
      if (e.errnum() != EINVAL) throw;
      throw make_error(EINVAL, "open", path,
                       fmt::format("{}; the file system refuses O_DIRECT: set walseg.direct_io = off", e.what()));
    }
  }();
  // Unreported: memory_unit(). A file system that needs more and does not say so fails the
  // first write with EINVAL, naming the file.
  const std::uint32_t reported = direct_io_alignment(f);
  if (reported > memory_unit())
    throw make_error(EINVAL, "open", path,
                     fmt::format("walseg.direct_io = on: the kernel reports that O_DIRECT on \"{}\" writes in "
                                 "units of {} bytes, more than walseg.block_size ({} bytes); set "
                                 "walseg.direct_io = off or a larger walseg.block_size",
                                 path, reported, cfg_.block_size_bytes));
  direct_unit_ = std::max(direct_unit_, reported != 0 ? reported : static_cast<std::uint32_t>(memory_unit()));
  return f;
}

WalWriter::OpenSegment& WalWriter::segment_for(SegNo segno) {
  // Opened early, but no longer under its name (removed or replaced since, F8 of break-it
  // round 5): forget it, and take the segment as if it had not been opened early, which
  // refuses a file that is not walseg's.
  std::erase_if(segments_, [&](const std::unique_ptr<OpenSegment>& s) {
    return s->segno == segno && !s->announced && !mgr_.directory().names_file(s->name, s->identity);
  });
  for (auto& s : segments_) {
    if (s->segno != segno) continue;
    if (!s->announced) {  // opened early: now the writer really moves into it
      // Checked again as at the open: bytes written into it since (half a segment's time) are
      // someone's (break-it round 31 M1: a line appended to a ready segment after its early
      // open was written over). The name still names this descriptor's file (erase_if above),
      // which was the one the manager made.
      refuse_unless_still_ours(mgr_.directory(), s->name, s->file, mgr_.control(), FileIdentity{});
      mgr_.next_segment(segno);
      s->announced = true;
      note_segment_entered();
    }
    return *s;
  }
  ReadySegment rs = mgr_.next_segment(segno);
  struct stat identity{};
  File f = open_segment(rs, &identity);
  segments_.push_back(std::make_unique<OpenSegment>(OpenSegment{segno, std::move(f), true, true, rs.zeroed, rs.name, identity}));
  note_segment_entered();
  return *segments_.back();
}

// The first segment this writer enters is where it starts, not a switch.
void WalWriter::note_segment_entered() {
  if (entered_segment_) ++io_counters_.segment_switches;
  entered_segment_ = true;
}

// Opens segment `segno` now if the pool already has it ready, so the commit that crosses into
// it does no hand-off work. Best effort: if it is not ready or cannot be opened, the switch
// does it at the boundary as usual and reports any error there.
void WalWriter::open_next_early(SegNo segno) {
  for (auto& s : segments_)
    if (s->segno == segno) return;
  std::optional<ReadySegment> rs = mgr_.peek_ready(segno);
  if (!rs) return;
  try {
    struct stat identity{};
    File f = open_segment(*rs, &identity);
    segments_.push_back(
        std::make_unique<OpenSegment>(OpenSegment{segno, std::move(f), true, false, rs->zeroed, rs->name, identity}));
  } catch (const Error&) {
  }
}

void WalWriter::flush(Lsn lsn) {
  throw_if_failed();
  if (lsn > insert_lsn())
    throw make_error(EINVAL, "flush", mgr_.directory().path(),
                     fmt::format("flush request {} is beyond the insert position {}", format_lsn(lsn),
                                 format_lsn(insert_lsn())));
  if (flushed_.load() >= lsn) {
    ++flush_waits_;
    return;
  }
  // Group commit: one caller at a time leads (writes everything inserted so far and syncs);
  // the others sleep on flush_epoch_, which every leader bumps when its sync ends. A woken
  // waiter its sync covered returns without taking any lock, so the ones it did not cover
  // are not queued behind a convoy of those it did on their way to lead the next sync.
  arrivals_.fetch_add(1, std::memory_order_relaxed);
  bool led = false;
  for (;;) {
    const std::uint32_t epoch = flush_epoch_.load();  // before the checks: no wake-up is lost
    if (flushed_.load() >= lsn) break;
    throw_if_failed();
    bool idle = false;
    if (!flush_leader_.compare_exchange_strong(idle, true)) {
      flush_epoch_.wait(epoch);
      continue;
    }
    led = true;
    gather_group();
    std::exception_ptr failure;
    {
      std::lock_guard wl(write_mu_);
      try {
        const auto t0 = std::chrono::steady_clock::now();
        write_out(true);
        last_sync_ = std::chrono::steady_clock::now() - t0;
      } catch (const Error& e) {
        fail(e);
        failure = std::current_exception();
      } catch (...) {  // e.g. bad_alloc: not final for the writer, but never a stuck leader
        failure = std::current_exception();
      }
    }
    flush_leader_.store(false);
    wake_flush_waiters();
    if (failure) std::rethrow_exception(failure);
  }
  if (!led) ++flush_waits_;
}

// Why wait at all: on a machine with few CPUs the clients a sync served are still being
// woken and appending when the next leader starts, so a sync covered about 2.7 of 8 clients'
// commits; yielding until they are back in flush() lets one sync cover more of them. The
// group is counted in flush() callers, not records: one thread that appends several records
// per flush is still a lone committer. Measured with walseg bench --phases commit: see
// walseg.commit_delay in README.md.
// The wait is also bounded by the last write-and-sync's duration: a member that takes longer
// than a sync to come back (a client that thinks between commits) would otherwise set the
// pace of everyone, each wait ending only when it arrives (at walseg.commit_delay = 100 ms, a
// client committing every 50 ms brought a busy one from 4966 to 20 commits/s). Waiting at
// most one sync costs the others at most half their rate in that case.
void WalWriter::gather_group() {
  const std::uint64_t start = group_start_;
  if (cfg_.commit_delay_us > 0 && last_group_ > 1 &&
      arrivals_.load(std::memory_order_relaxed) - start < last_group_) {
    commit_delays_.fetch_add(1, std::memory_order_relaxed);
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::min<std::chrono::steady_clock::duration>(std::chrono::microseconds(cfg_.commit_delay_us), last_sync_);
    while (arrivals_.load(std::memory_order_relaxed) - start < last_group_ &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  }
  const std::uint64_t now = arrivals_.load(std::memory_order_relaxed);
  last_group_ = now - start;
  group_start_ = now;
}

void WalWriter::wake_flush_waiters() {
  flush_epoch_.fetch_add(1);
  flush_epoch_.notify_all();
}

void WalWriter::truncate_before(Lsn lsn) {
  throw_if_failed();
  if (lsn > flushed_.load())
    throw make_error(EINVAL, "truncate", mgr_.directory().path(),
                     fmt::format("cannot retire WAL before {}: only {} is flushed", format_lsn(lsn),
                                 format_lsn(flushed_.load())));
  // Everything below the flushed position was acknowledged: the control file may say so.
  mgr_.retire(segno_of_lsn(lsn, cfg_.segment_size_bytes), flushed_.load());
}

}  // namespace walseg
