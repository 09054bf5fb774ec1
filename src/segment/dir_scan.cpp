// Start-up scan of a WAL directory (include/walseg/dir_scan.h).
#include "walseg/dir_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "walseg/auto_method.h"
#include "walseg/dir_lock.h"
#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/log.h"
#include "walseg/made_files.h"
#include "walseg/measure_loop.h"
#include "walseg/own_files.h"
#include "walseg/postgresql_signs.h"
#include "walseg/wal_control.h"

namespace walseg {
namespace {

bool name_less(const SegmentName& a, const SegmentName& b) {
  return a.timeline != b.timeline ? a.timeline < b.timeline : a.segno < b.segno;
}

// Why a first page that is not ours is not: in words a DBA can act on.
std::string describe_first_bytes(const std::array<std::byte, kReadyStampBytes>& b, const WalControl& c) {
  if (std::all_of(b.begin(), b.end(), [](std::byte x) { return x == std::byte{0}; }))
    return "its first bytes are zeros (a preallocated file walseg did not stamp)";
  const PageHeader h = decode_page_header(b.data());
  if (h.magic == kReadySegmentMagic && decode_ready_stamp(b.data()))
    return fmt::format("it was preallocated for another WAL (system identifier {}, this WAL's is {})",
                       h.system_id, c.system_id);
  if (h.magic == kReadySegmentMagic) return "its ready stamp is damaged";
  if (h.magic != kWalPageMagic)
    return fmt::format("its first page is not a walseg page header (magic number {:04X})", h.magic);
  if (!h.is_long()) return "its first page has no long page header";
  if (h.system_id != c.system_id)
    return fmt::format("it holds WAL of another system (system identifier {}, this WAL's is {})",
                       h.system_id, c.system_id);
  return fmt::format("it holds WAL with {}-byte segments and {}-byte pages, this WAL has {} and {}",
                     h.segment_size_bytes, h.block_size_bytes, c.segment_size_bytes, c.block_size_bytes);
}

// A segment walseg made and never wrote holds its ready stamp and zeros (an append-mode one, the
// stamp alone): walseg's first write into it puts a page header over the stamp. Bytes after the
// stamp in its first 4 kB, the unit a power cut keeps or loses together with the stamp, are
// someone's (break-it round 30 H1: a user's line appended to an append-mode segment was
// written over). Beyond that unit, walseg's own first page can follow a stamp a power cut
// kept, so only the first unit is read: one pread per segment at the scan and at a hand-off.
// A copy that kept its times (born after its own mtime: cp -a, rsync -t, tar) is no file a
// power cut tore, so all of it is read: one holding only what walseg made there loses nothing
// by being written into (a WAL directory restored with cp -a goes on), one with any other byte
// is someone's (break-it round 31 H2: such a copy put in place of a ready segment, changed
// further on, was written into).
std::optional<std::string> bytes_after_the_stamp(File& f, std::uint64_t size) {
  constexpr std::uint64_t kUnit = 4096;
  const bool copy = made_files::born_after_its_mtime(f.fd());
  const std::uint64_t end = copy ? size : std::min(size, kUnit);
  std::vector<std::byte> b(64 * 1024);
  for (std::uint64_t off = 0; off < end;) {
    const std::size_t n = f.pread(b.data(), static_cast<std::size_t>(std::min<std::uint64_t>(b.size(), end - off)), off);
    if (n == 0) break;
    const auto from = b.begin() + static_cast<std::ptrdiff_t>(off == 0 ? std::min<std::size_t>(kReadyStampBytes, n) : 0);
    const auto first = std::find_if(from, b.begin() + static_cast<std::ptrdiff_t>(n),
                                    [](std::byte x) { return x != std::byte{0}; });
    if (first == b.begin() + static_cast<std::ptrdiff_t>(n)) {
      off += n;
      continue;
    }
    const std::uint64_t at = off + static_cast<std::uint64_t>(first - b.begin());
    if (copy)
      return fmt::format("it carries walseg's ready stamp, but it is a copy that kept its times (born after its last "
                         "change: cp -a, rsync -t, tar) and holds bytes other than zeros after the stamp, from offset "
                         "{}, which walseg never leaves in a segment it has not written: it is someone's (it holds no "
                         "record of this WAL)",
                         at);
    return fmt::format("it carries walseg's ready stamp (made by walseg and never written by it), but bytes other "
                       "than zeros follow the stamp, from offset {}; walseg writes its first page over the stamp, so "
                       "someone wrote into the file after walseg made it (it holds no record of this WAL)",
                       at);
  }
  return std::nullopt;
}

// "it is a FIFO, not a regular file": what a DBA finds with ls -l.
std::string not_regular(const struct stat& st) {
  const char* what = S_ISFIFO(st.st_mode)  ? "a FIFO"
                     : S_ISDIR(st.st_mode) ? "a directory"
                     : S_ISLNK(st.st_mode) ? "a symbolic link"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "a device";
  return fmt::format("it is {}, not a regular file", what);
}

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool is_ours(const std::array<std::byte, kReadyStampBytes>& b, const WalControl& c, bool* ready) {
  const std::optional<FirstPage> p = decode_first_page(b.data());
  if (!p) return false;
  *ready = p->ready_stamp;
  return p->header.system_id == c.system_id && p->header.segment_size_bytes == c.segment_size_bytes &&
         p->header.block_size_bytes == c.block_size_bytes;
}

// What walseg puts in a file under a temporary name before it is renamed, so what a crash
// leaves there: zeros (every fill method's, holes included), its ready stamp at the start,
// and the auto probe's commits (kMeasureRecordByte). Anything else anywhere in the file
// is someone's (break-it round 5 F4: a user's xlogtemp.4242 was left alone by the first
// opening and removed by the second). Never throws: an unreadable file is not removed.
constexpr std::size_t kTempCheckBytes = 64 * 1024;
// Born before walseg.lock, which walseg's first opening of the directory made: the file was
// there before walseg used the directory, so it is someone's whatever it holds (break-it round
// 10 F5: the first opening left a user's xlogtemp.42 of zeros alone, the second removed it).
// Unknown birth times (no lock file, a filesystem without them) leave the content rule.
// Equal birth times count as before: timestamps come from the kernel's coarse clock (4 ms
// here), so a file made just before the tool started can share the lock's tick (CI saw the
// user's xlogtemp.42 removed); a leftover of walseg's from that same tick is left, the safe way.
bool born_before_lock(const Directory& dir, const std::string& name) {
  const std::int64_t born = made_files::birth_time_ns(dir.fd(), name);
  const std::int64_t lock_born = made_files::birth_time_ns(dir.fd(), kLockFileName);
  return born >= 0 && lock_born >= 0 && born <= lock_born;
}

// Bytes only: every caller asks born_before_lock first, and says which of the two it was.
bool temp_content_is_walsegs(const Directory& dir, const std::string& name, const struct stat& st,
                             const WalControl& control) {
  // A probe file may be larger than a small segment.
  if (static_cast<std::uint64_t>(st.st_size) > std::max<std::uint64_t>(control.segment_size_bytes, kProbeFileBytes))
    return false;
  // The auto decision's cache on its way to walseg.auto (auto_method.h).
  if (holds_auto_cache(dir, name)) return true;
  try {
    File f = File::open_at(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    std::vector<std::byte> b(kTempCheckBytes);
    b.resize(f.pread(b.data(), b.size(), 0));
    std::size_t from = 0;
    if (b.size() >= kReadyStampBytes) {
      std::array<std::byte, kReadyStampBytes> head{};
      std::copy_n(b.begin(), kReadyStampBytes, head.begin());
      bool ready = false;
      if (is_ours(head, control, &ready)) {
        // WAL pages under a temporary name (a timeline switch's copy a crash cut short, or a
        // user's copy of a segment: break-it round 8 F2) are not told apart by their first
        // page: left alone, as anything else that holds WAL.
        if (!ready) return false;
        from = kReadyStampBytes;
      }
    }
    // Every byte, not only the first chunk's (break-it round 7 F1: a user's file of 64 kB of
    // zeros and then data was removed). Holes read as zeros without touching the disk.
    auto walsegs = [](std::byte x) { return x == std::byte{0} || x == kMeasureRecordByte; };
    if (!std::all_of(b.begin() + static_cast<std::ptrdiff_t>(from), b.end(), walsegs)) return false;
    // Until end of file, not until a short read: one read may return less (FUSE, network
    // filesystems), and an unread tail must not count as zeros.
    for (std::uint64_t off = b.size(); !b.empty(); off += b.size()) {
      b.resize(kTempCheckBytes);
      b.resize(f.pread(b.data(), b.size(), off));
      if (!std::all_of(b.begin(), b.end(), walsegs)) return false;
    }
    return true;
  } catch (const Error&) {
    return false;
  }
}

struct Scanner {
  const Directory& dir;
  const WalControl& control;
  bool append_mode;
  bool control_is_new;
  const std::vector<std::uint32_t>& earlier_writer_pids;
  bool lock_existed;
  const std::vector<std::string>& listed_temps;
  ScanReport report;

  // Only noted here: removing is remove_leftover_temps'. A caller that may still refuse the
  // directory surveys first and removes once it has accepted it.
  void remove_temp(const std::string& name, const struct stat& st) {
    report.leftover_temps.push_back(name);
    report.leftover_temp_ids.emplace_back(static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino));
  }

  void segment(const std::string& name, const WalFileInfo& info, const struct stat& st) {
    const SegmentName sn{info.timeline, info.segno};
    if (!S_ISREG(st.st_mode)) return foreign(name, sn, not_regular(st), st);
    const auto size = static_cast<std::uint64_t>(st.st_size);
    bool ready = false;
    // A writer's survey: what it keeps as a segment it may later write into, recycle or
    // remove, so the file must be its own to change, whatever it holds (break-it round 23 H1:
    // a 0444 copy of a segment, another user's, at a future name was recycled and written into).
    if (auto why = not_walsegs_to_change(st)) return foreign(name, sn, *why, st);
    // With a ready stamp it holds no record of this WAL: moving it out loses nothing, so
    // there is nothing to give back.
    if (auto why = foreign_reason(dir, name, size, control, &ready))
      return foreign(name, sn, *why, ready ? std::nullopt : std::optional<struct stat>(st));
    ScannedSegment s{sn, size, ready, identity_of(dir.fd(), name.c_str(), st)};
    if (size == control.segment_size_bytes || append_mode) report.segments.push_back(s);
    else report.short_segments.push_back(s);
  }

  // A segment holding an earlier segment's WAL (or ready stamp) is one walseg recycled: it renames the
  // earlier one, so that name is gone. Where the earlier segment is still here under its own
  // name, the file is someone's copy of it (break-it round 28 H2: `cp` of segment 1 to a
  // future name was taken for a recycled segment and written into). Nothing is lost by moving
  // it out: the segment it copies is still here.
  void copies_of_live_segments() {
    std::set<std::pair<TimeLineId, SegNo>> here;
    for (const auto* list : {&report.segments, &report.short_segments})
      for (const ScannedSegment& x : *list) here.emplace(x.name.timeline, x.name.segno);
    for (auto* list : {&report.segments, &report.short_segments}) {
      std::vector<ScannedSegment> kept;
      for (const ScannedSegment& x : *list) {
        const std::string name = segment_file_name(x.name.timeline, x.name.segno, control.segment_size_bytes);
        const std::optional<std::string> why =
            copy_of_a_live_segment(dir, x.name, control, [&](SegNo s) { return here.count({x.name.timeline, s}) != 0; });
        if (why) {
          report.foreign.push_back(ForeignFile{name, x.name, *why, ""});
          log(LogLevel::kLog, fmt::format("leaving \"{}\" alone: it has a segment's name but walseg did not make it "
                                          "for this WAL: {}",
                                          dir.path_of(name), *why));
          continue;
        }
        kept.push_back(x);
      }
      *list = std::move(kept);
    }
  }

  void foreign(const std::string& name, std::optional<SegmentName> sn, const std::string& why,
               std::optional<struct stat> st = std::nullopt) {
    // Its first page says whether it may be this WAL's own file: then the refusal says how to
    // make it walseg's again rather than only "move it out".
    std::string give_back;
    if (st) give_back = give_back_advice(dir, name, *st, control).value_or("");
    report.foreign.push_back(ForeignFile{name, sn, why, give_back});
    log(LogLevel::kLog,
        give_back.empty()
            ? fmt::format("leaving \"{}\" alone: it has a segment's name but walseg did not make it for this WAL: {}",
                          dir.path_of(name), why)
            : fmt::format("leaving \"{}\" alone: it may hold this WAL, but walseg may not change it as it is: {}",
                          dir.path_of(name), why));
  }

  void entry(const std::string& name) {
    if (is_walseg_bookkeeping_file(name)) return;
    struct stat st{};
    if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return;  // removed under us; nothing to classify
      throw file_error(errno, "stat", dir.path_of(name));
    }
    if (name == kControlTempFileName) {
      // In a directory with no control file and no walseg.lock before this opening, no walseg
      // crash can have left it: someone's (break-it round 17 H1: a user's copy of another
      // WAL's control file under that name was removed by the first write). The lock file's
      // existence, not its PID: a power cut may lose the PID and keep the synced temp file.
      // Refused with why no walseg crash can have left it: it is not walseg's.
      auto not_left_by_a_crash = [&](const std::string& because) {
        return make_error(EEXIST, "open", dir.path_of(name),
                          fmt::format("file \"{}\" has the name of walseg's temporary control file, but {}, so no "
                                      "walseg crash left it there: it is not walseg's, and walseg will not remove "
                                      "it; move it out of the directory",
                                      dir.path_of(name), because));
      };
      if (control_is_new && !lock_existed)
        throw not_left_by_a_crash(fmt::format("\"{}\" has no {} and no {} of an earlier writer", dir.path(),
                                              kControlFileName, kLockFileName));
      // A walseg.lock naming no writer says the last one closed the directory cleanly (its PID
      // is synced before it makes any file, and taken out only after its last control-file
      // update: DirLock::mark_clean_close), so no crash left this: someone put it there since,
      // perhaps during that writer's run, which refused it (break-it round 33: the next
      // opening removed a copy of walseg.control put there during a run as a leftover).
      if (earlier_writer_pids.empty())
        throw not_left_by_a_crash(fmt::format("\"{}\" names no writer whose crash may have left it (the last one "
                                              "closed the directory cleanly)",
                                              dir.path_of(kLockFileName)));
      // Listed in walseg.lock before a writer created it, or someone's (break-it round 35 H3:
      // one put there during a run, which the writer refused, was removed after its crash).
      if (!listed(listed_temps, name))
        throw not_left_by_a_crash(
            fmt::format("\"{}\" does not list it as a file a writer was making", dir.path_of(kLockFileName)));
      // Someone's file under that name: refuse, never remove. A control file this opening
      // made follows a first write a crash cut short, under another system identifier.
      check_control_temp(dir, control_is_new ? 0 : control.system_id);
      return remove_temp(name, st);
    }
    const WalFileInfo info = classify_wal_file_name(name, control.segment_size_bytes);
    // A leftover is walseg's by its name only if nobody linked to it (another hard link makes
    // it someone's file too), and only the last writer's.
    std::optional<std::string> temp_why;
    if (info.kind == WalFileKind::kTempFile) {
      temp_why = temp_file_left_alone_reason(dir, name, st, control, control_is_new, earlier_writer_pids, listed_temps);
      if (!temp_why) return remove_temp(name, st);
    }
    if (info.kind == WalFileKind::kSegmentFile) return segment(name, info, st);
    // A name that would be a segment's under another segment size is still not to be touched.
    if (name.size() == kSegmentNameLength && parse_segment_file_name(name, kMinSegmentSizeBytes))
      return foreign(name, std::nullopt, "its segment number is out of range for this WAL's segment size");
    const std::string what = !S_ISREG(st.st_mode)  ? "not a regular file"
                             : temp_why              ? fmt::format("{} {}", to_string(info.kind), *temp_why)
                             : st.st_nlink != 1      ? fmt::format("{} with other hard links", to_string(info.kind))
                             : name.size() > kSegmentNameLength &&
                                     name.compare(kSegmentNameLength, std::string::npos, kBrokenSuffix) == 0 &&
                                     parse_segment_file_name(name.substr(0, kSegmentNameLength), kMinSegmentSizeBytes)
                                 ? std::string("a segment walseg 0.1 moved aside (walseg ls says whether it is this "
                                               "WAL's and how to put it back)")
                                 : std::string(to_string(info.kind));
    report.left_alone.push_back(fmt::format("{} ({})", name, what));
    log(LogLevel::kLog, fmt::format("leaving \"{}\" alone: {}", dir.path_of(name), what));
  }
};

}  // namespace

