// Runs the `walseg` tool as a child process that a test can hold before exec, signal, read
// from and time, for the tool tests that need its pid or how it ends (tool_bench_scratch_test,
// tool_options_test): a paused child has its pid (and so the name an old bench would have
// chosen) known before it runs; a piped child's stdout can be closed as `| head -1` does.
//
// The child gets default dispositions (but for those the options ignore) and an empty signal
// mask, whatever the test runner had, so that SIGINT, SIGTERM and SIGPIPE reach the tool as
// they would from a shell.
//
// Not for: production code. Thread-safety: one thread per ToolProcess. Lifetime: a child still
// running when the ToolProcess is destroyed is killed (SIGKILL) and reaped.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tool_test_util.h"

namespace walseg_test {

struct ToolProcessOptions {
  bool paused = false;       ///< the child waits for resume() before it execs the tool
  bool pipe_stdout = false;  ///< stdout goes to a pipe (stdout_fd()) instead of out_path
  std::vector<int> ignore;   ///< signals set to SIG_IGN before exec (as nohup, or a shell's `&`)
};

class ToolProcess {
 public:
  using Options = ToolProcessOptions;

  /// Starts `walseg args...` with stdout into out_path (unless piped) and stderr into err_path.
  ToolProcess(const std::vector<std::string>& args, const std::string& out_path,
              const std::string& err_path, Options o = {}) {
    std::vector<std::string> argv_s = {tool_path().string()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    int go[2], out[2] = {-1, -1};
    if (::pipe2(go, O_CLOEXEC) != 0 || (o.pipe_stdout && ::pipe2(out, O_CLOEXEC) != 0))
      throw std::runtime_error("pipe failed");
    constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    const int out_fd = o.pipe_stdout ? out[1] : ::open(out_path.c_str(), kFlags, 0600);
    const int err_fd = ::open(err_path.c_str(), kFlags, 0600);
    if (out_fd < 0 || err_fd < 0) throw std::runtime_error("open of the output files failed");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      char byte;
      if (o.paused && ::read(go[0], &byte, 1) != 1) ::_exit(126);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGHUP}) ::signal(s, SIG_DFL);
      for (int s : o.ignore) ::signal(s, SIG_IGN);
      if (::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) ::_exit(126);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(go[0]);
    go_ = go[1];
    ::close(out_fd);
    ::close(err_fd);
    stdout_ = out[0];
    // An unpaused child never reads the go pipe, and its copy closes at exec: a byte written
    // after that has no reader, and SIGPIPE would kill the test itself (a flaky "killed by
    // signal 13" of tool_bench_scratch_test under ctest). Only a paused child waits for it.
    if (!o.paused) {
      ::close(go_);
      go_ = -1;
    }
    started_ = std::chrono::steady_clock::now();
  }
  ~ToolProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    close_stdout();
    if (go_ >= 0) ::close(go_);
  }
  ToolProcess(const ToolProcess&) = delete;
  ToolProcess& operator=(const ToolProcess&) = delete;

  pid_t pid() const { return pid_; }
  void resume() {
    if (go_ < 0) return;
    const char byte = 1;
    if (::write(go_, &byte, 1) != 1) throw std::runtime_error("resume failed");
    ::close(go_);
    go_ = -1;
    started_ = std::chrono::steady_clock::now();
  }
  int stdout_fd() const { return stdout_; }
  /// The first line the tool printed on its piped stdout ("" at end of file).
  std::string read_line() {
    std::string line;
    char c;
    while (::read(stdout_, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  void close_stdout() {
    if (stdout_ >= 0) ::close(stdout_);
    stdout_ = -1;
  }
  void signal(int sig) { ::kill(pid_, sig); }
  double seconds_running() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }
  /// Waits at most `timeout_s` seconds; returns the raw wait status, or -1 on timeout.
  int wait(double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int go_ = -1;
  int stdout_ = -1;
  bool reaped_ = false;
  std::chrono::steady_clock::time_point started_;
};

/// "exit N", "signal N" or "still running": what a wait status means, for messages.
inline std::string describe_status(int raw) {
  if (raw == -1) return "still running";
  if (WIFEXITED(raw)) return "exit " + std::to_string(WEXITSTATUS(raw));
  if (WIFSIGNALED(raw)) return "killed by signal " + std::to_string(WTERMSIG(raw));
  return "status " + std::to_string(raw);
}

}  // namespace walseg_test
