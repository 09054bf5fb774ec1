// The control channel of walseg_lazyfs: a unix stream socket that takes one command line per
// connection and answers with one line ("ok ..." or "error ..."), so that a test script can
// cut the power, arm a failing fsync or set the capacity while the filesystem is mounted,
// without any name inside the mount. lazyfs.cpp lists the commands.
//
// Thread-safety: the server answers on its own thread, one connection at a time; the handler
// must be safe to call from it. Lifetime: the handler must outlive the server; the destructor
// stops the thread and removes the socket file, if the path still names the socket it bound.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace lazyfs {

class ControlServer {
 public:
  using Handler = std::function<std::string(const std::string& line)>;
  /// Binds `path` and starts answering. Only a stale socket (one nobody answers on) at `path`
  /// is replaced; anything else there, or a live server's socket, is refused. Throws
  /// std::runtime_error naming the path and why when the socket cannot be made.
  ControlServer(std::string path, Handler handler);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

 private:
  void loop();
  std::string path_;
  ino_t socket_ino_ = 0;  ///< the socket this server bound: the only file it removes
  Handler handler_;
  int listen_fd_ = -1;
  std::thread thread_;
};

/// A server at `path`, or none (the reason printed on stderr) when it cannot be made: the
/// caller then unmounts instead of serving a mount nobody can control.
std::unique_ptr<ControlServer> start_control(const std::string& path, ControlServer::Handler handler);

/// Sends `line` to the server at `path`, prints the answer on stdout and returns 0 when it
/// starts with "ok", 1 otherwise (2 when the server cannot be reached).
int control_client(const std::string& path, const std::string& line);

}  // namespace lazyfs
