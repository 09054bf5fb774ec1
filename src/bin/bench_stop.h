// How `walseg bench`, `walseg write` and `walseg create` are stopped by SIGINT, SIGTERM, SIGHUP or SIGPIPE
// without being killed, so that bench can remove its scratch directory first and write can
// end cleanly with its summary, and then exit 128 + the signal's number.
//
// There is no signal handler: StopSignals blocks the signals in the thread that makes it,
// before any other thread exists, so every thread started later (the library's preallocator,
// fill and commit threads) inherits the block, no syscall of theirs is interrupted (EINTR), and
// one watcher thread takes the signals with sigtimedwait(2) and records the first. The phases
// poll check_stop() in their loops and leave by exception; a commit loop polls stop_signal().
// A write to a closed stdout (`walseg bench | head -1`) then fails with EPIPE instead of
// raising SIGPIPE, and glibc's fwrite may not even report it; so the watcher also looks, every
// 100 ms, whether the reader of a piped stdout is gone (poll: POLLERR) and records SIGPIPE,
// which also stops a bench that has nothing to print for minutes. A signal whose disposition
// was SIG_IGN when bench started (SIGHUP under nohup; SIGINT in a background job of a
// non-interactive shell) is neither blocked nor waited for, so it stays ignored; with SIGPIPE
// ignored, a write to a closed stdout fails with EPIPE and the reader check above still stops
// bench (exit 141).
//
// Used by bench, write and create; the other subcommands keep the default dispositions.
// Thread-safety: stop_signal() and check_stop() from any thread; one StopSignals at a time,
// made on main's thread. Lifetime: the signals stay blocked after ~StopSignals, until the
// process exits, so that a SIGPIPE left pending by a failed write cannot kill it afterwards.
#pragma once

#include <signal.h>

#include <atomic>
#include <exception>
#include <string>
#include <thread>

namespace walseg::tool {

class StopSignals {
 public:
  /// Blocks SIGINT, SIGTERM, SIGHUP and SIGPIPE (each one not ignored at this moment) and
  /// starts the watcher thread. Throws
  /// std::system_error if the thread cannot be started.
  StopSignals();
  /// Stops and joins the watcher (within 100 ms); the signals stay blocked.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  void watch();
  sigset_t set_;  ///< the signals blocked and waited for
  std::atomic<bool> quit_{false};
  std::thread watcher_;
};

/// The first stop signal received (or recorded by request_stop), 0 if none.
int stop_signal();
/// Records a stop for `signo` unless one is recorded already (the EPIPE of stdout: SIGPIPE).
void request_stop(int signo);
/// Records SIGPIPE if stdout is a pipe or socket whose reader is gone (poll(2) only, no stdio,
/// so any thread may call it); the watcher calls it every 100 ms, bench once more at its end.
void check_stdout_reader();

/// Thrown out of a phase by check_stop() once a stop signal has arrived.
class BenchInterrupted : public std::exception {
 public:
  explicit BenchInterrupted(int signo);
  int signo() const noexcept { return signo_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  int signo_;
  std::string what_;
};

/// Throws BenchInterrupted if a stop signal has arrived.
void check_stop();

/// The stop recorded is a closed stdout (a SIGPIPE no other process sent): what is left to say
/// goes to stderr.
bool stdout_closed();
/// What stopped the run, for its last line: "stopped: its standard output was closed" for a
/// SIGPIPE of a closed stdout (no signal the user sent), "interrupted by SIGTERM" (or by a
/// SIGPIPE another process sent) otherwise.
std::string stop_reason(int signo);
/// "SIGINT", "SIGTERM", ...: the name of one of the stop signals.
std::string signal_name(int signo);

}  // namespace walseg::tool