std::optional<std::string> give_back_advice(const Directory& dir, const std::string& name, const struct stat& st,
                                            const WalControl& control) {
  if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) return std::nullopt;
  try {
    // Read only, and through a link too: its target is what the name stood for.
    File f = File::open_at(dir, name, O_RDONLY | O_NONBLOCK);
    const struct stat target = f.stat();
    if (!S_ISREG(target.st_mode)) return std::nullopt;
    std::array<std::byte, kReadyStampBytes> head{};
    if (f.pread(head.data(), head.size(), 0) != head.size()) return std::nullopt;
    bool ready = false;
    if (!is_ours(head, control, &ready)) return std::nullopt;
  } catch (const Error& e) {
    // Unreadable to this user (mode 0000, another user's 0600): whether it holds this WAL is
    // unknown, so it may (break-it round 26 H1: "move it out" was advised and, followed, lost
    // acknowledged records).
    if (e.errnum() != EACCES && e.errnum() != EPERM) return std::nullopt;
    return fmt::format("walseg cannot read it ({}), so it cannot tell whether it holds this WAL: before anything "
                       "else, {}",
                       errno_text(e.errnum()), how_to_give_back(st));
  }
  if (S_ISLNK(st.st_mode))
    return std::string("put the segment file itself back under this name in place of the link (walseg never writes "
                       "through one)");
  if (not_walsegs_to_change(st)) return how_to_give_back(st);
  if (st.st_nlink != 1)
    return std::string("remove its other names (hard links, as ln or cp -al make; a backup made with cp is a file "
                       "of its own), keeping this one");
  // Its first segment-size bytes are the segment, the newest records with them: a backup is
  // older (break-it round 26 H2: restoring one lost acknowledged records).
  if (static_cast<std::uint64_t>(st.st_size) > control.segment_size_bytes)
    return fmt::format("it grew past a segment's size: copy the directory away, then cut it back to the segment "
                       "size (truncate -s {}), which keeps every record in it",
                       control.segment_size_bytes);
  return std::string("copy the directory away and keep this file until it has been looked at");
}

