// DirLock (include/walseg/dir_lock.h).
#include "walseg/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <mutex>
#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/log.h"
#include "walseg/made_files.h"
#include "walseg/own_files.h"
#include "walseg/segment_name.h"
#include "walseg/wal_control.h"

namespace walseg {
namespace {

// The lock's own open of the directory: flock belongs to the open file description, so a
// descriptor shared with the caller's Directory (which it may duplicate or close) would tie
// the lock to it. Not through failpoints: it is not a file walseg creates or changes.
OwnedFd open_dir_for_lock(const Directory& dir) {
  int fd = ::openat(dir.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw dir_error(errno, "open", dir.path());
  return OwnedFd(fd, dir.path());
}

// The lock file is walseg's own name, and it is written (the holder's PID): never through a
// symbolic link, and never a file that has other names (a hard link to someone's file). An
// existing one is opened only once it is known to be a regular file (break-it round 18: a
// device node under the name was opened O_RDWR before it was refused).
File open_lock_file(const Directory& dir, int flags) {
  const std::string path = dir.path_of(kLockFileName);
  File f;
  struct stat st{};
  if ((flags & O_CREAT) != 0) {
    f = File::open_at(dir, kLockFileName, flags | O_NOFOLLOW | O_NONBLOCK, kOwnFileMode);
    set_own_file_mode(f);  // whatever the umask: the next opening judges it by its mode
    st = f.stat();
  } else {
    f = File::open_at_if_regular(dir, kLockFileName, flags, st);
    if (S_ISLNK(st.st_mode))
      throw make_error(ELOOP, "open", path,
                       fmt::format("could not open lock file \"{}\": it is a symbolic link, and walseg writes "
                                   "its lock file; remove the link",
                                   path));
  }
  if (!S_ISREG(st.st_mode) || st.st_nlink > 1)
    throw make_error(EEXIST, "open", path,
                     fmt::format("could not use lock file \"{}\": it is {}, and walseg writes its lock file; "
                                 "move it away",
                                 path, S_ISREG(st.st_mode) ? "a file with other names (hard links)"
                                       : S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file"
                                       : S_ISDIR(st.st_mode)  ? "a directory, not a regular file"
                                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device node, not a regular file"
                                                              : "not a regular file"));
  return f;
}

// What walseg writes in its lock file (dir_lock.h): a first line that says the file is
// walseg's lock, the PID lines, and a last line that says the list is whole. A longer list it
// replaced may follow, cut off by the truncate that comes after the write (a crash between
// the two leaves it there), so the file may be up to twice the longest list.
constexpr std::string_view kLockFileMagic = "walseg.lock\n";
constexpr std::string_view kLockFileEnd = "end\n";
constexpr std::string_view kTempLinePrefix = "temp ";
constexpr std::size_t kMaxTempLine = 64;  // "temp xlogtemp.<10 digits>.<20 digits>" is 45
constexpr std::size_t kMaxLockFileText =
    kLockFileMagic.size() + kMaxLockFilePids * 11 + kMaxListedTemps * (kMaxTempLine + 1) + kLockFileEnd.size();
constexpr std::size_t kMaxLockFileBytes = 2 * kMaxLockFileText;

// Written over what the file held, then cut to its length: a crash in between leaves the new
// list whole, followed by the tail of the old one, which the reader skips past the end line
// (break-it round 25 M2: truncating first left an empty lock file to a kill between the two,
// and the writers it listed were forgotten).
// Durable on return. The cut waits for the new text to be: a power cut may keep a file's new
// size and lose the bytes written before it, and the old list cut short names fewer files than
// either list (the power-loss suite found a temporary name lost so). The cut is synced too, so
// that at most one old tail ever follows a list (two, one after the other, are no tail).
void write_lock_file(File& f, const std::vector<std::uint32_t>& pids, const std::vector<std::string>& temps = {}) {
  const std::string text = lock_file_text(pids, temps);
  const auto old_size = static_cast<std::uint64_t>(f.stat().st_size);
  f.pwrite_all(text.data(), text.size(), 0);
  f.fdatasync();
  if (text.size() >= old_size) return;
  f.ftruncate(text.size());
  f.fdatasync();
}

enum class LockContent { kWalsegs, kBarePids, kOther };

bool all_digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool a_temp_name(std::string_view name) {
  return name == kControlTempFileName || parse_temp_file_name(name).has_value();
}

// As fmt writes a PID: digits without a leading zero, never 0 (break-it round 35 H5: "007"
// and "0" were taken for walseg's lines).
bool pid_line(std::string_view line, std::uint32_t* v) {
  return !line.empty() && line.size() <= 10 && line.front() != '0' && all_digits(line) &&
         std::from_chars(line.data(), line.data() + line.size(), *v).ec == std::errc();
}

bool temp_line(std::string_view line, std::string_view* name) {
  if (!line.starts_with(kTempLinePrefix) || line.size() > kMaxTempLine) return false;
  *name = line.substr(kTempLinePrefix.size());
  return a_temp_name(*name);
}

// Any part of a line walseg writes: what a cut leaves at either end of one.
bool part_of_a_line(std::string_view s) {
  return s.size() <= kMaxTempLine && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '.' || c == ' ';
         });
}

// What a write of a shorter list over a longer one leaves after its own end line when the
// truncate that follows never came (write_lock_file): the longer list's text from that offset
// on, which is the rest of a line (even none), whole PID and temp lines, and the end line, or
// only the rest of the end line. NULs a power cut left at the end are already gone.
bool a_longer_lists_tail(std::string_view tail) {
  if (kLockFileEnd.ends_with(tail)) return true;
  if (!tail.ends_with(kLockFileEnd)) return false;
  tail.remove_suffix(kLockFileEnd.size());
  const std::size_t first_nl = tail.find('\n');
  if (first_nl == std::string_view::npos || !part_of_a_line(tail.substr(0, first_nl))) return false;
  tail.remove_prefix(first_nl + 1);
  for (std::size_t lines = 1; !tail.empty(); ++lines) {
    const std::size_t nl = tail.find('\n');
    if (nl == std::string_view::npos || lines >= kMaxLockFilePids + kMaxListedTemps) return false;
    std::uint32_t v = 0;
    std::string_view name;
    if (!pid_line(tail.substr(0, nl), &v) && !temp_line(tail.substr(0, nl), &name)) return false;
    tail.remove_prefix(nl + 1);
  }
  return true;
}

// What walseg leaves in its lock file: nothing (killed between creating and writing it),
// zeros (a power cut that kept the size and lost the bytes), or its list (above). Anything
// else was written by someone else, and rewriting it would destroy their data; bare PID lines
// are told apart for the message: an older walseg wrote them, and so does many a program's
// own lock file (break-it round 25 H3: an imitation holding 4242, made 0600 under umask 077,
// was taken for walseg's, and a file named for 4242 removed as its leftover).
LockContent lock_content(File& f, std::vector<std::uint32_t>* pids = nullptr, std::string* bytes = nullptr,
                         std::vector<std::string>* temps = nullptr) {
  if (static_cast<std::uint64_t>(f.stat().st_size) > kMaxLockFileBytes) return LockContent::kOther;
  char buf[kMaxLockFileBytes + 1] = {};
  std::size_t n = 0;
  while (n < sizeof buf) {
    const std::size_t got = f.pread(buf + n, sizeof buf - n, n);
    if (got == 0) break;
    n += got;
  }
  if (n > kMaxLockFileBytes) return LockContent::kOther;
  const std::string text(buf, n);
  if (bytes != nullptr) *bytes = text;
  // Made as walseg makes it (0600, this user), whatever it holds: anyone can write digits
  // into a file (break-it round 23 H3: a user's 0644 walseg.lock holding 4242 was rewritten,
  // and a 0600 xlogtemp.4242 then removed as 4242's leftover; round 21: a user's empty one).
  if (not_made_as_walseg_makes_files(f.stat())) return LockContent::kOther;
  // What a power cut leaves of a write it cut short (the file's size kept, its bytes not, or
  // only some of them): a prefix of what walseg writes, then possibly zeros. Its whole PID
  // lines are taken (the lock file is synced before its writer makes any file, so a torn one
  // has no leftovers of its own writer's to name).
  std::string_view rest(text);
  while (!rest.empty() && rest.back() == '\0') rest.remove_suffix(1);
  if (kLockFileMagic.starts_with(rest) && rest.size() < kLockFileMagic.size()) return LockContent::kWalsegs;
  std::vector<std::uint32_t> got;
  std::vector<std::string> listed;
  if (rest.starts_with(kLockFileMagic)) {
    rest.remove_prefix(kLockFileMagic.size());
    for (;;) {
      const std::size_t nl = rest.find('\n');
      if (nl == std::string_view::npos) {
        // Torn within a line: a partial PID or end line, never anything else.
        const bool partial = (rest.size() <= 10 && all_digits(rest) && !rest.starts_with('0')) ||
                             kLockFileEnd.starts_with(rest) ||
                             (rest.size() <= kMaxTempLine &&
                              (kTempLinePrefix.starts_with(rest) ||
                               (rest.starts_with(kTempLinePrefix) && part_of_a_line(rest))));
        if (!partial) return LockContent::kOther;
        break;
      }
      const std::string_view line = rest.substr(0, nl);
      // Past the end line, only the tail of a longer list this one replaced (break-it round 35
      // H5: notes after the end line were taken for one and rewritten).
      if (line == kLockFileEnd.substr(0, kLockFileEnd.size() - 1)) {
        if (!a_longer_lists_tail(rest.substr(nl + 1))) return LockContent::kOther;
        break;
      }
      // PID lines, then the temporary names (as lock_file_text writes them).
      std::uint32_t v = 0;
      std::string_view name;
      if (listed.empty() && pid_line(line, &v)) got.push_back(v);
      else if (temp_line(line, &name)) listed.emplace_back(name);
      else return LockContent::kOther;
      rest.remove_prefix(nl + 1);
    }
    if (got.size() > kMaxLockFilePids || listed.size() > kMaxListedTemps) return LockContent::kOther;
    if (pids != nullptr) *pids = std::move(got);
    if (temps != nullptr) *temps = std::move(listed);
    return LockContent::kWalsegs;
  }
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::uint32_t v = 0;
    if (!pid_line(std::string_view(text).substr(at, end - at), &v)) return LockContent::kOther;
    at = end + 1;
  }
  return LockContent::kBarePids;
}

