// Test helpers that make files a WAL directory may hold, byte by byte, as walseg would leave
// them (a control file, segments with a ready stamp or a long page header of this WAL) or as
// someone else would (the same with another system identifier, zeros), so that ownership tests
// build their directories without the segment manager under test.
//
// Not for: production code. Header-only so that each test file stays one executable.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>
#include <string>

#include "walseg/config.h"
#include "walseg/directory.h"
#include "walseg/segment_name.h"
#include "walseg/wal_control.h"
#include "walseg/wal_format.h"

namespace walseg_test {

inline constexpr std::uint64_t kTestSystemId = 0x0123456789ABCDEFull;

/// Settings for a small WAL: segments of segment_size bytes, a horizon of 4 to 64 of them,
/// `prealloc` kept ready, and no durable-LSN thread, so that walseg.control changes only
/// where the test makes it change (a writer killed after its last flush leaves it so).
inline walseg::Config small_wal_config(std::uint64_t segment_size, int prealloc) {
  walseg::Config c;
  c.segment_size_bytes = segment_size;
  c.min_size_bytes = 4 * segment_size;
  c.max_size_bytes = 64 * segment_size;
  c.prealloc_segments = prealloc;
  c.durable_lsn_interval_ms = 0;
  return c;
}

/// A control file's values for a fresh WAL of segment_size bytes (oldest: segment 1).
inline walseg::WalControl test_control(std::uint64_t segment_size, std::uint64_t system_id = kTestSystemId,
                                       std::uint32_t block_size = 8192) {
  walseg::WalControl c;
  c.system_id = system_id;
  c.segment_size_bytes = static_cast<std::uint32_t>(segment_size);
  c.block_size_bytes = block_size;
  c.timeline = 1;
  c.oldest_lsn = segment_size;
  return c;
}

/// Writes `c` as dir's walseg.control (through the library's durable replace).
inline void put_control(const std::string& dir, const walseg::WalControl& c) {
  walseg::Directory d = walseg::Directory::open(dir);
  walseg::write_control(d, c);
}

inline walseg::PageHeader first_page_of(const walseg::WalControl& c, walseg::TimeLineId tli, walseg::SegNo segno) {
  walseg::PageHeader h;
  h.info = walseg::kPageLongHeader;
  h.timeline = tli;
  h.page_addr = segno * c.segment_size_bytes;
  h.system_id = c.system_id;
  h.segment_size_bytes = c.segment_size_bytes;
  h.block_size_bytes = c.block_size_bytes;
  return h;
}

/// Creates `path` (exclusively) of `size` bytes whose first bytes are `head`, holes after.
inline void put_file(const std::string& path, const std::byte* head, std::size_t n, std::uint64_t size) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  BOOST_REQUIRE_MESSAGE(fd >= 0, path);
  if (n > 0) BOOST_REQUIRE(::pwrite(fd, head, n, 0) == static_cast<ssize_t>(n));
  BOOST_REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
  ::close(fd);
}

/// A segment walseg preallocated for the WAL of `c` and never wrote (a ready stamp).
inline void put_ready_segment(const std::string& path, const walseg::WalControl& c, walseg::TimeLineId tli,
                              walseg::SegNo segno, std::uint64_t size = 0) {
  std::array<std::byte, walseg::kReadyStampBytes> b{};
  walseg::encode_ready_stamp(first_page_of(c, tli, segno), b.data());
  put_file(path, b.data(), b.size(), size ? size : c.segment_size_bytes);
}

/// A segment holding WAL of `c` (a long page header for page_segno: segno itself, or an
/// earlier one for a recycled file).
inline void put_wal_segment(const std::string& path, const walseg::WalControl& c, walseg::TimeLineId tli,
                            walseg::SegNo page_segno, std::uint64_t size = 0) {
  std::array<std::byte, walseg::kLongPageHeaderBytes> b{};
  walseg::encode_page_header(first_page_of(c, tli, page_segno), b.data());
  put_file(path, b.data(), b.size(), size ? size : c.segment_size_bytes);
}

}  // namespace walseg_test
