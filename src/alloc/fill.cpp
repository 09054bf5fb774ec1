// The writing fills: zero_write, glibc_emulation and sparse.
#include <fcntl.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>
#include <algorithm>

#include <fmt/format.h>

#include "fill.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"

namespace walseg::alloc_detail {
namespace {

// One zero buffer shared by every zero_write, aligned for O_DIRECT. Never written to. Without
// memory, bad_alloc (the next call tries again), never abort (break-it round 30: under ulimit
// -v the preallocator's first fill aborted the process).
const char* zero_buffer() {
  static const char* buf = [] {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, kZeroWriteBufferBytes) != 0) throw std::bad_alloc();
    std::memset(p, 0, kZeroWriteBufferBytes);
    return static_cast<const char*>(p);
  }();
  return buf;
}

void write_zeros(File& f, std::uint64_t size_bytes, const AllocOptions& opts) {
  constexpr std::uint64_t kMaxIovecs = 1024;  // IOV_MAX on Linux
  std::uint64_t chunk = std::clamp<std::uint64_t>(opts.write_chunk_bytes, 4096,
                                                  kZeroWriteBufferBytes * kMaxIovecs);
  std::uint64_t piece = std::min(chunk, kZeroWriteBufferBytes);
  std::vector<struct iovec> iov((chunk + piece - 1) / piece);
  std::uint64_t off = 0;
  if (opts.on_progress) opts.on_progress(0, size_bytes);
  while (off < size_bytes) {
    std::uint64_t want = std::min(chunk, size_bytes - off);
    int n = 0;
    for (std::uint64_t bytes = 0; bytes < want; ++n) {
      std::uint64_t l = std::min(piece, want - bytes);
      iov[n] = {const_cast<char*>(zero_buffer()), l};
      bytes += l;
    }
    try {
      f.pwritev_all(iov.data(), n, off);
    } catch (const Error& e) {
      // The chunk's own count says little when chunks are small: say how far the fill got.
      throw Error(e.errnum(), e.op(), e.path(),
                  fmt::format("{}; zero-fill wrote {} of {} bytes", e.what(), off, size_bytes), e.offset());
    }
    off += want;
    if (opts.write_behind) f.write_behind(off);
    if (off * 2 >= size_bytes && (off - want) * 2 < size_bytes) failpoint::hit("alloc.half_fill");
    if (opts.on_progress) opts.on_progress(off, size_bytes);
  }
}

}  // namespace

void zero_write(File& file, std::uint64_t size_bytes, const AllocOptions& opts, bool* used_direct) {
  *used_direct = false;
  if (opts.direct_io && size_bytes % 4096 == 0) {
    // A second descriptor: the caller's stays buffered for whatever comes after the fill.
    // tmpfs and some FUSE filesystems refuse O_DIRECT with EINVAL; then write buffered.
    File direct;
    try {
      direct = file.reopen(O_RDWR | O_DIRECT);
    } catch (const Error& e) {
      if (e.errnum() != EINVAL) throw;
    }
    if (direct.is_open()) {
      AllocOptions o = opts;
      o.write_behind = false;  // nothing is left in the page cache to write back
      write_zeros(direct, size_bytes, o);
      direct.close();
      *used_direct = true;
      return;
    }
  }
  write_zeros(file, size_bytes, opts);
}

void glibc_emulation(File& file, std::uint64_t size_bytes, std::uint64_t block_bytes,
                     const AllocOptions& opts) {
  // glibc caps the step at 4096: NFS reports a large f_bsize that would leave holes.
  std::uint64_t step = block_bytes == 0 ? 512 : std::min<std::uint64_t>(block_bytes, 4096);
  // Its own read-write descriptor, as the issue asks: the caller's may be write-only.
  File rw = file.reopen(O_RDWR);
  std::uint64_t existing = static_cast<std::uint64_t>(rw.stat().st_size);
  static const char zero = 0;
  for (std::uint64_t off = (size_bytes - 1) % step; off < size_bytes; off += step) {
    if (off < existing) {
      char c = 0;
      // A non-zero byte means the block holds data already: never overwrite it.
      if (rw.pread(&c, 1, off) == 1 && c != 0) continue;
    }
    rw.pwrite_all(&zero, 1, off);
    if (opts.on_progress && (off + 1) % kZeroWriteBufferBytes < step) opts.on_progress(off + 1, size_bytes);
  }
  rw.close();
}

void sparse(File& file, std::uint64_t size_bytes) {
  static const char zero = 0;
  file.pwrite_all(&zero, 1, size_bytes - 1);
}

}  // namespace walseg::alloc_detail