// Why a lock file that is not walseg's is not, and what to do: the refusal's words, and ls's.
std::string not_walsegs_reason(File& f, LockContent content, const Directory& dir) {
  const struct stat st = f.stat();
  // Another user's WAL, most likely: running as that user is the way on, not moving the lock
  // file (break-it round 31 L1: root was told to move nobody's walseg.lock out, and only then
  // to run as its owner).
  if (st.st_uid != ::geteuid())
    return fmt::format("it is owned by user ID {}, not {}, the user walseg runs as, so walseg will not overwrite it. "
                       "If the WAL in \"{}\" is that user's, run walseg as that user; if the file is no WAL's lock "
                       "file, move it out of the directory",
                       st.st_uid, ::geteuid(), dir.path());
  if (const std::optional<std::string> made = not_made_as_walseg_makes_files(st))
    return fmt::format("it is a file {}, so it is not walseg's and walseg will not overwrite it; move it out of the "
                       "directory",
                       *made);
  if (content == LockContent::kBarePids)
    return fmt::format("it holds bare process IDs, as another program's lock file does (and walseg's before its "
                       "lock format named itself), not walseg's lock format; if no program uses \"{}\" now, move "
                       "the file out of the directory and run this again",
                       dir.path());
  return "it holds something other than what walseg writes there, so it is not walseg's and walseg will not "
         "overwrite it; move it out of the directory";
}

