// SegmentManager's opening of a directory: the control file, the checks that refuse a WAL the
// settings or foreign files contradict, and the books from the scan
// (include/walseg/segment_manager.h).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include <fmt/format.h>

#include "walseg/log.h"
#include "walseg/segment_manager.h"

namespace walseg {
namespace {

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
                            "which WAL they belong to or where it starts, and will not write over them. "
                            "If this is a walseg WAL whose {} was lost, restore that file from a backup; "
                            "otherwise use an empty directory",
                            e.name, kControlFileName, kControlFileName));
  }
}

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

void SegmentManager::open_control(std::optional<TimeLineId> timeline) {
  if (std::optional<WalControl> found = read_control(dir_)) {
    check_control(dir_, *found, cfg_, timeline);
    control_ = *found;
    return;
  }
  refuse_segments_without_control(dir_);
  WalControl c;
  c.system_id = new_system_id();
  c.segment_size_bytes = static_cast<std::uint32_t>(cfg_.segment_size_bytes);
  c.block_size_bytes = cfg_.block_size_bytes;
  c.timeline = timeline.value_or(1);
  c.append_mode = append_mode(cfg_.init_method);
  // PostgreSQL's first segment is 1 (initdb); walseg's writer starts a fresh WAL there too.
  c.oldest_lsn = lsn_of_segment(1, 0, cfg_.segment_size_bytes);
  // The path first: a directory with a control file is one whose name is durable, and a
  // crash before the control file leaves none, so the next opening makes the path durable.
  make_path_durable(dir_);
  write_control(dir_, c);
  control_ = c;
  control_created_ = true;
  log(LogLevel::kLog, fmt::format("created {} in \"{}\": {}", kControlFileName, dir_.path(), describe(c)));
}

// Called after the scan, before anything is made: what the writer may need must be walseg's.
void SegmentManager::check_scan() {
  const SegNo oldest = control_.oldest_lsn / cfg_.segment_size_bytes;
  auto needed = [&](const SegmentName& s) { return s.timeline == control_.timeline && s.segno >= oldest; };
  for (const ForeignFile& f : scan_.foreign)
    if (f.segment && needed(*f.segment))
      refuse(dir_, fmt::format("file \"{}\" has the name of a segment this WAL may still need, but walseg did not "
                               "make it: {}. walseg never uses, replaces, moves or removes a file it did not "
                               "make: move it out of the directory",
                               dir_.path_of(f.name), f.why));
  // A short segment that only carries its ready stamp (made by an append-mode method, never
  // written) holds nothing: start() removes it. Any other short one the WAL needs is WAL.
  for (const ScannedSegment& s : scan_.short_segments) {
    if (s.ready || !needed(s.name)) continue;
    const std::string path = dir_.path_of(segment_file_name(s.name.timeline, s.name.segno, cfg_.segment_size_bytes));
    // The control file knows whether this WAL grows its segments. If it does not, a short one
    // was cut (a partial copy or restore, case C33): switching to an append-mode method would
    // write after the cut as if nothing were missing.
    if (control_.append_mode)
      refuse(dir_, fmt::format("file \"{}\" holds WAL written in append mode ({} of {} bytes); set "
                               "walseg.init_method = none (or fallocate_keep_size) to go on writing it",
                               path, s.size_bytes, cfg_.segment_size_bytes));
    refuse(dir_, fmt::format("file \"{}\" is {} bytes, not {}: this WAL's segments are full size, so the file was "
                             "truncated or only partly copied. walseg will not write into or after it: restore "
                             "the complete file, or copy the directory away for investigation",
                             path, s.size_bytes, cfg_.segment_size_bytes));
  }
}

// In full-size mode a segment made for appends and never written is made again when needed.
void SegmentManager::remove_unwritten_short_segments() {
  bool removed = false;
  std::erase_if(scan_.short_segments, [&](const ScannedSegment& s) {
    if (!s.ready) return false;
    const std::string name = segment_file_name(s.name.timeline, s.name.segno, cfg_.segment_size_bytes);
    dir_.unlink(name, true);
    removed = true;
    log(LogLevel::kLog, fmt::format("removed \"{}\": a segment walseg made for appends and never wrote, of no "
                                    "use to walseg.init_method = {}",
                                    dir_.path_of(name), to_string(cfg_.init_method)));
    return true;
  });
  if (removed) dir_.fsync();
}

void SegmentManager::fill_books() {
  auto add = [&](const ScannedSegment& s) { book_.add(s.name); };
  for (const ScannedSegment& s : scan_.segments) add(s);
  // Short ones that hold WAL are below the oldest needed segment (check_scan): retire removes
  // them. Unwritten ones are start()'s to remove, never handed out.
  for (const ScannedSegment& s : scan_.short_segments)
    if (!s.ready) add(s);
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
