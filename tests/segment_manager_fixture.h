// Helpers shared by the segment manager tests (segment_manager_test.cpp and its split-off
// files: _timeline_, _error_, _crash_): 1 MB segment names spelled out independently of
// segment_name.h, the outside view of the install protocol, segment markers, planted segments (the
// directory's own, with a ready stamp, or foreign ones), and a fixture with a fresh directory
// and a small-segment Config.
//
// Not for: production code. Header-only so that each test file stays one executable.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "fs_test_util.h"
#include "wal_files_test_util.h"
#include "walseg/segment_manager.h"

namespace walseg_test {

using namespace std::chrono_literals;
using walseg::InitMethod;
using walseg::SegmentManager;
using walseg::SegNo;
using walseg::TimeLineId;

constexpr std::uint64_t kSeg = std::uint64_t{1} << 20;
constexpr auto kWait = 60s;          // generous: the machine is shared
constexpr auto kSettle = 500ms;      // how long "nothing more happens" is watched

/// TTTTTTTTXXXXXXXXYYYYYYYY for 1 MB segments, written out independently of segment_name.h.
inline std::string seg_name(TimeLineId tli, SegNo segno) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X%08X%08X", tli, static_cast<unsigned>(segno / 4096),
                static_cast<unsigned>(segno % 4096));
  return buf;
}

inline std::vector<std::string> names_of(TimeLineId tli, std::initializer_list<SegNo> segnos) {
  std::vector<std::string> v;
  for (SegNo s : segnos) v.push_back(seg_name(tli, s));
  return v;
}

inline std::vector<std::string> segment_files(const std::string& dir) {
  std::vector<std::string> v;
  for (const auto& n : list_names(dir))
    if (looks_like_segment_name(n)) v.push_back(n);
  return v;
}

/// Invariant 1 as seen from outside: every segment name is a file of exactly kSeg bytes and
/// no temporary file is left.
inline void check_invariant_1(const std::string& dir, std::uint64_t size = kSeg) {
  for (const auto& n : list_names(dir)) {
    BOOST_TEST(n.rfind("xlogtemp.", 0) != 0, "temporary file left: " << n);
    if (looks_like_segment_name(n))
      BOOST_TEST(static_cast<std::uint64_t>(walseg_test::stat_path(dir + "/" + n).st_size) == size,
                 n << " has the wrong size");
  }
}

/// Where tests put a segment's marker: after the ready stamp and the first page header, which
/// are how the manager knows a file is its own, as a writer's records would be.
constexpr std::uint64_t kMarkerOffset = 4096;

/// The writer's first bytes in a segment: its number, so a recycled file can be recognised.
inline void write_marker(const std::string& path, std::uint64_t v) {
  int fd = ::open(path.c_str(), O_WRONLY);
  BOOST_REQUIRE_MESSAGE(fd >= 0, path);
  BOOST_REQUIRE(::pwrite(fd, &v, sizeof v, kMarkerOffset) == sizeof v);
  ::close(fd);
}
inline std::uint64_t read_marker(const std::string& path) {
  std::uint64_t v = 0;
  int fd = ::open(path.c_str(), O_RDONLY);
  BOOST_REQUIRE_MESSAGE(fd >= 0, path);
  BOOST_REQUIRE(::pread(fd, &v, sizeof v, kMarkerOffset) == sizeof v);
  ::close(fd);
  return v;
}

/// The control file of `dir`, made for 1 MB segments if the directory has none yet.
inline walseg::WalControl control_of(const std::string& dir) {
  if (auto c = walseg::read_control(dir)) return *c;
  walseg::WalControl c = test_control(kSeg);
  put_control(dir, c);
  return c;
}

/// A complete 1 MB segment of the directory's WAL made by the test (plain syscalls and the
/// ready stamp walseg gives its own segments) with marker v.
inline void plant_segment(const std::string& path, std::uint64_t v) {
  const std::string dir = path.substr(0, path.rfind('/'));
  const auto name = walseg::parse_segment_file_name(path.substr(path.rfind('/') + 1), kSeg);
  BOOST_REQUIRE_MESSAGE(name, path);
  put_ready_segment(path, control_of(dir), name->timeline, name->segno);
  write_marker(path, v);
}

/// A 1 MB file with a segment's name that walseg did not make: zeros but for marker v.
inline void plant_foreign(const std::string& path, std::uint64_t v) {
  put_file(path, reinterpret_cast<const std::byte*>(&v), sizeof v, kSeg);
  int fd = ::open(path.c_str(), O_WRONLY);
  BOOST_REQUIRE(fd >= 0 && ::pwrite(fd, &v, sizeof v, kMarkerOffset) == sizeof v);
  ::close(fd);
}

struct ManagerFixture : walseg_test::FreshDirFixture {
  walseg::Config cfg;
  walseg_test::LogCapture logs;  // keeps DEBUG2/LOG lines out of the test output
  ManagerFixture() {
    cfg.segment_size_bytes = kSeg;
    cfg.init_method = InitMethod::kZeroWrite;
    cfg.recycle = true;
    cfg.min_size_bytes = 4 * kSeg;
    cfg.max_size_bytes = 64 * kSeg;
    cfg.prealloc_segments = 2;
  }
  SegmentManager::Options opts(bool background) const {
    SegmentManager::Options o;
    o.config = cfg;
    o.timeline = 1;
    o.background = background;
    return o;
  }
};

}  // namespace walseg_test