bool holds_walseg_content(File& f, std::vector<std::uint32_t>* pids = nullptr, std::string* bytes = nullptr) {
  return lock_content(f, pids, bytes) == LockContent::kWalsegs;
}

// The holder as its lock file says (lock_file_pid), for the refusal's message.
std::string holder(const Directory& dir) {
  // Removed, not openable or not a PID (the holder is still there: it has the directory's
  // flock): what finds it (break-it round 30: "process (unknown)" said nothing to act on).
  const std::optional<std::uint32_t> pid = lock_file_pid(dir);
  return pid ? fmt::format("process {}", *pid)
             : fmt::format("a process whose PID {} does not say (`fuser -v '{}'` lists the processes that have "
                           "the directory open)",
                           kLockFileName, dir.path());
}

[[noreturn]] void throw_in_use(const Directory& dir, int err) {
  throw make_error(err, "lock", dir.path(),
                   fmt::format("could not lock directory \"{}\": it is in use by {}; wait for it to "
                               "finish or stop it, then run this again",
                               dir.path(), holder(dir)));
}

// flock(fd, op | LOCK_NB); another holder is reported with its PID.
void lock_or_throw(int fd, int op, const Directory& dir, const std::string& path) {
  if (::flock(fd, op | LOCK_NB) == 0) return;
  const int err = errno;
  if (err != EWOULDBLOCK) throw file_error(err, "lock", path);
  throw_in_use(dir, err);
}