bool is_this_wals_segment(File& f, const WalControl& control) {
  try {
    const struct stat st = f.stat();
    if (!S_ISREG(st.st_mode) || st.st_nlink != 1) return false;
    std::array<std::byte, kReadyStampBytes> head{};
    if (f.pread(head.data(), head.size(), 0) != head.size()) return false;
    bool ready = false;
    return is_ours(head, control, &ready);
  } catch (const Error&) {
    return false;
  }
}

std::optional<std::string> temp_file_left_alone_reason(const Directory& dir, const std::string& name,
                                                       const struct stat& st, const WalControl& control,
                                                       bool control_is_new,
                                                       const std::vector<std::uint32_t>& earlier_writer_pids,
                                                       const std::vector<std::string>& listed_temps) {
  if (!S_ISREG(st.st_mode)) return "that is not a regular file";
  if (st.st_nlink != 1) return fmt::format("with {} names (hard links)", st.st_nlink);
  if (auto why = not_made_as_walseg_makes_files(st)) return why;
  // A directory whose control file this opening just made, without an earlier writer's
  // walseg.lock, was never walseg's: a temporary file there is someone else's. With one, the
  // earlier writer crashed before its control file (auto's probe comes first: break-it round
  // 17 L2 left its files for good), and the rules below decide.
  if (control_is_new && earlier_writer_pids.empty()) return std::string("in a directory walseg had not used before");
  const std::optional<TempFileName> temp = parse_temp_file_name(name);
  if (!temp) return std::string("under a name walseg does not give its temporary files");
  // What the file is first (its birth, its bytes), then whose crash left it: the plainest
  // reason is the one `walseg ls` prints.
  if (born_before_lock(dir, name))
    return fmt::format("born no later than {}: there before walseg used the directory, or copied in with it",
                       kLockFileName);
  // A copy with its times kept (cp -a, rsync -t, tar) is born after its mtime, which walseg's
  // own files never are: a copy of a directory brought a crash's leftover along, and the copy
  // is whoever made it's, not walseg's (break-it round 25 H3a: in a `cp -a` copy, the leftover
  // was copied after walseg.lock, so its birth order said nothing, and the copy's first writer
  // removed it).
  if (made_files::born_after_its_mtime(dir.fd(), name))
    return std::string("born after its last change: a copy that kept its times (cp -a, rsync -t, tar), not a file "
                       "walseg made here");
  if (!temp_content_is_walsegs(dir, name, st, control)) return std::string("holding bytes walseg never writes to one");
  if (earlier_writer_pids.empty())
    return fmt::format("(no process ID in {} says which writer left temporary files here)", kLockFileName);
  if (std::find(earlier_writer_pids.begin(), earlier_writer_pids.end(), temp->pid) == earlier_writer_pids.end())
    return fmt::format("not named for process {}, the writer{} {} names: their crashes are the only ones whose "
                       "temporary files walseg removes (a copy of the directory, or someone's file)",
                       fmt::join(earlier_writer_pids, ", "), earlier_writer_pids.size() == 1 ? "" : "s",
                       kLockFileName);
  // Named for that writer, but the writer never listed it: put there by someone, during its run
  // or before it (break-it round 35 H2, H3).
  if (!listed(listed_temps, name))
    return fmt::format("not listed in {} as a file a writer was making: a writer lists each such name before it "
                       "creates the file, so someone else put this one there",
                       kLockFileName);
  return std::nullopt;
}

