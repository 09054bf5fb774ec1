// allocate_file: method dispatch and the fallback rule (include/walseg/allocator.h).
#include "walseg/allocator.h"

#include <fcntl.h>
#include <linux/falloc.h>

#include <cerrno>
#include <chrono>

#include <fmt/format.h>

#include "fill.h"
#include "walseg/error.h"
#include "walseg/fs_info.h"
#include "walseg/io_trace.h"

namespace walseg {
namespace {

using alloc_detail::fallocate_chunked;

// The only answers that mean "this filesystem cannot do it": only they lead to a fallback. EINVAL counts
// because allocate_file has already rejected every invalid argument it could pass.
bool means_unsupported(int err) { return err == EOPNOTSUPP || err == ENOSYS || err == EINVAL; }

std::string fs_name_of(const File& file) {
  try {
    return fs_info(file.path()).type_name;
  } catch (const Error&) {
    return "unknown filesystem";
  }
}

std::uint64_t block_size_of(const File& file) {
  try {
    return fs_info(file.path()).block_size;
  } catch (const Error&) {
    return 4096;
  }
}

[[noreturn]] void throw_fallocate_error(const File& file, int err, InitMethod method,
                                        std::uint64_t size, const AllocReport& r) {
  std::string detail =
      err == EINTR ? fmt::format(" (gave up after {} interrupted attempts)", r.eintr_retries) : "";
  throw make_error(err, "fallocate", file.path(),
                   fmt::format("could not allocate {} bytes for file \"{}\" by {}: {}{}", size,
                               file.path(), to_string(method), errno_text(err), detail));
}

// posix_fallocate and fallocate_keep_size: the kernel call, then the fallback rule.
void allocate_by_fallocate(File& file, std::uint64_t size, const AllocOptions& opts,
                           AllocReport& r) {
  bool keep = opts.method == InitMethod::kFallocateKeepSize;
  std::uint64_t block = block_size_of(file);
  int err = fallocate_chunked(file, keep ? FALLOC_FL_KEEP_SIZE : 0, size, block, &r.eintr_retries);
  if (err == 0) return;
  if (!means_unsupported(err)) throw_fallocate_error(file, err, opts.method, size, r);
  std::string fs = fs_name_of(file);
  r.fallback_errno = err;
  r.fallback_reason = fmt::format("fallocate: {} ({})", errno_text(err), fs);
  if (opts.fallback == FallbackMethod::kError)
    throw make_error(err, "fallocate", file.path(),
                     fmt::format("could not allocate {} bytes for file \"{}\" by {}: operation "
                                 "not supported by this filesystem ({}): {}",
                                 size, file.path(), to_string(opts.method), fs, errno_text(err)));
  // Some blocks may have been reserved before the refusal; start the fallback from empty.
  file.ftruncate(0);
  if (keep) {  // reserving beyond EOF has no writing equivalent: the file grows by appends
    r.used = InitMethod::kNone;
    return;
  }
  if (opts.fallback == FallbackMethod::kGlibcEmulation) {
    r.used = InitMethod::kGlibcEmulation;
    alloc_detail::glibc_emulation(file, size, block, opts);
  } else {
    r.used = InitMethod::kZeroWrite;
    alloc_detail::zero_write(file, size, opts, &r.direct_io);
  }
}

// A full filesystem gets the facts a DBA needs next to the errno (case C05): how much space
// statvfs still sees, which filesystem it is, and for tmpfs that its size limit, not a disk,
// is what ran out (Docker's 64 MB /dev/shm).
Error with_space_facts(const Error& e, const File& file) {
  if (e.errnum() != ENOSPC && e.errnum() != EDQUOT) return e;
  std::string facts;
  try {
    FsInfo fs = fs_info(file.path());
    facts = fmt::format("; {} bytes free on {} mounted at \"{}\"", fs.free_bytes, fs.type_name, fs.mount_point);
    if (fs.memory_backed)
      facts += " (a memory-backed filesystem: its size limit, not a disk, is full)";
  } catch (const Error&) {
    return e;
  }
  return Error(e.errnum(), e.op(), e.path(), std::string(e.what()) + facts, e.offset());
}

// Every method writes, reserves or truncates over the whole range, and a fallback starts
// from empty again: run on a file holding records, any of them would destroy them (case C22:
// etcd found an interrupted re-preallocation damaging a WAL tail). So only a file this
// process has just created, exclusively, and that is still empty is ever filled.
void check_fresh_file(File& file) {
  if (!file.created_exclusively())
    throw make_error(EINVAL, "allocate", file.path(),
                     fmt::format("refusing to allocate file \"{}\": walseg fills only files it has just "
                                 "created itself (O_CREAT | O_EXCL), never one that may hold data",
                                 file.path()));
  if (const auto size = static_cast<std::uint64_t>(file.stat().st_size); size != 0)
    throw make_error(EINVAL, "allocate", file.path(),
                     fmt::format("refusing to allocate file \"{}\": it already holds {} bytes, and "
                                 "walseg never preallocates, zero-fills or truncates over data",
                                 file.path(), size));
}

void fill(File& file, std::uint64_t size_bytes, const AllocOptions& opts, AllocReport& r) {
  switch (opts.method) {
    case InitMethod::kZeroWrite:
      alloc_detail::zero_write(file, size_bytes, opts, &r.direct_io);
      break;
    case InitMethod::kPosixFallocate:
    case InitMethod::kFallocateKeepSize:
      allocate_by_fallocate(file, size_bytes, opts, r);
      break;
    case InitMethod::kGlibcEmulation:
      alloc_detail::glibc_emulation(file, size_bytes, block_size_of(file), opts);
      break;
    case InitMethod::kSparse:
      alloc_detail::sparse(file, size_bytes);
      break;
    case InitMethod::kNone:
    case InitMethod::kAuto:
      break;
  }
}

}  // namespace

AllocReport allocate_file(File& file, std::uint64_t size_bytes, const AllocOptions& opts) {
  if (size_bytes == 0 || size_bytes % 4096 != 0)
    throw make_error(EINVAL, "allocate", file.path(),
                     fmt::format("invalid size {} bytes for file \"{}\": must be a positive "
                                 "multiple of 4096",
                                 size_bytes, file.path()));
  if (opts.method == InitMethod::kAuto)
    throw make_error(EINVAL, "allocate", file.path(),
                     "init method \"auto\" must be resolved before allocating \"" + file.path() +
                         "\"");
  check_fresh_file(file);
  AllocReport r;
  r.requested = r.used = opts.method;
  std::uint64_t syscalls_before = io_trace::thread_syscalls();
  auto t0 = std::chrono::steady_clock::now();
  try {
    fill(file, size_bytes, opts, r);
  } catch (const Error& e) {
    throw with_space_facts(e, file);
  }
  r.fill_us = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                             std::chrono::steady_clock::now() - t0)
                                             .count());
  struct stat st = file.stat();
  r.size_bytes = static_cast<std::uint64_t>(st.st_size);
  r.allocated_bytes = static_cast<std::uint64_t>(st.st_blocks) * 512;
  r.syscalls = io_trace::thread_syscalls() - syscalls_before;
  return r;
}


}  // namespace walseg
