// SegmentManager::retire: recycle or remove segments no longer needed, as PostgreSQL's
// RemoveOldXlogFiles / RemoveXlogFile do at a checkpoint.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "walseg/log.h"
#include "walseg/own_files.h"
#include "walseg/segment_manager.h"

namespace walseg {
namespace {

using Clock = std::chrono::steady_clock;

// The retired file's pages are of no further use to anyone: drop them from the page cache
// before they push out pages that are (PostgreSQL does the same for recycled WAL).
void drop_cache(const Directory& dir, const std::string& name) {
  try {
    File f = File::open_at(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    f.advise_dontneed();
  } catch (const Error&) {
    // A hint only; the rename or unlink that follows reports any real problem.
  }
}

// The books say the file is ours, but they were made when the directory was opened; a file
// put in its place since then by someone else must not be renamed or removed either.
// *file: the identity of the file under the name, which a recycled segment keeps.
std::optional<std::string> no_longer_ours(const Directory& dir, const std::string& name, const WalControl& c,
                                          FileIdentity* file) {
  struct stat st{};
  if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;  // gone: unlink says so
  if (!S_ISREG(st.st_mode)) return "it is no longer a regular file";
  *file = identity_of(dir.fd(), name.c_str(), st);
  if (auto why = not_walsegs_to_change(st)) return why;
  bool ready = false;
  return foreign_reason(dir, name, static_cast<std::uint64_t>(st.st_size), c, &ready);
}

}  // namespace

// Recycles `old` to the lowest free future name not beyond `horizon`, or removes it. Returns
// true if the directory needs an fsync for a removal. Called without mu_ held.
bool SegmentManager::remove_or_recycle(const SegmentName& old, SegNo horizon) {
  const std::string old_name = segment_file_name(old.timeline, old.segno, cfg_.segment_size_bytes);
  FileIdentity file;
  if (auto why = no_longer_ours(dir_, old_name, control(), &file)) {
    log(LogLevel::kWarning, fmt::format("leaving \"{}\" alone instead of retiring it: {}", dir_.path_of(old_name), *why));
    return false;
  }
  drop_cache(dir_, old_name);
  std::optional<SegNo> target;
  TimeLineId tli = 0;
  // Only a file of exactly the segment size is worth a future name: in append mode a short
  // segment would come back with a wrong size.
  struct stat st{};
  bool full_size = ::stat(dir_.path_of(old_name).c_str(), &st) == 0 &&
                   static_cast<std::uint64_t>(st.st_size) == cfg_.segment_size_bytes;
  if (cfg_.recycle && full_size) {
    std::lock_guard lk(mu_);
    tli = book_.timeline();
    // Future names only: above the writer's position and never at or below a segment being
    // retired. Right after a restart the writer may not have reported its position yet
    // (position_ is then just below the lowest existing segment), and without the second
    // bound a victim would be "recycled" onto its own name (EEXIST) or another past name.
    // last_retire_ is this retire's first_needed (set under mu_ before the victims are done).
    const SegNo first_free = std::max(position_ + 1, last_retire_.value_or(0));
    target = book_.free_name(first_free, horizon);
    if (target) book_.begin(*target);
  }
  if (target) {
    auto t0 = Clock::now();
    const std::string new_name = segment_file_name(tli, *target, cfg_.segment_size_bytes);
    try {
      recycle_segment(dir_, old_name, new_name);
    } catch (...) {
      // If the rename was done but the directory fsync failed, the new name's durability is
      // unknown: it must not be handed out (case C13), nor stay unknown to the books, or every
      // later creation of that segment fails with EEXIST. Rename it back, so that the file is
      // where retire() puts it back in the books and a later retire tries again. Best effort:
      // the original error is the one reported.
      if (!dir_.exists(old_name)) {
        try {
          dir_.rename_noreplace(new_name, old_name);
        } catch (const Error&) {
        }
      }
      std::lock_guard lk(mu_);
      book_.end(*target);
      throw;
    }
    std::lock_guard lk(mu_);
    book_.end(*target);
    // Under a timeline switched meanwhile the name is another timeline's: retired later.
    book_.add(SegmentName{tli, *target}, SegmentBook::Entry{true, false, file});
    ++recycled_;
    recycle_.add(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    done_cv_.notify_all();
    return false;
  }
  dir_.unlink(old_name, true);
  std::lock_guard lk(mu_);
  ++removed_;
  log(LogLevel::kDebug2, fmt::format("removed segment \"{}\"", dir_.path_of(old_name)));
  return true;
}

void SegmentManager::retire(SegNo first_needed, Lsn durable_lsn) {
  {
    std::lock_guard lk(mu_);
    throw_stored_error_locked();
  }
  {
    // Durable before any segment below it is touched: after a crash in what follows, readers
    // start at or above what is still there (PostgreSQL updates pg_control before
    // RemoveOldXlogFiles for the same reason).
    std::lock_guard ck(control_mu_);
    WalControl next = control_;
    next.oldest_lsn = std::max(next.oldest_lsn, lsn_of_segment(first_needed, 0, cfg_.segment_size_bytes));
    next.durable_lsn = std::max(next.durable_lsn, durable_lsn);
    update_control_locked(next);
  }
  std::vector<SegmentName> victims;
  SegNo horizon;
  {
    std::lock_guard lk(mu_);
    if (last_retire_ && first_needed > *last_retire_)
      distance_.observe(static_cast<double>((first_needed - *last_retire_) * cfg_.segment_size_bytes));
    last_retire_ = first_needed;
    horizon = recycle_horizon(first_needed, cfg_.segment_size_bytes, cfg_.min_size_bytes,
                              cfg_.max_size_bytes, distance_.bytes());
    // Taken out of the books first, so the pool never hands out a segment being retired.
    victims = book_.take_below(first_needed);
  }
  bool need_dir_fsync = false;
  std::size_t done = 0;
  try {
    for (; done < victims.size(); ++done) need_dir_fsync |= remove_or_recycle(victims[done], horizon);
    if (need_dir_fsync) dir_.fsync();
  } catch (...) {
    // Put back what was not dealt with, so a later retire tries again.
    std::lock_guard lk(mu_);
    book_.put_back(std::vector<SegmentName>(victims.begin() + static_cast<std::ptrdiff_t>(done), victims.end()));
    throw;
  }
  // Removals may have made room under walseg.max_size: wake the preallocator now rather than
  // at the writer's next switch, which would then find its segment missing (a stall).
  work_cv_.notify_all();
}

}  // namespace walseg
