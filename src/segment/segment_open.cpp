// SegmentManager's opening of a directory: the control file, the checks that refuse a WAL the
// settings or foreign files contradict, and the books from the scan
// (include/walseg/segment_manager.h).
#include <fcntl.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "walseg/file.h"
#include "walseg/log.h"
#include "walseg/segment_manager.h"
#include "walseg/wal_format.h"

namespace walseg {
namespace {


// The WAL directory's name is an entry of its parent, and the parent's of its own parent:
// made by the user (mkdir -p) or by an earlier run killed before it synced them, any of them
// may not be durable yet, and a power cut would take the WAL, acknowledged records and all,
// with it. As initdb does for pgdata (fsync_parent_path), fsync each ancestor up to the root
// of the directory's filesystem: above a mount point, entries belong to another filesystem.
// An ancestor that cannot be opened (EACCES: no read permission on a parent the user does
// not own) ends the walk with a warning rather than refusing the WAL.
void make_path_durable(const Directory& dir) {
  struct stat st{};
  if (::fstat(dir.fd(), &st) != 0) throw dir_error(errno, "stat", dir.path());
  const dev_t dev = st.st_dev;
  ino_t below = st.st_ino;
  Directory cur;
  try {
    cur = Directory::open_child(dir, "..");
    for (;;) {
      if (::fstat(cur.fd(), &st) != 0) throw dir_error(errno, "stat", cur.path());
      if (st.st_dev != dev || st.st_ino == below) return;  // another filesystem, or "/" (its own parent)
      cur.fsync();
      below = st.st_ino;
      cur = Directory::open_child(cur, "..");
    }
  } catch (const Error& e) {
    if (e.op() != "open" || e.errnum() != EACCES) throw;
    log(LogLevel::kWarning, fmt::format("could not make the path of WAL directory \"{}\" durable: {}; a power cut "
                                        "may lose a directory above it that was created recently",
                                        dir.path(), e.what()));
  }
}

std::string size_text(std::uint64_t bytes) {
  if (bytes % kMiB == 0) return fmt::format("{}MB", bytes / kMiB);
  if (bytes % 1024 == 0) return fmt::format("{}kB", bytes / 1024);
  return fmt::format("{}B", bytes);
}

[[noreturn]] void refuse(const Directory& dir, const std::string& why) {
  throw make_error(EINVAL, "open WAL directory", dir.path(),
                   fmt::format("cannot use WAL directory \"{}\": {}", dir.path(), why));
}

// A directory that already holds segment-named files but no control file holds a WAL walseg
// cannot place (another program's, or one whose control file was lost): starting a fresh WAL
// there would write over it.
void refuse_segments_without_control(const Directory& dir) {
  for (const auto& e : dir.list()) {
    if (!parse_segment_file_name(e.name, kMinSegmentSizeBytes)) continue;
    refuse(dir, fmt::format("it holds segment files (\"{}\" among them) but no {}, so walseg cannot tell "
                            "which WAL they belong to or where it starts, and will not write over them. {}",
                            e.name, kControlFileName, no_control_advice(dir, " otherwise use an empty directory")));
  }
}

void check_control(const Directory& dir, const WalControl& c, const Config& cfg,
                   std::optional<TimeLineId> timeline) {
  if (c.segment_size_bytes != cfg.segment_size_bytes)
    refuse(dir, fmt::format("its WAL has {} segments ({}), but walseg.segment_size is {}; set "
                            "walseg.segment_size = {}",
                            size_text(c.segment_size_bytes), kControlFileName, size_text(cfg.segment_size_bytes),
                            size_text(c.segment_size_bytes)));
  if (c.block_size_bytes != cfg.block_size_bytes)
    refuse(dir, fmt::format("its WAL has {} pages ({}), but walseg.block_size is {}; set walseg.block_size = {}",
                            size_text(c.block_size_bytes), kControlFileName, size_text(cfg.block_size_bytes),
                            size_text(c.block_size_bytes)));
  if (timeline && *timeline != c.timeline)
    refuse(dir, fmt::format("its WAL continues on timeline {} ({}), not {}; a timeline changes only by a "
                            "timeline switch",
                            c.timeline, kControlFileName, *timeline));
}

}  // namespace

bool SegmentManager::open_control(const Options& opts) {
  if (std::optional<WalControl> found = read_control(dir_)) {
    check_control(dir_, *found, cfg_, opts.timeline);
    control_ = *found;
    return false;
  }
  refuse_segments_without_control(dir_);
  WalControl c;
  c.system_id = new_system_id();
  c.segment_size_bytes = static_cast<std::uint32_t>(cfg_.segment_size_bytes);
  c.block_size_bytes = cfg_.block_size_bytes;
  c.timeline = opts.timeline.value_or(opts.new_timeline);
  c.append_mode = append_mode(cfg_.init_method);
  // PostgreSQL's first segment is 1 (initdb); walseg's writer starts a fresh WAL there too.
  c.oldest_lsn = lsn_of_segment(1, 0, cfg_.segment_size_bytes);
  control_ = c;
  return true;
}

void SegmentManager::write_new_control() {
  // The path first: a directory with a control file is one whose name is durable, and a
  // crash before the control file leaves none, so the next opening makes the path durable.
  make_path_durable(dir_);
  // By the descriptor it wrote through: the name may hold another file by the time a lookup
  // would run (break-it round 20 H1: one moved onto it during the directory fsync was taken
  // for this one, and abandon_new_wal removed it).
  new_control_file_ = write_control(dir_, control_, ControlTemp::kRemoveLeftover);
  // write_control removed a leftover under the temporary name (check_control_temp accepted it)
  // and put its own file there: it is no leftover for remove_leftover_temps any more, which
  // would find it gone and say it was left alone (break-it round 18).
  const auto it = std::find(scan_.leftover_temps.begin(), scan_.leftover_temps.end(), kControlTempFileName);
  if (it != scan_.leftover_temps.end()) {
    const auto i = static_cast<std::size_t>(it - scan_.leftover_temps.begin());
    scan_.leftover_temps.erase(it);
    if (i < scan_.leftover_temp_ids.size()) scan_.leftover_temp_ids.erase(scan_.leftover_temp_ids.begin() + i);
    scan_.removed_temps.push_back(kControlTempFileName);
    log(LogLevel::kLog, fmt::format("removed leftover temporary file \"{}\"", dir_.path_of(kControlTempFileName)));
  }
  log(LogLevel::kLog, fmt::format("created {} in \"{}\": {}", kControlFileName, dir_.path(), describe(control_)));
}

namespace {

// Whether walseg.control in `dir` is the file `id` and holds exactly the control file `c`
// (encode_control's bytes, all of them). Read through a descriptor that is checked to be `id`.
bool holds_exactly(const Directory& dir, const struct stat& id, const WalControl& c) {
  struct stat st{};
  File f = File::open_at_if_regular(dir, kControlFileName, O_RDONLY, st);
  if (!f.is_open() || st.st_dev != id.st_dev || st.st_ino != id.st_ino ||
      static_cast<std::uint64_t>(st.st_size) != kControlFileBytes)
    return false;
  std::array<std::byte, kControlFileBytes> want{}, got{};
  encode_control(c, want.data());
  std::size_t n = 0;
  while (n < got.size()) {
    const std::size_t r = f.pread(got.data() + n, got.size() - n, n);
    if (r == 0) break;
    n += r;
  }
  return n == got.size() && got == want;
}

}  // namespace

bool SegmentManager::abandon_new_wal() noexcept {
  try {
    {
      std::lock_guard lk(mu_);
      if (!new_control_file_ || !created_by_method_.empty() || thread_.joinable()) return false;
    }
    std::lock_guard lk(control_mu_);
    // Only the file open wrote, by its inode and its bytes: one moved onto the name since is
    // someone's, even under the inode number the filesystem gave again (break-it round 20 H2:
    // ext4 handed a user's file the freed number of this one, removed by them meanwhile).
    if (!dir_.names_file(kControlFileName, *new_control_file_) || !holds_exactly(dir_, *new_control_file_, control_)) {
      log(LogLevel::kLog, fmt::format("left \"{}\" as it is: it is no longer the control file this open wrote",
                                      dir_.path_of(kControlFileName)));
      return false;
    }
    dir_.unlink(kControlFileName, true);
    new_control_file_.reset();
    dir_.fsync();
    lock_.remove_if_made(dir_);
    log(LogLevel::kLog, fmt::format("removed {} from \"{}\" again: no segment was made in the new WAL",
                                    kControlFileName, dir_.path()));
    return true;
  } catch (const std::exception& e) {
    log(LogLevel::kLog, fmt::format("kept the new WAL in \"{}\": {}", dir_.path(), e.what()));
    return false;
  }
}

// Called after the scan, before anything is made or removed: what the writer may need must
// be walseg's. Every file in the way is named at once, so that one run says what to move.
void SegmentManager::check_scan() {
  const SegNo oldest = control_.oldest_lsn / cfg_.segment_size_bytes;
  auto needed = [&](const SegmentName& s) { return s.timeline == control_.timeline && s.segno >= oldest; };
  // Files that may hold this WAL (their first page or ready stamp is this WAL's, or cannot be
  // read) apart from the others: moving one out would take its records away (break-it round
  // 25 H2), and "walseg did not make them" is not true of them (round 27 M2: a hard-linked
  // copy of the directory was called so).
  std::vector<std::string> theirs, ours;
  const ForeignFile* first = nullptr;
  const ForeignFile* first_ours = nullptr;
  bool other_system = false;
  for (const ForeignFile& f : scan_.foreign) {
    if (!f.segment || !needed(*f.segment)) continue;
    if (!f.give_back.empty()) {
      if (!first_ours) first_ours = &f;
      ours.push_back(fmt::format("\"{}\": {}; {}", dir_.path_of(f.name), f.why, f.give_back));
      continue;
    }
    if (!first) first = &f;
    theirs.push_back(fmt::format("\"{}\": {}", dir_.path_of(f.name), f.why));
    // dir_scan's words for walseg's own page or stamp of another system identifier.
    other_system |= f.why.find("another system") != std::string::npos ||
                    f.why.find("another WAL") != std::string::npos;
  }
  // Segments of another system may be this directory's own, and walseg.control the stranger.
  const std::string control_advice =
      other_system ? fmt::format(". If they are this directory's own WAL, its {} is another WAL's (system identifier "
                                 "{}): put this directory's own {} back (from a backup) instead",
                                 kControlFileName, control_.system_id, kControlFileName)
                   : "";
  std::string ours_text;
  if (ours.size() == 1)
    ours_text = fmt::format("file \"{}\" has the name of a segment this WAL may still need and may hold its records "
                            "(its first page is this WAL's, or cannot be read), but walseg may not write to it as it "
                            "is: {}. Do not move it out of the directory, which would take them away; {}",
                            dir_.path_of(first_ours->name), first_ours->why, first_ours->give_back);
  else if (!ours.empty())
    ours_text = fmt::format("{} files have names of segments this WAL may still need and may hold its records (their "
                            "first page is this WAL's, or cannot be read), but walseg may not write to them as they "
                            "are. Do not move them out of the directory, which would take the records away: {}",
                            ours.size(), fmt::join(ours, "; "));
  std::string theirs_text;
  if (theirs.size() == 1)
    theirs_text = fmt::format("file \"{}\" has the name of a segment this WAL may still need, but walseg did not make "
                              "it: {}. walseg never uses, replaces, moves or removes a file it did not make: move it "
                              "out of the directory{}",
                              dir_.path_of(first->name), first->why, control_advice);
  else if (!theirs.empty())
    theirs_text = fmt::format("{} files have names of segments this WAL may still need, but walseg did not make "
                              "them: {}. walseg never uses, replaces, moves or removes a file it did not make: "
                              "move them out of the directory{}",
                              theirs.size(), fmt::join(theirs, "; "), control_advice);
  if (!ours_text.empty() && !theirs_text.empty()) refuse(dir_, ours_text + ". And " + theirs_text);
  if (!ours_text.empty()) refuse(dir_, ours_text);
  if (!theirs_text.empty()) refuse(dir_, theirs_text);
  // A short segment holding WAL: in an append-mode WAL it is one to go on with in append
  // mode. Otherwise it was cut (a partial copy or restore, case C33): switching to an
  // append-mode method would write after the cut as if nothing were missing.
  std::vector<std::string> appended, cut;
  for (const ScannedSegment& s : scan_.short_segments) {
    if (s.ready || !needed(s.name)) continue;
    const std::string path = dir_.path_of(segment_file_name(s.name.timeline, s.name.segno, cfg_.segment_size_bytes));
    (control_.append_mode ? appended : cut)
        .push_back(fmt::format("\"{}\" ({} of {} bytes)", path, s.size_bytes, cfg_.segment_size_bytes));
  }
  if (cut.size() == 1)
    refuse(dir_, fmt::format("file {}: this WAL's segments are full size, so the file was truncated or only partly "
                             "copied. walseg will not write into or after it: restore the complete file, or copy "
                             "the directory away for investigation",
                             cut[0]));
  if (!cut.empty())
    refuse(dir_, fmt::format("{} {}: this WAL's segments are full size, so {} truncated or only partly copied. "
                             "walseg will not write into or after {}: restore the complete {}, or copy the "
                             "directory away for investigation",
                             cut.size() == 1 ? "file" : "files", fmt::join(cut, ", "),
                             cut.size() == 1 ? "the file was" : "they were", cut.size() == 1 ? "it" : "them",
                             cut.size() == 1 ? "file" : "files"));
  if (!appended.empty())
    refuse(dir_, fmt::format("{} WAL written in append mode: {}; set walseg.init_method = none (or "
                             "fallocate_keep_size) to go on writing it",
                             appended.size() == 1 ? "file holds" : "files hold", fmt::join(appended, ", ")));
  // A segment made for appends and never written is of no use in full-size segments:
  // clean_up_scan removes it, but only while it holds walseg's bytes alone and was born after
  // walseg.lock. One that does not is in the way: kept, it was handed out, written in append
  // style, and the next opening refused the WAL as cut short (break-it round 32 M2: segments
  // of a plain `rsync -r` copy, born before its walseg.lock).
  if (!opening_in_append_mode()) {
    std::vector<std::string> stuck;
    for (const ScannedSegment& s : scan_.short_segments) {
      const std::string name = segment_file_name(s.name.timeline, s.name.segno, cfg_.segment_size_bytes);
      if (s.ready && !still_unwritten_ready_segment(dir_, name, control_))
        stuck.push_back(fmt::format("\"{}\"", dir_.path_of(name)));
    }
    if (!stuck.empty())
      refuse(dir_, fmt::format("{} {} made for appends (walseg's ready stamp, no record), of no use to "
                               "walseg.init_method = {}, and walseg will not remove {}: born before {} (there before "
                               "walseg used the directory, or copied in with it) or holding bytes walseg does not "
                               "write there. Move {} out of the directory (no record is lost), or keep "
                               "walseg.init_method = none (or fallocate_keep_size)",
                               stuck.size() == 1 ? "file" : "files", fmt::join(stuck, ", "),
                               to_string(cfg_.init_method), stuck.size() == 1 ? "it" : "them", kLockFileName,
                               stuck.size() == 1 ? "it" : "them"));
  }
}

// The changes the checks allowed, after the caller's own refusals.
void SegmentManager::clean_up_scan() {
  const bool appending = append_mode(cfg_.init_method);
  // A short segment that only carries its ready stamp (made by an append-mode method, never
  // written) holds nothing: in full-size mode it is removed and made again when needed.
  bool removed = false;
  std::erase_if(scan_.short_segments, [&](const ScannedSegment& s) {
    if (!s.ready) return false;
    const std::string name = segment_file_name(s.name.timeline, s.name.segno, cfg_.segment_size_bytes);
    // Recovery ran since the survey: a file moved onto the name meanwhile is someone's
    // (break-it round 8 F3).
    if (!still_unwritten_ready_segment(dir_, name, control_)) {
      log(LogLevel::kLog, fmt::format("leaving \"{}\" alone: it was replaced since the directory was scanned",
                                      dir_.path_of(name)));
      return false;
    }
    dir_.unlink(name, true);
    removed = true;
    log(LogLevel::kLog, fmt::format("removed \"{}\": a segment walseg made for appends and never wrote, of no "
                                    "use to walseg.init_method = {}",
                                    dir_.path_of(name), to_string(cfg_.init_method)));
    return true;
  });
  if (removed) dir_.fsync();
  if (control_.append_mode != appending) {
    // Said, since it lasts (the new-user trial: one `write -c walseg.init_method=none` turned a
    // full-size WAL into an append-mode one without a word, and full-size methods were refused
    // from then on).
    log(LogLevel::kLog,
        appending
            ? fmt::format("WAL in \"{}\" switches to append mode (walseg.init_method = {}): segments made from now "
                          "on grow as they are written; once one holds WAL, a full-size method is refused until "
                          "that segment is retired as no longer needed (the walseg tool retires none, so for "
                          "it this lasts: a new directory starts a WAL of full-size segments)",
                          dir_.path(), to_string(cfg_.init_method))
            : fmt::format("WAL in \"{}\" switches from append mode to full-size segments (walseg.init_method = {})",
                          dir_.path(), to_string(cfg_.init_method)));
    WalControl next = control_;
    next.append_mode = appending;
    std::lock_guard lk(control_mu_);
    update_control_locked(next);
  }
}

void SegmentManager::fill_books() {
  auto add = [&](const ScannedSegment& s) { book_.add(s.name, SegmentBook::Entry{false, false, s.file}); };
  for (const ScannedSegment& s : scan_.segments) add(s);
  // Short ones left after check_scan are below the oldest needed segment: retire removes them.
  for (const ScannedSegment& s : scan_.short_segments) add(s);
  // Until the writer says where it is, the WAL's oldest segment is the next it needs, so
  // segments from there on count as ahead of it.
  const SegNo oldest = control_.oldest_lsn / cfg_.segment_size_bytes;
  position_ = oldest > 0 ? oldest - 1 : 0;
}

std::array<std::byte, kReadyStampBytes> SegmentManager::stamp_for(TimeLineId tli, SegNo segno) const {
  PageHeader h;
  h.info = kPageLongHeader;
  h.timeline = tli;
  h.page_addr = lsn_of_segment(segno, 0, cfg_.segment_size_bytes);
  h.system_id = control_.system_id;
  h.segment_size_bytes = control_.segment_size_bytes;
  h.block_size_bytes = control_.block_size_bytes;
  std::array<std::byte, kReadyStampBytes> out{};
  encode_ready_stamp(h, out.data());
  return out;
}

void SegmentManager::mark_durable(Lsn durable_lsn) {
  std::lock_guard ck(control_mu_);
  WalControl next = control_;
  next.durable_lsn = std::max(next.durable_lsn, durable_lsn);
  update_control_locked(next);
}

std::uint32_t SegmentManager::next_epoch(std::uint32_t at_least) {
  std::lock_guard ck(control_mu_);
  WalControl next = control_;
  const std::uint32_t last = std::max(next.epoch, at_least);
  // Records of a later writer must carry a larger epoch (wal_reader.h): a wrapped one would
  // make its records look older than what they follow, and recovery would end before them.
  if (last == std::numeric_limits<std::uint32_t>::max())
    throw make_error(EOVERFLOW, "open WAL directory", dir_.path(),
                     fmt::format("cannot start a writer on the WAL in \"{}\": its writer epoch is {}, the "
                                 "last there is ({} says so, or its last record does); {} is damaged or was "
                                 "made by hand: restore it from a backup of the directory",
                                 dir_.path(), last, kControlFileName, kControlFileName));
  next.epoch = last + 1;
  update_control_locked(next);
  return next.epoch;
}

void SegmentManager::update_control_locked(const WalControl& next) {
  if (next == control_) return;
  write_control(dir_, next);
  control_ = next;
}

}  // namespace walseg
