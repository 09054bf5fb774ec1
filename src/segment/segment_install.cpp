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

#include "walseg/dir_lock.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/io_trace.h"
#include "walseg/log.h"
#include "walseg/own_files.h"
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
    return;
  }
  DirLock::gone(dir, name);  // a final name is never listed: nothing then
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

std::uint64_t now_us() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count());
}

}  // namespace

File create_temp_file(Directory& dir, std::string* name) {
  static std::atomic<std::uint64_t> counter{0};
  for (int tries = 0;; ++tries) {
    *name = temp_file_name(static_cast<std::uint32_t>(::getpid()), counter.fetch_add(1));
    // Listed in walseg.lock before it exists: only a listed name's file is a crash's leftover.
    DirLock::will_create(dir, *name);
    try {
      File f = File::open_at(dir, *name, O_RDWR | O_CREAT | O_EXCL, kOwnFileMode);
      // Under the process's umask, 0600 may come out 0400: the next opening would take the
      // leftover of a crash (and the segment, once renamed) for someone's file.
      try {
        set_own_file_mode(f);
      } catch (...) {
        remove_half_made(dir, *name);
        throw;
      }
      return f;
    } catch (const Error& e) {
      // Not made (someone's file under the name, above all): unlisted before anything else.
      if (e.errnum() == EEXIST || !dir.exists(*name)) DirLock::gone(dir, *name);
      if (e.errnum() != EEXIST || tries >= 63) throw;
    }
  }
}

PreparedSegment PreparedSegment::prepare(Directory& dir, const std::string& final_name, std::uint64_t size_bytes,
                                         const AllocOptions& opts, const CustomFill& custom_fill,
                                         std::span<const std::byte> stamp) {
  PreparedSegment p;
  p.dir_ = &dir;
  p.final_ = final_name;
  p.size_ = size_bytes;
  p.custom_ = static_cast<bool>(custom_fill);
  p.method_ = custom_fill ? "custom fill" : std::string(to_string(opts.method));
  p.report_.name = final_name;
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
  p.syscalls_before_ = io_trace::thread_syscalls();
  p.started_us_ = now_us();
  try {
    std::string temp;
    File f = create_temp_file(dir, &temp);
    p.temp_ = temp;  // from here on the destructor removes it
    if (opts.file_mode != kOwnFileMode) {
      // PostgreSQL's mode for a group-access cluster: what its own segments get.
      if ((opts.file_mode & 0600) != 0600 || (opts.file_mode & ~07777u) != 0)
        throw make_error(EINVAL, "create", dir.path_of(temp),
                         fmt::format("invalid file mode {:04o} for segment \"{}\": walseg must read and write "
                                     "its segments (u+rw)",
                                     opts.file_mode, dir.path_of(final_name)));
      if (::fchmod(f.fd(), static_cast<mode_t>(opts.file_mode)) != 0)
        throw file_error(errno, "change permissions of", f.path());
    }
    p.temp_stat_ = f.stat();
    p.report_.file = identity_of_fd(f.fd());
    failpoint::hit("create.after_open");
    auto t = Clock::now();
    if (custom_fill) {
      custom_fill(f, size_bytes, p.report_.alloc);
      struct stat st = f.stat();
      p.report_.alloc.size_bytes = static_cast<std::uint64_t>(st.st_size);
      p.report_.alloc.allocated_bytes = static_cast<std::uint64_t>(st.st_blocks) * 512;
    } else {
      p.report_.alloc = allocate_file(f, size_bytes, opts);
    }
    if (!stamp.empty()) {
      f.pwrite_all(stamp.data(), stamp.size(), 0);
      const struct stat st = f.stat();  // what the file is now, stamp included
      p.report_.alloc.size_bytes = static_cast<std::uint64_t>(st.st_size);
      p.report_.alloc.allocated_bytes = static_cast<std::uint64_t>(st.st_blocks) * 512;
    }
    p.report_.times.fill_us = micros_since(t);
    failpoint::hit("create.after_fill");
    t = Clock::now();
    f.fsync();
    f.close();
    p.report_.times.fsync_us = micros_since(t);
    failpoint::hit("create.after_fsync");
  } catch (const Error& e) {
    // errno is already saved in e; the destructor's cleanup must not replace the error.
    throw annotate(e, dir.path_of(final_name), size_bytes, p.method_);
  }
  // Anything else (a custom fill or a progress callback cancelling a background fill) goes
  // through as it is; the destructor removes the temporary file either way.
  return p;
}