bool is_walseg_bookkeeping_file(const std::string& name) {
  return name == kLockFileName || name == kAutoCacheFileName || name == kControlFileName;
}

std::string postgresql_pg_wal_hint(const Directory& dir) {
  const std::string& path = dir.path();
  const auto slash = path.find_last_of('/');
  const auto pg = postgresql_sign_at(dir.fd(), slash == std::string::npos ? path : path.substr(slash + 1));
  if (!pg) return "";
  return fmt::format(" It looks like PostgreSQL's {} ({}): walseg reads and writes only a WAL it made itself, "
                     "known by its {}; read PostgreSQL's WAL with pg_waldump",
                     pg->kind, pg->sign, kControlFileName);
}

std::string no_control_advice(const Directory& dir, const std::string& otherwise) {
  const std::string pg = postgresql_pg_wal_hint(dir);
  if (!pg.empty())
    return fmt::format("{} Only if it is a walseg WAL after all, whose {} was lost, restore that file from a "
                       "backup.",
                       pg.substr(1) + ".", kControlFileName);
  return fmt::format("If this is a walseg WAL whose {} was lost, restore that file from a backup{}.", kControlFileName,
                     otherwise.empty() ? "" : ";" + otherwise);
}

bool is_walseg_file_name(const std::string& name) {
  return parse_segment_file_name(name, kMinSegmentSizeBytes).has_value() || parse_temp_file_name(name).has_value() ||
         name == kControlTempFileName || is_walseg_bookkeeping_file(name);
}

