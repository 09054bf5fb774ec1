// Internal to src/alloc: the individual fill procedures behind allocate_file.
#pragma once

#include <cstdint>

#include "walseg/allocator.h"

namespace walseg::alloc_detail {

/// fallocate(mode) over [0, size) in chunks, keeping progress across EINTR (case C01).
/// Returns 0 or the errno that stopped it (EINTR after kMaxEintrRetries retries without
/// progress); *eintr_retries counts interrupted calls. Does not throw.
int fallocate_chunked(File& file, int mode, std::uint64_t size_bytes, std::uint64_t block_bytes,
                      std::uint64_t* eintr_retries);

/// Writes zeros over [0, size) with pwritev calls of opts.write_chunk_bytes made of
/// kZeroWriteBufferBytes iovecs, calling opts.on_progress after each. With opts.direct_io tries
/// an O_DIRECT descriptor of its own first; *used_direct tells which ran. Buffered, with
/// opts.write_behind, each chunk's writeback is started after it (File::write_behind).
void zero_write(File& file, std::uint64_t size_bytes, const AllocOptions& opts, bool* used_direct);

/// glibc's posix_fallocate emulation: one zero byte at the end of every block of
/// min(f_bsize, 4096) bytes (512 if unknown), skipping blocks whose byte is already non-zero,
/// through its own O_RDWR descriptor.
/// opts.on_progress is called every kZeroWriteBufferBytes of file covered.
void glibc_emulation(File& file, std::uint64_t size_bytes, std::uint64_t block_bytes,
                     const AllocOptions& opts);

/// One zero byte at size-1: the file has its size and holes before it.
void sparse(File& file, std::uint64_t size_bytes);

}  // namespace walseg::alloc_detail
