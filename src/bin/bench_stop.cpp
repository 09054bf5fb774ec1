// Stop signals of walseg bench (bench_stop.h).
#include "bench_stop.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <system_error>

namespace walseg::tool {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

// Written by the watcher thread (or request_stop), read by the phases: a plain atomic, since
// no signal handler ever touches it.
std::atomic<int> g_stop_signal{0};
// The SIGPIPE recorded came from another process's kill(2), not from a closed stdout (break-it
// round 27 L3: `kill -PIPE` of a writer whose stdout was /dev/null said its output was closed).
std::atomic<bool> g_pipe_sent{false};

// The stop signals whose disposition is not SIG_IGN: one ignored when bench starts (SIGHUP
// under nohup, SIGINT and SIGQUIT in a background job of a non-interactive shell) must stay
// ignored, as PostgreSQL's tools and the shells leave it. Blocking it would not do: a blocked
// signal is queued even when ignored, and sigtimedwait would take it.
sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kStopSignals) {
    struct sigaction old{};
    if (::sigaction(s, nullptr, &old) == 0 && (old.sa_flags & SA_SIGINFO) == 0 && old.sa_handler == SIG_IGN)
      continue;
    sigaddset(&set, s);
  }
  return set;
}

}  // namespace

StopSignals::StopSignals() : set_(stop_set()) {
  if (int e = ::pthread_sigmask(SIG_BLOCK, &set_, nullptr); e != 0)
    throw std::system_error(e, std::generic_category(), "could not block signals");
  watcher_ = std::thread([this] { watch(); });
}

StopSignals::~StopSignals() {
  quit_ = true;
  watcher_.join();
}

// Polls with a 100 ms timeout instead of waiting forever, so that the destructor can stop it
// without sending a signal of its own.
void StopSignals::watch() {
  const timespec step{0, 100'000'000};
  while (!quit_) {
    siginfo_t info{};
    const int sig = ::sigtimedwait(&set_, &info, &step);
    // A write's EPIPE raises SIGPIPE in the writing thread, which this one never takes (the
    // write's caller records it); one taken here was sent by someone.
    if (sig == SIGPIPE && stop_signal() == 0 && info.si_pid != ::getpid()) g_pipe_sent = true;
    if (sig > 0) request_stop(sig);
    else check_stdout_reader();
  }
}

void check_stdout_reader() {
  struct stat st{};
  if (::fstat(STDOUT_FILENO, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return;
  pollfd p{STDOUT_FILENO, POLLOUT, 0};
  if (::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0) request_stop(SIGPIPE);
}

int stop_signal() { return g_stop_signal.load(); }

void request_stop(int signo) {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, signo);  // the first signal is the one to report
}

BenchInterrupted::BenchInterrupted(int signo)
    : signo_(signo), what_("walseg bench interrupted by " + signal_name(signo)) {}

void check_stop() {
  if (int s = stop_signal(); s != 0) throw BenchInterrupted(s);
}

bool stdout_closed() { return stop_signal() == SIGPIPE && !g_pipe_sent.load(); }

std::string stop_reason(int signo) {
  if (signo == SIGPIPE && !g_pipe_sent.load()) return "stopped: its standard output was closed";
  return "interrupted by " + signal_name(signo);
}

std::string signal_name(int signo) {
  switch (signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal " + std::to_string(signo);
  }
}

}  // namespace walseg::tool
