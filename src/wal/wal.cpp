// Wal::open (include/walseg/wal.h).
#include "walseg/wal.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "existing_wal.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/log.h"

namespace walseg {

std::unique_ptr<Wal> Wal::open(const std::string& dir, const Config& config, std::optional<TimeLineId> timeline) {
  return open(Directory::open(dir, true), config, timeline);
}

std::unique_ptr<Wal> Wal::open(Directory directory, const Config& config, std::optional<TimeLineId> timeline) {
  const std::string dir = directory.path();
  std::unique_ptr<Wal> w(new Wal());
  SegmentManager::Options mo;
  mo.config = config;
  mo.timeline = timeline;
  // The manager refuses a directory whose WAL the settings contradict, or whose files it did
  // not make, before anything is written there; recovery's refusal comes before that too.
  mo.before_changes = [&w, &dir](SegmentManager& m) {
    const WalControl c = m.control();
    failpoint::hit("wal.before_recovery");
    // Through the locked directory's descriptor: the directory at that path now may be another.
    w->recovery_ = find_end_of_wal(m.directory(), reader_options_for(c));
    // The reader starts at the control file's oldest LSN, so the end it finds is never below
    // it: even with every record start retired (truncate_before at the end of the WAL) or no
    // segment left there, the writer continues at or after LSNs it already handed out.
    // Acknowledged records are missing or unreadable before the durable point: writing after
    // the last valid record would overwrite whatever of them is still there.
    if (w->recovery_.corruption)
      throw make_error(ENOTRECOVERABLE, "open WAL", dir,
                       fmt::format("cannot write to the WAL in \"{}\", and walseg will not write over what follows "
                                   "the damage: {}",
                                   dir, describe_corruption(w->recovery_, c.durable_lsn)));
    // An epoch at its limit is refused here too, before the open changes anything (next_epoch
    // throws without writing then).
    if (std::max(c.epoch, w->recovery_.last_xid) == std::numeric_limits<std::uint32_t>::max())
      m.next_epoch(w->recovery_.last_xid);
  };
  w->manager_ = std::make_unique<SegmentManager>(std::move(directory), mo);
  const WalControl control = w->manager_->control();
  w->system_id_ = control.system_id;
  WalWriterOptions wo;
  wo.system_id = control.system_id;
  wo.epoch = w->manager_->next_epoch(w->recovery_.last_xid);
  wo.resume_lsn = w->recovery_.end_lsn;
  wo.prev_record_lsn = w->recovery_.last_record_lsn;
  log(LogLevel::kLog, fmt::format("WAL in \"{}\": {} records, resuming at {} (epoch {})", dir,
                                  w->recovery_.records, format_lsn(w->recovery_.end_lsn), wo.epoch));
  // A torn tail's earlier pages (never flushed) must not outlive the resume.
  {
    std::uint64_t n = clear_unfinished_record(w->manager_->directory(), control, w->recovery_.end_lsn,
                                              w->recovery_.stop_page);
    if (n > 0)
      log(LogLevel::kLog, fmt::format("WAL in \"{}\": zeroed {} pages of an unfinished record after {} "
                                      "(written by a run that crashed or failed before it flushed them)",
                                      dir, n, format_lsn(w->recovery_.end_lsn)));
  }
  // Nothing after the durable point is known to be on disk (existing_wal.h): before a record
  // is acknowledged after it, it is, and the control file says so.
  if (const Lsn from = std::max(control.durable_lsn, control.oldest_lsn); w->recovery_.end_lsn > from) {
    std::uint64_t n = make_recovered_wal_durable(w->manager_->directory(), control, from, w->recovery_.end_lsn);
    w->manager_->mark_durable(w->recovery_.end_lsn);
    // Not "a crash" alone (break-it round 31 L2: said after a run stopped by a full disk, whose
    // control file could not be updated).
    log(LogLevel::kLog, fmt::format("WAL in \"{}\": made the {} bytes from {} to {} durable (written past the "
                                    "durable point {} records, so never known to be synced: by a run that crashed, "
                                    "or that could not update it, as on a full disk)",
                                    dir, n, format_lsn(from), format_lsn(w->recovery_.end_lsn), kControlFileName));
  }
  w->writer_ = std::make_unique<WalWriter>(*w->manager_, wo);
  if (config.durable_lsn_interval_ms > 0) w->marker_ = std::thread([p = w.get()] { p->mark_durable_loop(); });
  return w;
}

Wal::~Wal() {
  {
    std::lock_guard lk(marker_mu_);
    marker_stop_ = true;
  }
  marker_cv_.notify_all();
  if (marker_.joinable()) marker_.join();
}

// A failed replacement (a full disk, a file moved onto walseg.control) costs only protection,
// not records: the durable LSN stays where it was, as before this thread existed. It is said
// once per distinct error, and tried again at the next interval.
void Wal::mark_durable_loop() {
  Lsn marked = manager_->control().durable_lsn;
  std::string last_error;
  std::unique_lock lk(marker_mu_);
  const std::chrono::milliseconds interval(manager_->config().durable_lsn_interval_ms);
  while (!marker_cv_.wait_for(lk, interval, [this] { return marker_stop_; })) {
    const Lsn flushed = writer_->flushed_lsn();
    if (flushed <= marked) continue;
    lk.unlock();
    try {
      manager_->mark_durable(flushed);
      marked = flushed;
      last_error.clear();
    } catch (const std::exception& e) {
      // Anything (bad_alloc too) stays in this thread: the writer and its records are not at stake.
      try {
        if (e.what() != last_error)
          log(LogLevel::kWarning, fmt::format("could not record the durable LSN {} in the WAL in \"{}\": {}",
                                              format_lsn(flushed), manager_->directory().path(), e.what()));
        last_error = e.what();
      } catch (...) {
      }
    }
    lk.lock();
  }
}

}  // namespace walseg