std::optional<std::string> foreign_reason(const Directory& dir, const std::string& name,
                                          std::uint64_t size_bytes, const WalControl& control,
                                          bool* ready) {
  if (size_bytes > control.segment_size_bytes)
    return fmt::format("it is {} bytes, larger than a segment of this WAL ({} bytes)", size_bytes,
                       control.segment_size_bytes);
  if (size_bytes < kReadyStampBytes)
    return fmt::format("it is {} bytes, too short to carry a walseg page header or ready stamp", size_bytes);
  File f = File::open_at(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  return foreign_reason(f, control, ready);
}

std::optional<std::string> foreign_reason(File& f, const WalControl& control, bool* ready) {
  const struct stat st = f.stat();
  if (!S_ISREG(st.st_mode)) return not_regular(st);
  if (st.st_nlink != 1)
    return fmt::format("it has {} names (hard links), and walseg's writes into it would change the file "
                       "under the other names too",
                       st.st_nlink);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > control.segment_size_bytes)
    return fmt::format("it is {} bytes, larger than a segment of this WAL ({} bytes)", size,
                       control.segment_size_bytes);
  std::array<std::byte, kReadyStampBytes> b{};
  for (std::size_t got = 0; got < b.size();) {
    const std::size_t n = f.pread(b.data() + got, b.size() - got, got);
    if (n == 0) return got == 0 && size == 0 ? "it is empty, too short to carry a walseg page header or ready stamp"
                                             : "it is too short to carry a walseg page header or ready stamp";
    got += n;
  }
  if (is_ours(b, control, ready)) return *ready ? bytes_after_the_stamp(f, size) : std::nullopt;
  std::string why = describe_first_bytes(b, control);
  // Case C33: a partial segment (a restore cut short, pg_receivewal's .partial renamed) is
  // told apart from a whole one by its size, so say both sizes.
  if (size < control.segment_size_bytes)
    why += fmt::format("; it is {} bytes, a segment of this WAL is {} bytes", size, control.segment_size_bytes);
  return why;
}

