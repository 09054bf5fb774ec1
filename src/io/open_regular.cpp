// Opening an existing name only if it is a regular file (open_regular.h).
#include "walseg/open_regular.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace walseg {
namespace {

int open_retrying(int dirfd, const char* name, int flags) {
  int fd;
  do {
    fd = ::openat(dirfd, name, flags);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

}  // namespace

RegularOpen open_if_regular(int dirfd, const char* name, int flags, bool follow_links) {
  RegularOpen r;
  flags = (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_CLOEXEC;
  const int nofollow = follow_links ? 0 : O_NOFOLLOW;
  const int path_fd = open_retrying(dirfd, name, O_PATH | nofollow | O_CLOEXEC);
  if (path_fd < 0) {
    r.err = errno;
    return r;
  }
  if (::fstat(path_fd, &r.st) != 0) {
    r.err = errno;
    ::close(path_fd);
    return r;
  }
  if (!S_ISREG(r.st.st_mode)) {
    r.not_regular = true;
    ::close(path_fd);
    return r;
  }
  const std::string self = "/proc/self/fd/" + std::to_string(path_fd);
  int fd = open_retrying(AT_FDCWD, self.c_str(), flags);
  if (fd < 0 && errno == ENOENT) {
    // No /proc: by name, and the inode compared with the one checked.
    fd = open_retrying(dirfd, name, flags | nofollow | O_NONBLOCK);
    struct stat now{};
    if (fd >= 0 && (::fstat(fd, &now) != 0 || now.st_dev != r.st.st_dev || now.st_ino != r.st.st_ino)) {
      ::close(fd);
      fd = -1;
      errno = EAGAIN;
    }
  }
  if (fd < 0) r.err = errno;
  ::close(path_fd);
  r.fd = fd;
  if (fd >= 0 && ::fstat(fd, &r.st) != 0) {
    r.err = errno;
    ::close(fd);
    r.fd = -1;
  }
  return r;
}

}  // namespace walseg
