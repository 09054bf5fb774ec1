// walseg.control: read, durable replace, new system identifier (include/walseg/wal_control.h).
#include "walseg/wal_control.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "walseg/dir_lock.h"
#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/file_identity.h"
#include "walseg/log.h"
#include "walseg/made_files.h"
#include "walseg/own_files.h"

namespace walseg {
namespace {

[[noreturn]] void damaged(const std::string& path, const std::string& why) {
  throw make_error(EINVAL, "read", path,
                   fmt::format("control file \"{}\" is damaged: {}. It says which WAL the "
                               "directory holds and where it starts, so walseg will not "
                               "guess: restore it from a backup of the directory",
                               path, why));
}

// Not a file at all, as walseg writes one: "damaged ... restore it from a backup" misled for a
// link or a FIFO someone put there (break-it round 21).
[[noreturn]] void not_a_file(const std::string& path, const std::string& what) {
  throw make_error(EINVAL, "read", path,
                   fmt::format("control file \"{}\" is {}, not the regular file walseg writes: walseg "
                               "will not follow, use or replace it. Put the directory's own control file "
                               "there (the file itself, not a link to it), or move this out of the directory",
                               path, what));
}

std::optional<WalControl> read_control_named(const Directory& dir, const char* name);

// A control file of this WAL's under the temporary name is what a crash leaves in two places:
// inside write_control's write (the next version: newer than walseg.control, born after it)
// or between its exchange and its unlink (the version replaced: older, born before it). An
// older one born after walseg.control is neither: a backup someone copied there (break-it
// round 27 H2: a user's `cp` of an earlier walseg.control, mode 0600 from its source, was
// removed as a leftover). One equal to walseg.control loses nothing when removed; birth times
// unknown (a filesystem without them) leave the old rule, and so does one born in the tick
// walseg.control was.
std::optional<std::string> an_older_copy(const Directory& dir, const WalControl& tmp) {
  std::optional<WalControl> cur;
  try {
    cur = read_control_named(dir, kControlFileName);
  } catch (const Error&) {
    return std::nullopt;  // damaged: the writer refuses the directory for that
  }
  if (!cur || tmp == *cur) return std::nullopt;
  // An update that only switches append mode (at an opening, before its epoch) moves nothing
  // else: the same order with the other mode is that next version (break-it round 32: a crash
  // inside a mode switch left it, and it was called a backup).
  const bool same_order = tmp.epoch == cur->epoch && tmp.durable_lsn == cur->durable_lsn &&
                          tmp.oldest_lsn == cur->oldest_lsn && tmp.timeline == cur->timeline;
  const bool newer = tmp.epoch > cur->epoch ||
                     (tmp.epoch == cur->epoch && (tmp.durable_lsn > cur->durable_lsn || tmp.oldest_lsn > cur->oldest_lsn ||
                                                  tmp.timeline > cur->timeline)) ||
                     (same_order && tmp.append_mode != cur->append_mode);
  if (newer) return std::nullopt;
  const std::int64_t tmp_born = made_files::birth_time_ns(dir.fd(), kControlTempFileName);
  const std::int64_t cur_born = made_files::birth_time_ns(dir.fd(), kControlFileName);
  // Born in the same tick of the kernel's coarse clock (a few ms) counts as before.
  if (tmp_born < 0 || cur_born < 0 || tmp_born <= cur_born) return std::nullopt;
  return fmt::format("it is an earlier copy of this WAL's control file (durable up to {}, epoch {}; {} is at {}, "
                     "epoch {}), made after {}: a backup, not what a crash leaves (the file an update replaced "
                     "was born before the one that replaced it)",
                     format_lsn(tmp.durable_lsn), tmp.epoch, kControlFileName, format_lsn(cur->durable_lsn), cur->epoch,
                     kControlFileName);
}

// Whether `prefix`, shorter than a control file and not decodable, can be what a torn write of
// walseg's left: the first bytes of one control file of this WAL. Every byte it covers of what
// stays the same from one version of this WAL's control file to the next (magic, version,
// system identifier, segment and block size: those of walseg.control, or of any WAL when
// there is none yet) and of the zero padding after the CRC must be as walseg writes it
// (break-it round 32: a 0600 text file beginning "WSCT" was removed as a leftover).
bool a_prefix_of_ours(std::span<const std::byte> prefix, const std::optional<WalControl>& cur) {
  std::array<std::byte, kControlFileBytes> want{};
  encode_control(cur.value_or(WalControl{}), want.data());
  auto same = [&](std::size_t from, std::size_t len) {
    for (std::size_t i = from; i < from + len && i < prefix.size(); ++i)
      if (prefix[i] != want[i]) return false;
    return true;
  };
  if (!same(0, kControlSysIdOffset)) return false;  // magic and version
  if (cur && !same(kControlSysIdOffset, kControlTimelineOffset - kControlSysIdOffset)) return false;
  return same(kControlCrcOffset + 4, kControlFileBytes - kControlCrcOffset - 4);
}

// Why the file under the temporary name is not a leftover of write_control, or nullopt if it
// may be: a plain file of one link, no longer than a control file, beginning with the control
// magic, or empty or all zeros (its bytes lost to a crash before its fsync, its size kept).
std::optional<std::string> not_a_control_leftover(const Directory& dir, const struct stat& st,
                                                  std::uint64_t system_id) {
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_nlink != 1) return "it has other hard links";
  // Its bytes alone are anyone's to copy: a user's 0644 copy of this WAL's control file was
  // removed (break-it round 23 H2).
  if (auto why = not_made_as_walseg_makes_files(st)) return fmt::format("it is a file {}", *why);
  // A copy that kept its times (cp -a, rsync -t, tar), as for xlogtemp files (dir_scan.cpp):
  // walseg's own files are never born after their mtime (break-it round 29 H2: a `cp -a` of
  // walseg.control to this name was removed).
  if (made_files::born_after_its_mtime(dir.fd(), kControlTempFileName))
    return std::string("it was born after its last change: a copy that kept its times (cp -a, rsync -t, tar), not a "
                       "file walseg made here");
  if (static_cast<std::uint64_t>(st.st_size) > kControlFileBytes)
    return fmt::format("it is {} bytes, larger than a control file", st.st_size);
  std::array<std::byte, kControlFileBytes> buf{};
  File f = File::open_at(dir, kControlTempFileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  std::size_t got = 0;
  while (got < buf.size()) {
    const std::size_t n = f.pread(buf.data() + got, buf.size() - got, got);
    if (n == 0) break;
    got += n;
  }
  static constexpr char kMagic[] = {'W', 'S', 'C', 'T'};  // kControlMagic in file order
  static_assert(kControlMagic == 0x54435357);
  // A power cut inside the write can leave the file shorter than the magic number: the first
  // bytes of it are still ours (crash_states.sh found a 1-byte walseg.control.tmp refused, so
  // the WAL could not be opened again).
  if (got > 0 && got < sizeof kMagic && std::memcmp(buf.data(), kMagic, got) == 0) return std::nullopt;
  if (got >= sizeof kMagic && std::memcmp(buf.data(), kMagic, sizeof kMagic) == 0) {
    // Another WAL's control file (one a user moved onto walseg.control comes out of the
    // exchange under this name) is someone's; a torn one of ours does not decode.
    std::string why;
    const auto other = decode_control(std::span(buf.data(), got), &why);
    // walseg writes a control file whole, in one write: a crash leaves it whole or a prefix of
    // it, never a whole one that does not decode (a copy edited by hand: break-it round 32).
    if (!other && got == kControlFileBytes)
      return fmt::format("it is a whole control file that does not decode ({}): edited or damaged, not what a "
                         "crash leaves (walseg writes its control file whole, and a crash keeps all of it or a "
                         "first part)",
                         why);
    if (!other) {
      std::optional<WalControl> cur;
      try {
        cur = read_control_named(dir, kControlFileName);
      } catch (const Error&) {
        // damaged: the writer refuses the directory for that
      }
      if (!a_prefix_of_ours(std::span(buf.data(), got), cur))
        return std::string("it begins like a control file, but its other bytes are not what walseg writes in this "
                           "WAL's control file (not a first part of one a crash cut short)");
    }
    if (other && system_id != 0 && other->system_id != system_id)
      return fmt::format("it is the control file of another WAL (system identifier {})", other->system_id);
    if (other && system_id != 0)
      if (auto why = an_older_copy(dir, *other)) return why;
    // No control file yet: a first write a crash cut short left one of a new WAL, nothing
    // durable in it and never opened since (epoch 0). A WAL that was used is someone's copy
    // (break-it round 18: another WAL's control file put there was removed).
    if (other && system_id == 0 &&
        (other->durable_lsn != 0 || other->epoch != 0 ||
         other->oldest_lsn != lsn_of_segment(1, 0, other->segment_size_bytes)))
      return fmt::format("it is the control file of another WAL (system identifier {}, durable up to {}, epoch {}), "
                         "not the first one of a new WAL",
                         other->system_id, format_lsn(other->durable_lsn), other->epoch);
    return std::nullopt;
  }
  if (std::all_of(buf.begin(), buf.begin() + got, [](std::byte b) { return b == std::byte{0}; }))
    return std::nullopt;
  return "it does not begin like a control file";
}

}  // namespace

void check_control_temp(const Directory& dir, std::uint64_t system_id) {
  struct stat st{};
  if (::fstatat(dir.fd(), kControlTempFileName, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return;
    throw file_error(errno, "stat", dir.path_of(kControlTempFileName));
  }
  if (auto why = not_a_control_leftover(dir, st, system_id))
    throw make_error(EEXIST, "create", dir.path_of(kControlTempFileName),
                     fmt::format("cannot replace {} in \"{}\": \"{}\" is in the way and is not a leftover of "
                                 "walseg's ({}); walseg writes the new control file under that name. Move it "
                                 "out of the directory",
                                 kControlFileName, dir.path(), dir.path_of(kControlTempFileName), *why));
}

namespace {

// The control file under `name` (walseg.control, or the temporary name after an exchange).
std::optional<WalControl> read_control_named(const Directory& dir, const char* name) {
  const std::string path = dir.path_of(name);
  File f;
  struct stat st{};
  try {
    // Opened only once known to be a regular file: a device node is not opened (open_regular.h).
    f = File::open_at_if_regular(dir, name, O_RDONLY, st);
  } catch (const Error& e) {
    if (e.errnum() == ENOENT) return std::nullopt;
    throw;
  }
  if (S_ISLNK(st.st_mode)) not_a_file(path, "a symbolic link");
  if (!f.is_open()) not_a_file(path, S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file");
  // Written whole, always: any other size is not a file walseg wrote.
  if (static_cast<std::uint64_t>(st.st_size) != kControlFileBytes)
    damaged(path, fmt::format("it is {} bytes, expected {}", st.st_size, kControlFileBytes));
  std::array<std::byte, kControlFileBytes> buf{};
  std::size_t got = 0;
  while (got < buf.size()) {
    const std::size_t n = f.pread(buf.data() + got, buf.size() - got, got);
    if (n == 0) break;
    got += n;
  }
  std::string why;
  auto c = decode_control(std::span(buf.data(), got), &why);
  if (!c) damaged(path, why);
  return c;
}

}  // namespace

std::optional<WalControl> read_control(const Directory& dir) { return read_control_named(dir, kControlFileName); }

std::optional<WalControl> read_control(const std::string& dir_path) {
  return read_control(Directory::open(dir_path));
}

namespace {

// A file of this process's own left under walseg.control.tmp by an update whose unlink failed
// (EIO): the old control file after the exchange, or the new one after a failed update. Per
// directory (by device and inode), so that the next update removes it rather than refusing it
// as a stranger's (break-it round 32 L6: "put there while walseg had the directory open").
std::mutex g_left_mu;
std::map<std::pair<std::uint64_t, std::uint64_t>, FileIdentity> g_left;

std::pair<std::uint64_t, std::uint64_t> dir_key(const Directory& dir) {
  struct stat st{};
  if (::fstat(dir.fd(), &st) != 0) return {0, 0};
  return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

// Notes the file under the temporary name as this process's own if it is the file `st` was.
void note_left_behind(const Directory& dir, const struct stat& st) {
  struct stat now{};
  if (st.st_ino == 0 || ::fstatat(dir.fd(), kControlTempFileName, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
      now.st_dev != st.st_dev || now.st_ino != st.st_ino)
    return;
  std::lock_guard lk(g_left_mu);
  g_left[dir_key(dir)] = identity_of(dir.fd(), kControlTempFileName, now);
}

bool left_behind_here(const Directory& dir) {
  struct stat now{};
  if (::fstatat(dir.fd(), kControlTempFileName, &now, AT_SYMLINK_NOFOLLOW) != 0) return false;
  std::lock_guard lk(g_left_mu);
  const auto it = g_left.find(dir_key(dir));
  return it != g_left.end() && same_identity(it->second, identity_of(dir.fd(), kControlTempFileName, now));
}

}  // namespace

struct stat write_control(Directory& dir, const WalControl& c, ControlTemp temp) {
  std::array<std::byte, kControlFileBytes> buf{};
  encode_control(c, buf.data());
  const std::string control = dir.path_of(kControlFileName);
  auto refusal = [&](const std::string& why) {
    return make_error(EEXIST, "replace", control,
                      fmt::format("could not update \"{}\": {}, so it is not the file walseg wrote and walseg will "
                                  "not replace it; move it out of the directory and put this WAL's back",
                                  control, why));
  };
  // The file replaced must still be this WAL's control file: one moved onto the name while
  // walseg ran (a user's notes, another WAL's control file) is someone's, and replacing it
  // would destroy it. A damaged one throws from read_control, changing nothing.
  auto not_this_wals = [&](const char* name) -> std::optional<std::string> {
    // A file walseg may not change, whatever it holds: another user's, or read-only (break-it
    // round 25 H1: a 0444 copy of root's control file was replaced and removed by another user's
    // writer). The segments' rule (own_files.h): a copy restored with cp stays usable.
    struct stat st{};
    if (::fstatat(dir.fd(), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      if (auto why = not_walsegs_to_change(st)) return why;
    std::optional<WalControl> cur = read_control_named(dir, name);
    if (!cur || cur->system_id == c.system_id) return std::nullopt;
    return fmt::format("it now holds the control file of another WAL (system identifier {}, this WAL's is {})",
                       cur->system_id, c.system_id);
  };
  // This WAL's control file, but not walseg's to change here: said with how to give it back.
  if (struct stat st{}; ::fstatat(dir.fd(), kControlFileName, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
    if (auto why = not_walsegs_to_change(st))
      throw make_error(EACCES, "replace", control,
                       fmt::format("could not update \"{}\": {}, and walseg will not replace it. If it is this WAL's, "
                                   "{}",
                                   control, *why, how_to_give_back(st)));
  if (auto why = not_this_wals(kControlFileName)) throw refusal(*why);
  // Only a leftover found is removed: an unlink of a name that is normally free would remove
  // whatever was moved onto it meanwhile (break-it round 7 F3). The O_EXCL below refuses one.
  if (dir.exists(kControlTempFileName)) {
    // Once the opening has dealt with a crash's leftover, a file under the name was put there
    // since, by someone else (break-it round 31 H1: a running writer's next update removed an
    // empty file, or a plain copy of walseg.control, put there during the run).
    if (temp == ControlTemp::kRefuse && left_behind_here(dir)) {
      dir.unlink(kControlTempFileName, true);
    } else if (temp == ControlTemp::kRefuse) {
      throw make_error(EEXIST, "replace", dir.path_of(kControlTempFileName),
                       fmt::format("could not update \"{}\": \"{}\", the name walseg writes its next version under, "
                                   "holds a file put there while walseg had the directory open (a crash's leftover "
                                   "there is removed when a writer opens it), so it is not walseg's and walseg will "
                                   "not remove it; move it out of the directory",
                                   control, dir.path_of(kControlTempFileName)));
    } else {
      // Without a control file yet, a leftover is of a first write that a crash cut short,
      // under the system identifier that attempt made: any control file there is walseg's.
      check_control_temp(dir, dir.exists(kControlFileName) ? c.system_id : 0);
      dir.unlink(kControlTempFileName, true);
    }
  }
  struct stat old{};  // the control file replaced: its removal after the exchange may fail
  if (::fstatat(dir.fd(), kControlFileName, &old, AT_SYMLINK_NOFOLLOW) != 0) old = {};
  // Listed in walseg.lock before it exists: only a listed name's file is a crash's leftover
  // (break-it round 35 H3: one put there during a run was removed after the writer's crash).
  DirLock::will_create(dir, kControlTempFileName);
  File f;
  try {
    f = File::open_at(dir, kControlTempFileName, O_WRONLY | O_CREAT | O_EXCL, kOwnFileMode);
  } catch (const Error&) {
    DirLock::gone(dir, kControlTempFileName);  // not made: what is there is someone's
    throw;
  }
  struct stat mine{};  // st_ino 0 until known: then the name is the one just made exclusively
  bool unlist = true;  // false while the name holds a file of walseg's (the old control file)
  try {
    mine = f.stat();
    set_own_file_mode(f);
    f.pwrite_all(buf.data(), buf.size(), 0);
    f.fsync();
    f.close();
    // The write and fsync take milliseconds, in which a file may be moved onto either name
    // (break-it round 5 F1, F2): the exchange checks both again after it and undoes itself.
    if (auto why = not_this_wals(kControlFileName)) throw refusal(*why);
    const Directory::ReplaceResult r =
        dir.replace_checked(kControlTempFileName, mine, kControlFileName, [&](const std::string& name) {
          try {
            return not_this_wals(name.c_str());
          } catch (const Error&) {  // damaged or unreadable: not a file to destroy
            return std::optional<std::string>("it now holds a file that is not a control file walseg wrote");
          }
        });
    if (r.source_replaced)
      throw make_error(EEXIST, "replace", dir.path_of(kControlTempFileName),
                       fmt::format("could not update \"{}\": \"{}\" was replaced while walseg wrote it, so it is "
                                   "not walseg's file and walseg will not rename it into place; move it out of the "
                                   "directory",
                                   control, dir.path_of(kControlTempFileName)));
    if (!r.replaced) throw refusal(r.why);
    if (!r.left_at_from) note_left_behind(dir, old);
    unlist = r.left_at_from || !dir.exists(kControlTempFileName);
    if (r.left_at_from)
      log(LogLevel::kWarning,
          fmt::format("updated \"{}\", but a file moved onto it or onto \"{}\" meanwhile is not walseg's and is now "
                      "under \"{}\"; walseg left it there: move it out of the directory (until then the control "
                      "file cannot be updated again)",
                      control, dir.path_of(kControlTempFileName), dir.path_of(kControlTempFileName)));
  } catch (...) {
    try {
      // Only walseg's own: a file moved onto the name meanwhile is someone's.
      if (mine.st_ino == 0 || dir.names_file(kControlTempFileName, mine)) dir.unlink(kControlTempFileName, true);
      DirLock::gone(dir, kControlTempFileName);
    } catch (const Error&) {
      // the next write removes it first; the original error is the one that matters
      note_left_behind(dir, mine);
    }
    throw;
  }
  dir.fsync();
  if (unlist) DirLock::gone(dir, kControlTempFileName);
  return mine;
}

std::uint64_t new_system_id() {
  struct timeval tv{};
  gettimeofday(&tv, nullptr);
  return (static_cast<std::uint64_t>(tv.tv_sec) << 32) |
         (static_cast<std::uint64_t>(tv.tv_usec) << 12) |
         (static_cast<std::uint64_t>(::getpid()) & 0xFFF);
}

std::string describe(const WalControl& c) {
  return fmt::format("system identifier {}, {}MB segments, {}kB pages, timeline {}{}, oldest needed {}, "
                     "durable up to {}, epoch {}",
                     c.system_id, c.segment_size_bytes >> 20, c.block_size_bytes >> 10, c.timeline,
                     c.append_mode ? ", append mode" : "", format_lsn(c.oldest_lsn), format_lsn(c.durable_lsn),
                     c.epoch);
}

}  // namespace walseg