std::optional<std::string> copy_of_a_live_segment(const Directory& dir, const SegmentName& s, const WalControl& c,
                                                  const std::function<bool(SegNo)>& still_here) {
  std::array<std::byte, kLongPageHeaderBytes> b{};
  try {
    File f = File::open_at(dir, segment_file_name(s.timeline, s.segno, c.segment_size_bytes),
                           O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (f.pread(b.data(), b.size(), 0) != b.size()) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;  // unreadable now: the writer's own checks see to it
  }
  const PageHeader h = decode_page_header(b.data());
  const SegNo holds = h.page_addr / c.segment_size_bytes;
  if (holds == s.segno || !still_here(holds)) return std::nullopt;
  // A ready stamp names its segment too (break-it round 29 H1: a copy of a preallocated
  // segment's stamp, at another name, with or without a user's bytes after it, was taken for
  // a preallocated segment and written into).
  return fmt::format("it is a copy of segment \"{}\", which is still here: it holds that segment's {}, and walseg "
                     "recycles a segment by renaming it, so this file is not one it made (nothing is lost by moving "
                     "it out)",
                     segment_file_name(s.timeline, holds, c.segment_size_bytes),
                     h.magic == kReadySegmentMagic ? "ready stamp" : "WAL");
}

bool still_unwritten_ready_segment(const Directory& dir, const std::string& name, const WalControl& control) {
  struct stat st{};
  if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
      not_walsegs_to_change(st))
    return false;
  std::array<std::byte, kReadyStampBytes> head{};
  try {
    File f = File::open_at(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (f.pread(head.data(), head.size(), 0) != head.size()) return false;
  } catch (const Error&) {
    return false;
  }
  bool ready = false;
  // A copy that kept its times (cp -a, tar) is born after its mtime, which walseg's own files
  // never are: someone's (break-it round 35 H1: a cp -a copy's segments were removed).
  return is_ours(head, control, &ready) && ready && !born_before_lock(dir, name) &&
         !made_files::born_after_its_mtime(dir.fd(), name) && temp_content_is_walsegs(dir, name, st, control);
}

void remove_leftover_temps(Directory& dir, ScanReport& report, const WalControl& control) {
  if (report.leftover_temps.empty()) return;
  for (std::size_t i = 0; i < report.leftover_temps.size(); ++i) {
    const std::string& name = report.leftover_temps[i];
    // Recovery ran between the survey and here: a file moved onto the name since is someone's.
    if (i < report.leftover_temp_ids.size()) {
      struct stat was{};
      was.st_dev = static_cast<dev_t>(report.leftover_temp_ids[i].first);
      was.st_ino = static_cast<ino_t>(report.leftover_temp_ids[i].second);
      // The content too: ext4 gives a file made right after an unlink the freed inode number,
      // so a user's file put there during recovery can carry the surveyed identity (break-it
      // round 8 F4).
      struct stat now{};
      if (!dir.names_file(name, was) || ::fstatat(dir.fd(), name.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 ||
          not_made_as_walseg_makes_files(now) ||
          (name != kControlTempFileName &&
           (born_before_lock(dir, name) || made_files::born_after_its_mtime(dir.fd(), name) ||
            !temp_content_is_walsegs(dir, name, now, control)))) {
        log(LogLevel::kLog, fmt::format("leaving \"{}\" alone: it was replaced or removed since the directory was "
                                        "scanned", dir.path_of(name)));
        continue;
      }
    }
    dir.unlink(name, true);
    report.removed_temps.push_back(name);
    log(LogLevel::kLog, fmt::format("removed leftover temporary file \"{}\"", dir.path_of(name)));
  }
  report.leftover_temps.clear();
  report.leftover_temp_ids.clear();
  dir.fsync();
}

ScanReport survey_wal_directory(const Directory& dir, const WalControl& control, bool append_mode,
                                bool control_is_new, const std::vector<std::uint32_t>& earlier_writer_pids,
                                bool lock_existed, const std::vector<std::string>& listed_temps) {
  Scanner s{dir, control, append_mode, control_is_new, earlier_writer_pids, lock_existed, listed_temps, {}};
  for (const auto& e : dir.list()) s.entry(e.name);
  s.copies_of_live_segments();
  auto by_name = [](const ScannedSegment& a, const ScannedSegment& b) { return name_less(a.name, b.name); };
  std::sort(s.report.segments.begin(), s.report.segments.end(), by_name);
  std::sort(s.report.short_segments.begin(), s.report.short_segments.end(), by_name);
  return s.report;
}

}  // namespace walseg
