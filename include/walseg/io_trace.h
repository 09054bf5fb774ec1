// A record of the io layer's syscalls, in order, for tests that assert ordering (for example
// "the directory was fsynced after the rename and before the segment was handed out", case C13)
// and for the per-call syscall counts the allocation report gives.
//
// Thread-safety: the trace is process-wide and mutex-protected; the syscall counter is per
// thread, so a caller measures only its own work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace walseg::io_trace {

struct Event {
  std::string op;    ///< failpoint/syscall name, e.g. "rename", "dir_fsync"
  std::string path;  ///< file or directory path (for rename: the new name)
  int result_errno;  ///< 0 on success
};

/// Starts recording (clearing any previous record).
void start();
/// Stops recording and returns what was recorded since start().
std::vector<Event> stop();
/// Called by io wrappers after each syscall.
void record(std::string_view op, std::string_view path, int result_errno);

/// Syscalls made by the calling thread through the io layer since it started.
std::uint64_t thread_syscalls();
/// Adds n to the calling thread's syscall count (the io wrappers call it).
void count_syscalls(std::uint64_t n = 1);

}  // namespace walseg::io_trace