// Made with O_EXCL when missing, so that a lock file this process made is known to be its own
// (made_files.h: walseg bench removes only files it made); opened as it is when it exists. A
// file removed between the two opens is made again.
File open_or_make_lock_file(const Directory& dir, bool* made) {
  for (int tries = 0;; ++tries) {
    try {
      File f = open_lock_file(dir, O_RDWR | O_CREAT | O_EXCL);
      *made = true;
      return f;
    } catch (const Error& e) {
      if (e.errnum() != EEXIST) throw;
    }
    try {
      *made = false;
      return open_lock_file(dir, O_RDWR);
    } catch (const Error& e) {
      if (e.errnum() != ENOENT || tries >= 8) throw;
    }
  }
}

// Whether a listed temporary name is named for `pid` (xlogtemp.<pid>[.<n>]): an earlier writer
// with none left nothing to remove, and its line would only push out one that did (break-it
// round 25 M1: five writers killed in auto's probe pushed the first one's PID out, and its
// probe files stayed for good).
bool listed_for(const std::vector<std::string>& temps, std::uint32_t pid) {
  return std::any_of(temps.begin(), temps.end(), [&](const std::string& t) {
    const std::optional<TempFileName> n = parse_temp_file_name(t);
    return n && n->pid == pid;
  });
}

// A temporary file named for this process's PID that no earlier writer of that PID can have
// left was put there by someone, before this process started (PIDs are reused). Left alone, it
// would be this writer's crash leftover to the next opening, which removes it (break-it round
// 35 H2); nothing written can tell the two apart after a crash, so the opening refuses.
void refuse_files_named_for_this_process(const Directory& dir, const std::vector<std::uint32_t>& earlier) {
  const auto me = static_cast<std::uint32_t>(::getpid());
  if (std::find(earlier.begin(), earlier.end(), me) != earlier.end()) return;
  std::vector<std::string> named;
  try {
    for (const auto& e : dir.list())
      if (const std::optional<TempFileName> t = parse_temp_file_name(e.name); t && t->pid == me) named.push_back(e.name);
  } catch (const Error&) {
    return;  // unlistable: the scan that follows says so
  }
  if (named.empty()) return;
  std::sort(named.begin(), named.end());
  throw make_error(EEXIST, "open", dir.path_of(named.front()),
                   fmt::format("could not open \"{}\" for writing: \"{}\" is named as walseg names the temporary "
                               "files of this process (PID {}), but no earlier writer with that PID used the "
                               "directory, so someone else put it there, and after a crash of this process the next "
                               "writer would take it for a leftover and remove it; move it out of the directory, or "
                               "run this again (a new process has another PID)",
                               dir.path(), dir.path_of(named.front()), me));
}

}  // namespace

