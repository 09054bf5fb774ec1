// Durable segment installation (include/walseg/segment_install.h).
#include "walseg/segment_install.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/io_trace.h"
#include "walseg/log.h"
#include "walseg/segment_name.h"

namespace walseg {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t micros_since(Clock::time_point t0) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
}

// Invariant 2 asks for the method really used to be reported once per directory, not once per
// segment: a pool creating hundreds of segments would otherwise drown the log.
void report_fallback_once(const Directory& dir, const AllocReport& r) {
  static std::mutex mu;
  static std::set<std::string> reported;
  std::string key = dir.path() + "\n" + std::string(to_string(r.requested));
  {
    std::lock_guard lk(mu);
    if (!reported.insert(key).second) return;
  }
  log(LogLevel::kLog,
      fmt::format("init method {} is not supported in directory \"{}\" ({}); using {} instead",
                  to_string(r.requested), dir.path(), r.fallback_reason, to_string(r.used)));
}

std::string next_temp_name() {
  static std::atomic<std::uint64_t> counter{0};
  return temp_file_name(static_cast<std::uint32_t>(::getpid()), counter.fetch_add(1));
}

// Adds what the caller needs to know to a failed step's error, keeping its errno.
Error annotate(const Error& e, const std::string& final_path, std::uint64_t size,
               std::string_view method) {
  return Error(e.errnum(), e.op(), e.path(),
               fmt::format("{} (creating segment \"{}\" of {} bytes by {})", e.what(), final_path,
                           size, method),
               e.offset());
}

// Removes what a failed creation left. Its own failure is reported, not thrown: the caller is
// already throwing the error that matters, and the start-up scan removes a temp file later.
void remove_half_made(Directory& dir, const std::string& name) {
  try {
    dir.unlink(name, true);
  } catch (const Error& e) {
    log(LogLevel::kWarning, fmt::format("{}; it is removed at the next start", e.what()));
  }
}

// What stands under a name that create_segment was asked to make, for its EEXIST message.
std::string what_is_there(const Directory& dir, const std::string& name) {
  struct stat st{};
  if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return "an entry";
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (!S_ISREG(st.st_mode)) return "a special file";
  return fmt::format("a file of {} bytes", st.st_size);
}

}  // namespace

CreateReport create_segment(Directory& dir, const std::string& final_name,
                            std::uint64_t size_bytes, const AllocOptions& opts,
                            const CustomFill& custom_fill, std::span<const std::byte> stamp) {
  CreateReport report;
  report.name = final_name;
  std::string method = custom_fill ? "custom fill" : std::string(to_string(opts.method));
  // Checked before any syscall, so that EINVAL can never be mistaken for "unsupported" (C02).
  if (size_bytes == 0 || size_bytes % 4096 != 0)
    throw make_error(EINVAL, "create", dir.path_of(final_name),
                     fmt::format("invalid size {} bytes for segment \"{}\": must be a positive "
                                 "multiple of 4096",
                                 size_bytes, dir.path_of(final_name)));
  if (dir.exists(final_name))
    throw make_error(EEXIST, "create", dir.path_of(final_name),
                     fmt::format("could not create segment \"{}\": file exists ({}); nothing is "
                                 "replaced",
                                 dir.path_of(final_name), what_is_there(dir, final_name)));
  std::uint64_t syscalls_before = io_trace::thread_syscalls();
  const std::string temp = next_temp_name();
  bool renamed = false;
  auto t0 = Clock::now();
  try {
    File f = File::open(dir.path_of(temp), O_RDWR | O_CREAT | O_EXCL, 0600);
    failpoint::hit("create.after_open");
    auto t = Clock::now();
    if (custom_fill) {
      custom_fill(f, size_bytes, report.alloc);
      struct stat st = f.stat();
      report.alloc.size_bytes = static_cast<std::uint64_t>(st.st_size);
      report.alloc.allocated_bytes = static_cast<std::uint64_t>(st.st_blocks) * 512;
    } else {
      report.alloc = allocate_file(f, size_bytes, opts);
    }
    if (!stamp.empty()) f.pwrite_all(stamp.data(), stamp.size(), 0);
    report.times.fill_us = micros_since(t);
    failpoint::hit("create.after_fill");
    t = Clock::now();
    f.fsync();
    f.close();
    report.times.fsync_us = micros_since(t);
    failpoint::hit("create.after_fsync");
    t = Clock::now();
    dir.rename_noreplace(temp, final_name);
    renamed = true;
    report.times.rename_us = micros_since(t);
    failpoint::hit("create.after_rename");
    t = Clock::now();
    dir.fsync();
    report.times.dir_fsync_us = micros_since(t);
    failpoint::hit("create.after_dir_fsync");
  } catch (const Error& e) {
    // errno is already saved in e; cleanup failures must not replace the original error.
    remove_half_made(dir, renamed ? final_name : temp);
    throw annotate(e, dir.path_of(final_name), size_bytes, method);
  } catch (...) {
    // A custom fill or a progress callback may throw anything (a cancelled background fill):
    // the half-made file must go all the same.
    remove_half_made(dir, renamed ? final_name : temp);
    throw;
  }
  report.times.total_us = micros_since(t0);
  report.syscalls = io_trace::thread_syscalls() - syscalls_before;
  if (!custom_fill && report.alloc.used != report.alloc.requested)
    report_fallback_once(dir, report.alloc);
  log(LogLevel::kDebug2, fmt::format("created segment \"{}\" by {} in {} us",
                                     dir.path_of(final_name), to_string(report.alloc.used),
                                     report.times.total_us));
  return report;
}

InstallTimes recycle_segment(Directory& dir, const std::string& old_name,
                             const std::string& new_name) {
  InstallTimes times;
  auto t0 = Clock::now();
  dir.rename_noreplace(old_name, new_name);
  times.rename_us = micros_since(t0);
  auto t = Clock::now();
  dir.fsync();
  times.dir_fsync_us = micros_since(t);
  times.total_us = micros_since(t0);
  log(LogLevel::kDebug2, fmt::format("recycled segment \"{}\" as \"{}\"", dir.path_of(old_name),
                                     dir.path_of(new_name)));
  return times;
}

}  // namespace walseg
