// DirLock (include/walseg/dir_lock.h).
#include "walseg/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "walseg/error.h"

namespace walseg {

DirLock DirLock::acquire(Directory& dir) {
  std::string path = dir.path_of(kLockFileName);
  File f = File::open(path, O_RDWR | O_CREAT, 0600);
  if (::flock(f.fd(), LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err != EWOULDBLOCK) throw file_error(err, "lock", path);
    char buf[32] = {};
    std::size_t n = f.pread(buf, sizeof buf - 1, 0);
    std::string pid(buf, n);
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    throw make_error(err, "lock", dir.path(),
                     fmt::format("could not lock directory \"{}\": it is in use by process {}",
                                 dir.path(), pid.empty() ? std::string("(unknown)") : pid));
  }
  std::string pid = fmt::format("{}\n", ::getpid());
  f.ftruncate(0);
  f.pwrite_all(pid.data(), pid.size(), 0);
  DirLock lock;
  lock.file_ = std::move(f);
  return lock;
}

}  // namespace walseg