CreateReport PreparedSegment::install(DirFsyncFailure on_failure) {
  Directory& dir = *dir_;
  auto t = Clock::now();
  // The fill took a while (minutes, for a paced one, and the extension installs later still):
  // a file moved onto the temporary name meanwhile is someone's, not to be renamed into place
  // or removed (break-it round 5 F1b).
  auto not_ours = [&] {
    const std::string temp = dir.path_of(temp_);
    DirLock::gone(dir, temp_);  // what is under the name is someone's now
    temp_.clear();
    return make_error(EEXIST, "rename", temp,
                      fmt::format("could not install segment \"{}\": its temporary file \"{}\" was replaced or "
                                  "removed while walseg made it; what is under that name now is not walseg's and "
                                  "is left as it is",
                                  dir.path_of(final_), temp));
  };
  if (temp_stat_.st_ino != 0 && !dir.names_file(temp_, temp_stat_)) throw not_ours();
  try {
    dir.rename_noreplace(temp_, final_);
  } catch (const Error& e) {
    throw annotate(e, dir.path_of(final_), size_, method_);
  }
  // What is under the segment's name now is not the file walseg made: either a file moved onto
  // the temporary name between the check and the rename went in instead, or walseg's went in
  // and was removed or replaced at once. Which, no name can tell, so nothing more is renamed:
  // putting "it" back moved a user's new file away from the name they gave it (break-it round
  // 13 F4; round 7 F4 had it renamed to a third name). The writer refuses a foreign file
  // under a segment name, so it stays unused, and the error says where it is.
  failpoint::hit("create.before_install_check");
  const std::string renamed_from = temp_;
  if (temp_stat_.st_ino != 0 && !dir.names_file(final_, temp_stat_)) {
    const std::string temp = dir.path_of(temp_);
    DirLock::gone(dir, temp_);
    temp_.clear();
    throw make_error(EEXIST, "rename", dir.path_of(final_),
                     fmt::format("could not install segment \"{}\": right after walseg renamed its temporary file "
                                 "\"{}\" to that name, the name held another file or none (one moved onto the "
                                 "temporary name went in instead, or walseg's was removed or replaced at once); "
                                 "walseg leaves what is there as it is: if it is yours, move it out of the directory",
                                 dir.path_of(final_), temp));
  }
  temp_.clear();  // renamed: no longer ours to remove
  report_.times.rename_us = micros_since(t);
  const struct stat installed = temp_stat_;
  try {
    failpoint::hit("create.after_rename");
    t = Clock::now();
    dir.fsync();
    report_.times.dir_fsync_us = micros_since(t);
    failpoint::hit("create.after_dir_fsync");
  } catch (const Error& e) {
    // The name stays listed: the rename is not known durable, and a power cut that brought the
    // temporary file back would leave it under a name no list gives, for good. (Unlisting
    // would also retry the directory fsync that just failed, and log it a second time.)
    // Only the file walseg installed: one put in its place since is someone's.
    bool still_ours = installed.st_ino == 0;
    try {
      still_ours = still_ours || dir.names_file(final_, installed);
    } catch (const Error&) {
    }
    if (on_failure == DirFsyncFailure::kRemoveNewName && still_ours) remove_half_made(dir, final_);
    throw annotate(e, dir.path_of(final_), size_, method_);
  }
  DirLock::gone_after_dir_fsync(dir, renamed_from);  // the fsync above made the rename durable
  report_.times.total_us = now_us() - started_us_;
  report_.syscalls = io_trace::thread_syscalls() - syscalls_before_;
  if (!custom_ && report_.alloc.used != report_.alloc.requested) report_fallback_once(dir, report_.alloc);
  log(LogLevel::kDebug2, fmt::format("created segment \"{}\" by {} in {} us", dir.path_of(final_),
                                     to_string(report_.alloc.used), report_.times.total_us));
  return report_;
}

PreparedSegment::PreparedSegment(PreparedSegment&& o) noexcept
    : dir_(o.dir_), temp_(std::move(o.temp_)), final_(std::move(o.final_)), method_(std::move(o.method_)),
      temp_stat_(o.temp_stat_), size_(o.size_), report_(std::move(o.report_)), started_us_(o.started_us_),
      syscalls_before_(o.syscalls_before_), custom_(o.custom_) {
  o.temp_.clear();
}

PreparedSegment& PreparedSegment::operator=(PreparedSegment&& o) noexcept {
  if (this != &o) {
    drop_temp();
    dir_ = o.dir_;
    temp_ = std::move(o.temp_);
    o.temp_.clear();
    final_ = std::move(o.final_);
    method_ = std::move(o.method_);
    temp_stat_ = o.temp_stat_;
    size_ = o.size_;
    report_ = std::move(o.report_);
    started_us_ = o.started_us_;
    syscalls_before_ = o.syscalls_before_;
    custom_ = o.custom_;
  }
  return *this;
}

PreparedSegment::~PreparedSegment() { drop_temp(); }

// Removes the temporary file if it is still the one prepare() made: someone's file moved onto
// the name is never removed, nor one whose identity cannot be checked. (No identity known at
// all: the fstat right after the exclusive creation failed, and the name is the one walseg
// has just made.)
void PreparedSegment::drop_temp() noexcept {
  if (!dir_ || temp_.empty()) return;
  try {
    if (temp_stat_.st_ino != 0 && !dir_->names_file(temp_, temp_stat_)) {
      DirLock::gone(*dir_, temp_);  // someone's file is under the name now
      return;
    }
  } catch (const Error& e) {
    log(LogLevel::kLog, fmt::format("leaving \"{}\": {}", dir_->path_of(temp_), e.what()));
    return;
  }
  remove_half_made(*dir_, temp_);
  temp_.clear();
}

CreateReport create_segment(Directory& dir, const std::string& final_name,
                            std::uint64_t size_bytes, const AllocOptions& opts,
                            const CustomFill& custom_fill, std::span<const std::byte> stamp) {
  return PreparedSegment::prepare(dir, final_name, size_bytes, opts, custom_fill, stamp)
      .install(DirFsyncFailure::kRemoveNewName);
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