// What walseg.lock lists now, as this process wrote it last; its own descriptor of the lock
// file (the DirLock's may move). Guarded by mu: will_create and gone come from any thread.
struct DirLock::Listing {
  Listing(Directory d, File f, std::vector<std::uint32_t> p, std::vector<std::string> t)
      : dir(std::move(d)), file(std::move(f)), pids(std::move(p)), temps(std::move(t)) {
    struct stat st{};
    if (::fstat(dir.fd(), &st) == 0) key = {st.st_dev, st.st_ino};
  }
  // Failpoints "lock.pwrite", "lock.ftruncate", "lock.fdatasync" (failpoint::Prefix).
  void rewrite() {
    const failpoint::Prefix apart("lock.");
    write_lock_file(file, pids, temps);
  }
  void fsync_dir() {
    const failpoint::Prefix apart("lock.");
    dir.fsync();
  }
  void drop_names_without_files() {
    std::erase_if(temps, [&](const std::string& t) {
      struct stat st{};
      return ::fstatat(dir.fd(), t.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
    });
  }

  std::mutex mu;
  Directory dir;
  File file;  ///< walseg.lock, flocked
  std::pair<std::uint64_t, std::uint64_t> key{0, 0};
  std::vector<std::uint32_t> pids;
  std::vector<std::string> temps;
  std::vector<std::string> own;  ///< the names will_create listed
};

// The DirLocks of this process, by their directory's identity, for will_create and gone.
class DirLock::Listings {
 public:
  void add(const std::shared_ptr<Listing>& l) {
    std::lock_guard g(mu_);
    by_dir_[l->key] = l;
  }
  void remove(const std::shared_ptr<Listing>& l) {
    std::lock_guard g(mu_);
    const auto it = by_dir_.find(l->key);
    if (it != by_dir_.end() && it->second.lock() == l) by_dir_.erase(it);
  }
  std::shared_ptr<Listing> find(const Directory& dir) {
    std::lock_guard g(mu_);
    if (by_dir_.empty()) return nullptr;
    struct stat st{};
    if (::fstat(dir.fd(), &st) != 0) return nullptr;
    const auto it = by_dir_.find({st.st_dev, st.st_ino});
    return it == by_dir_.end() ? nullptr : it->second.lock();
  }

