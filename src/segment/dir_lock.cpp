// DirLock (include/walseg/dir_lock.h).
#include "walseg/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "walseg/error.h"
#include "walseg/log.h"
#include "walseg/own_files.h"

namespace walseg {
namespace {

// Longer than any PID line walseg writes ("4194304\n" at most on Linux, 20 digits for any
// 64-bit number): a larger lock file is not walseg's.
// kMaxLockFilePids lines of at most 10 digits and a newline, with room to spare.
constexpr std::size_t kMaxLockFileBytes = 64;

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

// What walseg leaves in its lock file: nothing (killed between creating and writing it), PID
// lines (dir_lock.h), or lines whose bytes a power cut lost while the size survived (zeros).
// Anything else was written by someone else, and rewriting it would destroy their data.
bool holds_walseg_content(File& f, std::vector<std::uint32_t>* pids = nullptr, std::string* bytes = nullptr) {
  if (static_cast<std::uint64_t>(f.stat().st_size) > kMaxLockFileBytes) return false;
  char buf[kMaxLockFileBytes + 1] = {};
  std::size_t n = 0;
  while (n < sizeof buf) {
    const std::size_t got = f.pread(buf + n, sizeof buf - n, n);
    if (got == 0) break;
    n += got;
  }
  if (n > kMaxLockFileBytes) return false;
  std::string text(buf, n);
  if (bytes != nullptr) *bytes = text;
  // Made as walseg makes it (0600, this user), whatever it holds: anyone can write digits
  // into a file (break-it round 23 H3: a user's 0644 walseg.lock holding 4242 was rewritten,
  // and a 0600 xlogtemp.4242 then removed as 4242's leftover; round 21: a user's empty one).
  if (not_made_as_walseg_makes_files(f.stat())) return false;
  // Empty or zeros: a writer killed (or a power cut) between creating the file and writing
  // its PID.
  if (std::all_of(text.begin(), text.end(), [](char c) { return c == '\0'; })) return true;
  if (text.back() == '\n') text.pop_back();
  std::vector<std::uint32_t> got;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line(text.data() + at, end - at);
    std::uint32_t v = 0;
    if (line.empty() || line.size() > 10 || !std::all_of(line.begin(), line.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::from_chars(line.data(), line.data() + line.size(), v).ec != std::errc())
      return false;
    got.push_back(v);
    at = end + 1;
  }
  if (got.size() > kMaxLockFilePids) return false;
  if (pids != nullptr) *pids = std::move(got);
  return true;
}

// The holder's PID as its lock file says (lock_file_pid), for the refusal's message.
std::string holder_pid(const Directory& dir) {
  // Removed, not openable or not a PID: the holder is still there (it has the directory's flock).
  const std::optional<std::uint32_t> pid = lock_file_pid(dir);
  return pid ? std::to_string(*pid) : "(unknown)";
}

[[noreturn]] void throw_in_use(const Directory& dir, int err) {
  throw make_error(err, "lock", dir.path(),
                   fmt::format("could not lock directory \"{}\": it is in use by process {}; wait for it to "
                               "finish or stop it, then run this again",
                               dir.path(), holder_pid(dir)));
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

}  // namespace

DirLock DirLock::acquire(Directory& dir) {
  DirLock lock;
  // The directory first: a holder is found even when its walseg.lock was removed, and a
  // refused opener creates and writes nothing.
  lock.dir_fd_ = open_dir_for_lock(dir);
  lock_or_throw(lock.dir_fd_.fd(), LOCK_EX, dir, dir.path());
  File f = open_or_make_lock_file(dir, &lock.made_);
  lock_or_throw(f.fd(), LOCK_EX, dir, f.path());
  // Checked only now, with both locks held: a holder between its truncate and its write
  // would otherwise look like someone's empty file, and nothing may be truncated before.
  if (!holds_walseg_content(f, &lock.previous_pids_, &lock.previous_text_)) {
    const std::optional<std::string> made = not_made_as_walseg_makes_files(f.stat());
    throw make_error(EEXIST, "open", f.path(),
                     fmt::format("could not use lock file \"{}\": {}, so it is not walseg's and walseg will not "
                                 "overwrite it; move it out of the directory",
                                 f.path(),
                                 made ? fmt::format("it is a file {}", *made)
                                      : std::string("it holds something other than the process IDs walseg writes "
                                                    "there")));
  }
  // This process first, then the writers before it, whose leftovers are still to be removed
  // (the oldest dropped when the list is full); only this process once that is done.
  std::string pid = fmt::format("{}\n", ::getpid());
  for (std::size_t i = 0; i < lock.previous_pids_.size() && i + 1 < kMaxLockFilePids; ++i)
    if (lock.previous_pids_[i] != static_cast<std::uint32_t>(::getpid())) pid += fmt::format("{}\n", lock.previous_pids_[i]);
  f.ftruncate(0);
  f.pwrite_all(pid.data(), pid.size(), 0);
  // Durable before this writer makes any file: the PID is what names its temporary files as
  // the leftovers of its crash, and a power cut that kept one of them but lost the PID (an
  // empty walseg.lock, or the writer before's PID) left them for good (break-it round 18 F4:
  // bench/powercut.sh found xlogtemp files that survived a writer).
  f.fdatasync();
  // A lock file this opening made is durable before anything else it makes: whatever a crash
  // leaves of walseg's (walseg.control.tmp above all) then comes with walseg.lock, and a
  // directory without one was never walseg's (break-it round 17 H1; the power-loss suite
  // keeps directory operations out of order). Once per directory, at its first opening.
  if (lock.made_) dir.fsync();
  lock.file_ = std::move(f);
  return lock;
}

void DirLock::forget_earlier_writers() {
  if (previous_pids_.empty() || !file_.is_open()) return;
  const std::string pid = fmt::format("{}\n", ::getpid());
  // Shorter than what it replaces: the write first, then the truncate, so that a crash
  // between the two leaves this PID first and the list still whole after it.
  file_.pwrite_all(pid.data(), pid.size(), 0);
  file_.ftruncate(pid.size());
  file_.fdatasync();
  previous_pids_.clear();
}

// Under the directory's flock, which this lock still holds: no other walseg opener can have
// taken the lock file in between, so the file under the name is the one this open made.
void DirLock::remove_if_made(Directory& dir) noexcept {
  if (!file_.is_open()) return;
  if (!made_) {
    try {
      // Through the descriptor this lock holds: the file it rewrote, whatever the name shows.
      file_.ftruncate(0);
      if (!previous_text_.empty()) file_.pwrite_all(previous_text_.data(), previous_text_.size(), 0);
      file_.fdatasync();  // as durable as the PID it replaces
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

std::optional<std::uint32_t> lock_file_pid(const Directory& dir) {
  const std::vector<std::uint32_t> pids = lock_file_pids(dir);
  if (pids.empty()) return std::nullopt;
  return pids.front();
}

}  // namespace walseg
