// DirLock (include/walseg/dir_lock.h).
#include "walseg/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/log.h"

namespace walseg {
namespace {

// The lock file is walseg's own name, and it is written (the holder's PID): never through a
// symbolic link, and never a file that has other names (a hard link to someone's file).
File open_lock_file(const Directory& dir, int flags) {
  const std::string path = dir.path_of(kLockFileName);
  File f;
  try {
    f = File::open_at(dir, kLockFileName, flags | O_NOFOLLOW | O_NONBLOCK, 0600);
  } catch (const Error& e) {
    if (e.errnum() != ELOOP) throw;
    throw make_error(ELOOP, "open", path,
                     fmt::format("could not open lock file \"{}\": it is a symbolic link, and walseg writes "
                                 "its lock file; remove the link",
                                 path));
  }
  const struct stat st = f.stat();
  if (!S_ISREG(st.st_mode) || st.st_nlink > 1)
    throw make_error(EEXIST, "open", path,
                     fmt::format("could not use lock file \"{}\": it is {}, and walseg writes its lock file; "
                                 "move it away",
                                 path, S_ISREG(st.st_mode)    ? "a file with other names (hard links)"
                                       : S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file"
                                       : S_ISDIR(st.st_mode)  ? "a directory, not a regular file"
                                                              : "not a regular file"));
  return f;
}

[[noreturn]] void throw_in_use(File& f, const Directory& dir, int err) {
  char buf[32] = {};
  std::size_t n = f.pread(buf, sizeof buf - 1, 0);
  std::string pid(buf, n);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  throw make_error(err, "lock", dir.path(),
                   fmt::format("could not lock directory \"{}\": it is in use by process {}", dir.path(),
                               pid.empty() ? std::string("(unknown)") : pid));
}

// A refused open unlinks a lock file it made (remove_if_made) while holding its flock: an
// opener that opened that file just before may lock it once it is unlinked, while a third
// locks the new file under the name. A lock counts only on the file the name still names.
bool still_named(File& f, const Directory& dir) {
  struct stat named{};
  if (::fstatat(dir.fd(), kLockFileName, &named, AT_SYMLINK_NOFOLLOW) != 0) return false;
  const struct stat held = f.stat();
  return named.st_dev == held.st_dev && named.st_ino == held.st_ino;
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
  // Whether this open makes the file, so that a refused open can take it away again.
  bool made = false;
  File f;
  for (int attempt = 0;; ++attempt) {
    f = open_or_make_lock_file(dir, &made);
    failpoint::hit("dir_lock.before_flock");  // a test's sync point: another opener's removal
    if (::flock(f.fd(), LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      if (err != EWOULDBLOCK) throw file_error(err, "lock", f.path());
      throw_in_use(f, dir, err);
    }
    if (still_named(f, dir)) break;
    if (attempt == 100)
      throw make_error(EAGAIN, "lock", dir.path(),
                       fmt::format("could not lock directory \"{}\": its lock file keeps being replaced; is "
                                   "another program removing \"{}\"?",
                                   dir.path(), dir.path_of(kLockFileName)));
  }
  std::string pid = fmt::format("{}\n", ::getpid());
  f.ftruncate(0);
  f.pwrite_all(pid.data(), pid.size(), 0);
  DirLock lock;
  lock.file_ = std::move(f);
  lock.made_ = made;
  return lock;
}

void DirLock::remove_if_made(Directory& dir) noexcept {
  if (!made_ || !file_.is_open()) return;
  try {
    dir.unlink(kLockFileName, false);
  } catch (const std::exception& e) {
    log(LogLevel::kLog, fmt::format("could not remove the lock file this open made: {}", e.what()));
  }
  file_ = File();
  made_ = false;
}

DirLock DirLock::acquire_shared(const Directory& dir) {
  // A lock on a file the name no longer names keeps no writer out (still_named): again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    DirLock lock = acquire_shared_once(dir);
    if (!lock.file_.is_open() || still_named(lock.file_, dir)) return lock;
  }
  throw make_error(EAGAIN, "lock", dir.path(),
                   fmt::format("could not lock directory \"{}\" for reading: its lock file keeps being replaced; "
                               "is another program removing \"{}\"?",
                               dir.path(), dir.path_of(kLockFileName)));
}

DirLock DirLock::acquire_shared_once(const Directory& dir) {
  File f;
  try {
    f = open_lock_file(dir, O_RDONLY);
  } catch (const Error& e) {
    // No lock file: no writer has ever opened the directory (a copy, a snapshot). Read-only
    // or not ours to open: reading needs no lock, only a writer would have to be kept out.
    if (e.errnum() != ENOENT && e.errnum() != EACCES && e.errnum() != EROFS) throw;
    if (e.errnum() != ENOENT)
      log(LogLevel::kLog, fmt::format("reading \"{}\" without its lock ({}): a writer working there meanwhile "
                                      "is not kept out",
                                      dir.path(), errno_text(e.errnum())));
    return DirLock();
  }
  if (::flock(f.fd(), LOCK_SH | LOCK_NB) != 0) {
    int err = errno;
    if (err != EWOULDBLOCK) throw file_error(err, "lock", f.path());
    throw_in_use(f, dir, err);
  }
  DirLock lock;
  lock.file_ = std::move(f);
  return lock;
}

}  // namespace walseg
