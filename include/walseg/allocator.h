// Allocation methods: bring one new, empty file to a segment's size by one init method, with
// PostgreSQL's and glibc's behaviours available side by side so they can be chosen and measured.
//
// Method           what the file looks like afterwards                 mirrors
// zero_write       size bytes of written zeros, no holes               PostgreSQL wal_init_zero=on
// posix_fallocate  size bytes, blocks reserved as unwritten extents    fallocate(2) mode 0
// glibc_emulation  size bytes, one zero byte written per block         glibc's posix_fallocate
//                                                                      fallback (NFS, ext3)
// sparse           size bytes, one block written at the end            wal_init_zero=off
// fallocate_keep_size  size 0, blocks reserved beyond EOF              RocksDB's WAL
// none             size 0                                              MariaDB's redo log (10.8)
//
// posix_fallocate calls the kernel directly (never glibc's emulation behind the caller's back)
// and falls back only when the filesystem says "not supported": EOPNOTSUPP, ENOSYS, or EINVAL
// (our arguments are validated first, so EINVAL can only mean the filesystem refused).
// ENOSPC, EIO, EBADF, EFBIG, ENOMEM and everything else are thrown, never masked (cases C02
// and C05: a fallback only on "not supported"). EINTR is retried with progress kept: the space is requested
// in chunks, a chunk interrupted is halved and retried, and after kMaxEintrRetries interruptions
// without progress the call gives up (case C01).
//
// Not for: naming, durability or publishing the file (segment_creator.h does that).
// Thread-safety: allocate_file has no shared state; the File must not be used by others while
// it runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "walseg/config.h"
#include "walseg/file.h"

namespace walseg {

/// Interruptions without progress after which a fallocate gives up with EINTR.
inline constexpr int kMaxEintrRetries = 64;
/// First chunk asked of fallocate; halved after each EINTR down to the filesystem block size.
inline constexpr std::uint64_t kFallocateChunkBytes = 64 * kMiB;
/// Size of one pwritev call of zero_write by default: 16 iovecs of 1 MiB pointing at one zero
/// buffer. The segment manager bounds its own fills below this (kBackgroundFillChunkBytes,
/// kForegroundFillChunkBytes in segment_manager.h: case C26).
inline constexpr std::uint64_t kZeroWriteBufferBytes = 1 * kMiB;
inline constexpr int kZeroWriteIovecs = 16;

struct AllocOptions {
  InitMethod method = InitMethod::kZeroWrite;  ///< must not be kAuto (resolved by the manager)
  FallbackMethod fallback = FallbackMethod::kZeroWrite;
  /// zero_write through O_DIRECT where the filesystem allows it, so the fill leaves no dirty
  /// page cache behind for a later commit's fdatasync to wait on; buffered elsewhere (tmpfs).
  bool direct_io = true;
  /// zero_write without O_DIRECT (direct_io false, or refused): after each chunk, wait for the
  /// previous chunks' writeback and start the new chunk's (File::write_behind), so at most
  /// about one chunk is dirty or in flight and the final fsync has little left to write. On
  /// ext4 this disturbs concurrent commits less than O_DIRECT, whose writes past the end of
  /// file each convert an unwritten extent and update the size in the journal: PostgreSQL
  /// with the extension's preallocator (bench/pg_walswitch) had a median commit of 0.70 ms
  /// with it against 0.74-0.77 ms with O_DIRECT (stock PostgreSQL: 0.67 ms).
  bool write_behind = false;
  /// Bytes per pwritev of zero_write (a multiple of 4096, at most 1 GiB). A background fill
  /// uses small ones so that it can be paced between them.
  std::uint64_t write_chunk_bytes = kZeroWriteBufferBytes * kZeroWriteIovecs;
  /// Called before the first and after each chunk of a writing fill with bytes done and bytes
  /// total. It may sleep (pacing) or throw to cancel the fill; allocate_file lets the
  /// exception through.
  std::function<void(std::uint64_t done_bytes, std::uint64_t total_bytes)> on_progress;
  /// Permission bits the segment file gets when PreparedSegment::prepare makes it, whatever
  /// the umask (allocate_file ignores it). 0600 (kOwnFileMode) for the tool's WAL; the
  /// extension passes PostgreSQL's pg_file_create_mode, 0640 in a cluster made by `initdb -g`
  /// (group access), as PostgreSQL's own XLogFileInit makes its segments. Anything but u+rw is
  /// refused (EINVAL): walseg must be able to write and read back its own segments.
  unsigned file_mode = 0600;
};

/// What allocate_file did, for reports and the bench.
struct AllocReport {
  InitMethod requested = InitMethod::kZeroWrite;
  InitMethod used = InitMethod::kZeroWrite;  ///< differs from requested after a fallback
  int fallback_errno = 0;                    ///< errno that caused the fallback (0: none)
  std::string fallback_reason;               ///< e.g. "fallocate: Operation not supported (ext4)"
  std::uint64_t fill_us = 0;                 ///< wall time of the fill, microseconds
  std::uint64_t syscalls = 0;                ///< syscalls made through the io layer
  std::uint64_t eintr_retries = 0;           ///< interrupted fallocate calls retried
  std::uint64_t size_bytes = 0;              ///< st_size afterwards
  std::uint64_t allocated_bytes = 0;         ///< st_blocks * 512 afterwards
  bool direct_io = false;                    ///< zero_write went through O_DIRECT
};

/// Brings `file` (newly created and empty, opened O_RDWR) to size_bytes by opts.method.
/// size_bytes: > 0 and a multiple of 4096, else Error(EINVAL) naming the value, before any
/// syscall. `file` must have been created by File::open with O_CREAT | O_EXCL
/// (File::created_exclusively) and be empty, else Error(EINVAL) before anything is written:
/// a fill, a reservation or a fallback's truncation over a file holding records would
/// destroy them (case C22). Throws walseg::Error naming the file, the method, the size and errno's text on
/// any failure that is not a permitted fallback; with fallback = error, a "not supported"
/// answer is thrown as "operation not supported by this filesystem (<fstype>)". Does not fsync.
AllocReport allocate_file(File& file, std::uint64_t size_bytes, const AllocOptions& opts);

}  // namespace walseg
