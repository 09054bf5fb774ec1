// ControlServer and control_client (control.h).
#include "control.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace lazyfs {
namespace {

sockaddr_un address_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) throw std::runtime_error("control socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

bool write_all(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    ssize_t r = ::write(fd, s.data() + done, s.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<std::size_t>(r);
  }
  return true;
}

// Reads until a newline or end of stream (a command is one short line).
std::string read_line(int fd) {
  std::string s;
  char c;
  while (s.size() < 4096) {
    ssize_t r = ::read(fd, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || c == '\n') break;
    s.push_back(c);
  }
  return s;
}

}  // namespace

ControlServer::ControlServer(std::string path, Handler handler) : path_(std::move(path)), handler_(std::move(handler)) {
  sockaddr_un a = address_of(path_);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("could not create control socket: " + std::string(strerror(errno)));
  // Only a stale socket is removed: a path that names anything else, or a socket another
  // server still answers on, is someone's (break-it round 18: --control on a user's file
  // replaced it with the socket, and the unmount removed it).
  struct stat st{};
  if (::lstat(path_.c_str(), &st) == 0) {
    std::string why;
    if (!S_ISSOCK(st.st_mode)) {
      why = "it exists and is not a socket";
    } else {
      const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const bool answered = probe >= 0 && ::connect(probe, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      const int e = errno;
      if (probe >= 0) ::close(probe);
      if (answered) why = "another walseg_lazyfs answers on it";
      else if (e != ECONNREFUSED) why = std::string("it is a socket that could not be probed: ") + strerror(e);
    }
    if (!why.empty()) {
      ::close(listen_fd_);
      throw std::runtime_error("control socket \"" + path_ + "\": " + why + "; give a path that does not exist");
    }
    ::unlink(path_.c_str());  // a socket nobody listens on: left by a server that was killed
  }
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 8) != 0) {
    int e = errno;
    ::close(listen_fd_);
    throw std::runtime_error("could not bind control socket \"" + path_ + "\": " + strerror(e));
  }
  if (::lstat(path_.c_str(), &st) == 0) socket_ino_ = st.st_ino;
  thread_ = std::thread([this] { loop(); });
}

ControlServer::~ControlServer() {
  // shutdown() wakes the accept() below with an error, which ends the loop.
  ::shutdown(listen_fd_, SHUT_RDWR);
  thread_.join();
  ::close(listen_fd_);
  struct stat st{};
  if (::lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == socket_ino_) ::unlink(path_.c_str());
}

std::unique_ptr<ControlServer> start_control(const std::string& path, ControlServer::Handler handler) {
  try {
    return std::make_unique<ControlServer>(path, std::move(handler));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "walseg_lazyfs: %s\n", e.what());
    return nullptr;
  }
}

void ControlServer::loop() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    std::string reply;
    try {
      reply = handler_(read_line(fd));
    } catch (const std::exception& e) {
      reply = std::string("error ") + e.what();
    }
    write_all(fd, reply + "\n");
    ::close(fd);
  }
}

int control_client(const std::string& path, const std::string& line) {
  sockaddr_un a = address_of(path);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::fprintf(stderr, "walseg_lazyfs: could not connect to control socket \"%s\": %s\n", path.c_str(),
                 strerror(errno));
    if (fd >= 0) ::close(fd);
    return 2;
  }
  if (!write_all(fd, line + "\n")) {
    std::fprintf(stderr, "walseg_lazyfs: could not send to \"%s\": %s\n", path.c_str(), strerror(errno));
    ::close(fd);
    return 2;
  }
  std::string reply = read_line(fd);
  ::close(fd);
  std::printf("%s\n", reply.c_str());
  return reply.rfind("ok", 0) == 0 ? 0 : 1;
}

}  // namespace lazyfs
