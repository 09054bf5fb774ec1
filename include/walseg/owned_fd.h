// OwnedFd: a file descriptor and the path it was opened by, closed when the owner goes away.
// The common part of File and Directory (file.h, directory.h), which add the checked syscalls.
//
// Not for: checked close (File::close reports close(2)'s error; the destructor cannot).
// Thread-safety: none of its own; moving or destroying must not race with use.
#pragma once

#include <unistd.h>

#include <string>
#include <utility>

namespace walseg {

class OwnedFd {
 public:
  OwnedFd() = default;
  OwnedFd(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
      path_ = std::move(other.path_);
    }
    return *this;
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() { reset(); }

  int fd() const noexcept { return fd_; }
  const std::string& path() const noexcept { return path_; }
  /// Gives up ownership without closing; returns the descriptor (-1 if none).
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  void reset() noexcept {  // close(2) without checking, as a destructor must
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }
  int fd_ = -1;
  std::string path_;
};

}  // namespace walseg