 private:
  std::mutex mu_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::weak_ptr<Listing>> by_dir_;
};

DirLock::Listings& DirLock::listings() {
  static Listings all;
  return all;
}

DirLock DirLock::acquire(Directory& dir) {
  DirLock lock;
  // The directory first: a holder is found even when its walseg.lock was removed, and a
  // refused opener creates and writes nothing.
  lock.dir_fd_ = open_dir_for_lock(dir);
  lock_or_throw(lock.dir_fd_.fd(), LOCK_EX, dir, dir.path());
  File f;
  try {
    f = open_or_make_lock_file(dir, &lock.made_);
  } catch (const Error& e) {
    // Another user's lock file (round 25 L: only "Permission denied"): say whose, and what to do.
    struct stat st{};
    if ((e.errnum() != EACCES && e.errnum() != EPERM) ||
        ::fstatat(dir.fd(), kLockFileName, &st, AT_SYMLINK_NOFOLLOW) != 0)
      throw;
    // Its owner or root refused: no user to switch to, but an attribute (break-it round 38 L2:
    // `chattr +i walseg.lock` got "run walseg as the user who owns this WAL directory").
    if (st.st_uid == ::geteuid() || ::geteuid() == 0)
      throw make_error(e.errnum(), "open", dir.path_of(kLockFileName),
                       fmt::format("could not open lock file \"{}\": {} (it is owned by user ID {}, mode {:04o}, "
                                   "and walseg runs as user ID {}, so it may be immutable or append-only: `lsattr` "
                                   "shows it, `chattr -i -a` clears it)",
                                   dir.path_of(kLockFileName), errno_text(e.errnum()), st.st_uid, st.st_mode & 07777,
                                   ::geteuid()));
    throw make_error(e.errnum(), "open", dir.path_of(kLockFileName),
                     fmt::format("could not open lock file \"{}\": {} (it is owned by user ID {}, mode {:04o}, and "
                                 "walseg runs as user ID {}); run walseg as the user who owns this WAL directory",
                                 dir.path_of(kLockFileName), errno_text(e.errnum()), st.st_uid, st.st_mode & 07777,
                                 ::geteuid()));
  }
  lock_or_throw(f.fd(), LOCK_EX, dir, f.path());
  // Checked only now, with both locks held: a holder between its truncate and its write
  // would otherwise look like someone's empty file, and nothing may be truncated before.
  const LockContent content = lock_content(f, &lock.previous_pids_, &lock.previous_text_, &lock.previous_temps_);
  if (content != LockContent::kWalsegs)
    throw make_error(EEXIST, "open", f.path(),
                     fmt::format("could not use lock file \"{}\": {}", f.path(), not_walsegs_reason(f, content, dir)));
  // This process first, then the writers before it whose leftovers are still in the
  // directory (the last writer always: its crash may also have left walseg.control.tmp).
  // Only this process once those are removed (forget_earlier_writers).
  // The earlier writers' names stay listed while their files remain: the scan removes them.
  std::vector<std::string> temps;
  for (const std::string& t : lock.previous_temps_) {
    struct stat st{};
    if (::fstatat(dir.fd(), t.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) temps.push_back(t);
  }
  std::vector<std::uint32_t> pids{static_cast<std::uint32_t>(::getpid())};
  for (std::size_t i = 0; i < lock.previous_pids_.size() && pids.size() < kMaxLockFilePids; ++i) {
    const std::uint32_t p = lock.previous_pids_[i];
    if (std::find(pids.begin(), pids.end(), p) != pids.end()) continue;
    if (i == 0 || listed_for(temps, p)) pids.push_back(p);
  }
  try {
    refuse_files_named_for_this_process(dir, lock.previous_pids_);
    // Durable before this writer makes any file: the PID is what names its temporary files as
    // the leftovers of its crash, and a power cut that kept one of them but lost the PID (an
    // empty walseg.lock, or the writer before's PID) left them for good (break-it round 18 F4:
    // bench/powercut.sh found xlogtemp files that survived a writer).
    write_lock_file(f, pids, temps);
  } catch (const Error&) {
    // A lock file this opening made goes with it (break-it round 34 L2: a full disk left an
    // empty walseg.lock, and its directory, which the tool then could not take back).
    if (lock.made_) {
      try {
        if (dir.names_file(kLockFileName, f.stat())) dir.unlink(kLockFileName, true);
      } catch (const Error&) {
        // the write's error is the one to report
      }
    }
    throw;
  }
  // A lock file this opening made is durable before anything else it makes: whatever a crash
  // leaves of walseg's (walseg.control.tmp above all) then comes with walseg.lock, and a
  // directory without one was never walseg's (break-it round 17 H1; the power-loss suite
  // keeps directory operations out of order). Once per directory, at its first opening.
  if (lock.made_) dir.fsync();
  lock.listing_ = std::make_shared<Listing>(dir.duplicate(), std::move(f), std::move(pids), std::move(temps));
  listings().add(lock.listing_);
  return lock;
}

DirLock::~DirLock() {
  if (listing_) listings().remove(listing_);
}

void DirLock::will_create(const Directory& dir, const std::string& name) {
  const std::shared_ptr<Listing> l = listings().find(dir);
  if (!l) return;
  std::lock_guard g(l->mu);
  if (std::find(l->own.begin(), l->own.end(), name) == l->own.end()) l->own.push_back(name);
  if (std::find(l->temps.begin(), l->temps.end(), name) != l->temps.end()) return;
  if (l->temps.size() >= kMaxListedTemps) l->drop_names_without_files();
  if (l->temps.size() >= kMaxListedTemps)
    throw make_error(ENOSPC, "create", dir.path_of(name),
                     fmt::format("could not create \"{}\": {} lists {} temporary names already, the most it "
                                 "lists, and their files are there; `walseg ls --dir '{}'` says whose they are",
                                 dir.path_of(name), l->dir.path_of(kLockFileName), kMaxListedTemps, dir.path()));
  l->temps.push_back(name);
  try {
    l->rewrite();
  } catch (const Error&) {
    l->temps.pop_back();  // not created: listed or not, the name holds no file of this writer's
    throw;
  }
}

void DirLock::gone(const Directory& dir, const std::string& name) noexcept { unlist(dir, name, false); }

void DirLock::gone_after_dir_fsync(const Directory& dir, const std::string& name) noexcept {
  unlist(dir, name, true);
}

void DirLock::unlist(const Directory& dir, const std::string& name, bool dir_synced) noexcept {
  try {
    const std::shared_ptr<Listing> l = listings().find(dir);
    if (!l) return;
    std::lock_guard g(l->mu);
    const auto it = std::find(l->temps.begin(), l->temps.end(), name);
    if (it == l->temps.end()) return;
    // The file's removal or rename durable first: a power cut that kept the shorter list and
    // lost the rename would leave the file under a name no list gives.
    if (!dir_synced) l->fsync_dir();
    l->temps.erase(it);
    std::erase(l->own, name);
    l->rewrite();
  } catch (const std::exception& e) {
    log(LogLevel::kLog, fmt::format("could not take \"{}\" out of {}'s temporary names: {}; a crash now would "
                                    "leave a file under that name removable",
                                    name, kLockFileName, e.what()));
  }
}

void DirLock::forget_earlier_writers() {
  if ((previous_pids_.empty() && previous_temps_.empty()) || !listing_) return;
  std::lock_guard g(listing_->mu);
  // This writer's own names stay (auto's probe comes before the scan).
  std::vector<std::string> own;
  for (const std::string& t : listing_->temps)
    if (std::find(listing_->own.begin(), listing_->own.end(), t) != listing_->own.end()) own.push_back(t);
  listing_->pids = {static_cast<std::uint32_t>(::getpid())};
  listing_->temps = std::move(own);
  listing_->rewrite();
  previous_pids_.clear();
  previous_temps_.clear();
}

void DirLock::mark_clean_close() noexcept {
  if (!listing_) return;
  try {
    std::lock_guard g(listing_->mu);
    const auto me = static_cast<std::uint32_t>(::getpid());
    // The list is what says whose files a crash left (dir_scan.h removes no other): a file
    // someone named for this PID, during the run or before it (PIDs are reused), was never
    // listed by this writer and keeps nothing (break-it round 34 H1).
    listing_->drop_names_without_files();
    const std::vector<std::string>& left = listing_->temps;
    const bool left_own = std::any_of(listing_->own.begin(), listing_->own.end(), [&](const std::string& t) {
      return std::find(left.begin(), left.end(), t) != left.end();
    });
    std::vector<std::uint32_t> pids;
    if (left_own) pids.push_back(me);
    for (std::uint32_t p : previous_pids_)
      if (p != me && listed_for(left, p) && pids.size() < kMaxLockFilePids) pids.push_back(p);
    listing_->pids = std::move(pids);
    listing_->rewrite();
    previous_pids_.clear();
  } catch (const std::exception& e) {
    log(LogLevel::kLog, fmt::format("could not mark \"{}\" closed cleanly: {}; the next writer takes the temporary "
                                    "files it lists for this process's crash's leftovers",
                                    listing_->dir.path_of(kLockFileName), e.what()));
  }
}

// Under the directory's flock, which this lock still holds: no other walseg opener can have
// taken the lock file in between, so the file under the name is the one this open made.
void DirLock::remove_if_made(Directory& dir) noexcept {
  if (!listing_) return;
  std::unique_lock g(listing_->mu);
  File& file_ = listing_->file;
  if (!made_) {
    try {
      // What this opening made and could not remove (auto's probe files, whose unlink failed:
      // break-it round 34 M2 orphaned them) stays listed, with this PID, or no later writer
      // takes it for a leftover; else the lock file's bytes as they were.
      std::vector<std::string> own_left;
      for (const std::string& t : listing_->own) {
        struct stat st{};
        if (::fstatat(dir.fd(), t.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) own_left.push_back(t);
      }
      if (own_left.empty()) {
        // Through the descriptor this lock holds: the file it rewrote, whatever the name shows.
        // Synced before the cut and after it, as write_lock_file's: as durable as the PID it
        // replaces.
        if (!previous_text_.empty()) file_.pwrite_all(previous_text_.data(), previous_text_.size(), 0);
        file_.fdatasync();
        file_.ftruncate(previous_text_.size());
        file_.fdatasync();
        listing_->pids = previous_pids_;
        listing_->temps = previous_temps_;
      } else {
        listing_->pids = previous_pids_;
        listing_->pids.insert(listing_->pids.begin(), static_cast<std::uint32_t>(::getpid()));
        if (listing_->pids.size() > kMaxLockFilePids) listing_->pids.resize(kMaxLockFilePids);
        listing_->temps = previous_temps_;
        for (const std::string& t : own_left)
          if (std::find(listing_->temps.begin(), listing_->temps.end(), t) == listing_->temps.end())
            listing_->temps.push_back(t);
        listing_->rewrite();
      }
    } catch (const std::exception& e) {
      log(LogLevel::kLog, fmt::format("could not put back what \"{}\" held: {}", dir.path_of(kLockFileName), e.what()));
    }
    return;
  }
  try {
    // Only the lock file this open made: a refusal can come after a long recovery, in which
    // another file may be moved onto the name (break-it round 10 F3: it was removed).
    if (dir.names_file(kLockFileName, file_.stat())) dir.unlink(kLockFileName, true);
    else
      log(LogLevel::kLog, fmt::format("left \"{}\" as it is: it is no longer the lock file this open made",
                                      dir.path_of(kLockFileName)));
  } catch (const std::exception& e) {
    log(LogLevel::kLog, fmt::format("could not remove the lock file this open made: {}", e.what()));
  }
  file_ = File();
  made_ = false;
  listings().remove(listing_);  // will_create lists nothing more in a lock file no longer there
  g.unlock();
  listing_.reset();
}

DirLock DirLock::acquire_shared(const Directory& dir) {
  DirLock lock;
  lock.dir_fd_ = open_dir_for_lock(dir);
  lock_or_throw(lock.dir_fd_.fd(), LOCK_SH, dir, dir.path());
  File f;
  try {
    f = open_lock_file(dir, O_RDONLY);
  } catch (const Error& e) {
    // No lock file: no writer has ever opened the directory (a copy, a snapshot). Read-only
    // or not ours to open: the directory's lock already keeps writers out.
    if (e.errnum() != ENOENT && e.errnum() != EACCES && e.errnum() != EROFS) throw;
    if (e.errnum() != ENOENT)
      log(LogLevel::kLog, fmt::format("reading \"{}\" without a lock on its {} ({}): only its directory's lock "
                                      "keeps a writer out",
                                      dir.path(), kLockFileName, errno_text(e.errnum())));
    return lock;
  }
  lock_or_throw(f.fd(), LOCK_SH, dir, f.path());
  lock.file_ = std::move(f);
  return lock;
}

std::string lock_file_text(const std::vector<std::uint32_t>& pids, const std::vector<std::string>& temps) {
  std::string text(kLockFileMagic);
  for (std::uint32_t p : pids) text += fmt::format("{}\n", p);
  for (const std::string& t : temps) text += fmt::format("{}{}\n", kTempLinePrefix, t);
  text += kLockFileEnd;
  return text;
}

std::vector<std::uint32_t> lock_file_pids(const Directory& dir) {
  try {
    struct stat st{};
    File f = File::open_at_if_regular(dir, kLockFileName, O_RDONLY, st);
    std::vector<std::uint32_t> pids;
    if (f.is_open() && holds_walseg_content(f, &pids)) return pids;
  } catch (const Error&) {
    // none, or not openable: no PID to go by
  }
  return {};
}

std::vector<std::string> lock_file_temps(const Directory& dir) {
  try {
    struct stat st{};
    File f = File::open_at_if_regular(dir, kLockFileName, O_RDONLY, st);
    std::vector<std::string> temps;
    if (f.is_open() && lock_content(f, nullptr, nullptr, &temps) == LockContent::kWalsegs) return temps;
  } catch (const Error&) {
    // none, or not openable: no name listed
  }
  return {};
}

std::optional<std::string> lock_file_not_walsegs(const Directory& dir) {
  try {
    struct stat st{};
    File f = File::open_at_if_regular(dir, kLockFileName, O_RDONLY, st);
    if (!f.is_open() || !S_ISREG(st.st_mode)) return std::nullopt;
    const LockContent content = lock_content(f);
    if (content != LockContent::kWalsegs) return not_walsegs_reason(f, content, dir);
  } catch (const Error&) {
    // none, or not openable: nothing to say about its content
  }
  return std::nullopt;
}

std::optional<std::uint32_t> lock_file_pid(const Directory& dir) {
  const std::vector<std::uint32_t> pids = lock_file_pids(dir);
  if (pids.empty()) return std::nullopt;
  return pids.front();
}

}  // namespace walseg
