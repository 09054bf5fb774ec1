#define BOOST_TEST_MODULE wal_writer_direct
#include <boost/test/unit_test.hpp>

// Tests for walseg.direct_io = on (include/walseg/wal_writer.h, src/wal/wal_write_out.cpp): the
// WAL writer opens segments with O_DIRECT and writes whole sectors, so each commit starts at
// the sector holding the previous end and rewrites that sector's earlier bytes from the ring.
// Both io methods (io_uring skipped where the kernel refuses it). Scenarios: records of every
// size class flushed one by one across a segment boundary, what a commit writes (whole
// sectors, not whole memory pages), a resume in the middle of a sector, and 1 kB pages on a
// file system that does not report its O_DIRECT unit (tmpfs).
//
// Not covered: a file system that refuses O_DIRECT (the error that names walseg.direct_io):
// tmpfs accepts O_DIRECT since Linux 6.6, and the loop file systems of fs_cases_test.sh all do.

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>

#include "wal_writer_fixture.h"

using namespace walseg;
using namespace walseg_test;

namespace {

constexpr std::size_t kSizeClasses[] = {0, 1, 7, 8, 255, 256, 257, kBlockBytes - 100, kBlockBytes,
                                        3 * kBlockBytes + 100, 60000};

bool uring_available() {
  TempDir d;
  LogCapture quiet;
  try {
    Wal::open(d.path(), writer_config(IoMethod::kIoUring));
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::vector<IoMethod> io_methods() {
  static const bool uring = uring_available();
  if (uring) return {IoMethod::kPwrite, IoMethod::kIoUring};
  BOOST_TEST_MESSAGE("io_uring is not available here: pwrite only");
  return {IoMethod::kPwrite};
}

/// O_DIRECT's offset unit for files in dir, as the kernel reports it (0 if it does not).
std::uint64_t reported_direct_unit(const std::string& dir) {
  const std::string probe = dir + "/probe";
  int fd = ::open(probe.c_str(), O_RDWR | O_CREAT, 0600);
  BOOST_REQUIRE(fd >= 0);
  struct statx st {};
  std::uint64_t unit = 0;
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &st) == 0 && (st.stx_mask & STATX_DIOALIGN) &&
      st.stx_dio_offset_align != 0)
    unit = st.stx_dio_offset_align;
  ::close(fd);
  ::unlink(probe.c_str());
  return unit;
}

/// For each io method: cfg with walseg.direct_io on, a fresh directory, body(dir, appended),
/// then the read-back of everything body appended.
template <typename Body>
void with_direct_io(Config& cfg, Body body) {
  for (IoMethod io : io_methods()) {
    BOOST_TEST_CONTEXT("io_method " << to_string(io)) {
      TempDir d;
      cfg.io_method = io;
      cfg.direct_io = true;
      Appended a;
      body(d.path(), a);
      a.check_read_back(d.path(), cfg);
    }
  }
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(wal_writer_direct, WalWriterFixture)

BOOST_AUTO_TEST_CASE(FlushAfterEveryRecord_EverySizeClassAcrossASegment_ReadBackIdentical) {
  with_direct_io(cfg, [&](const std::string& d, Appended& a) {
    auto wal = Wal::open(d, cfg);
    WalWriter& w = wal->writer();
    // Twice the size classes, then on into the second segment (1 MB segments).
    for (int round = 0; round < 2; ++round)
      for (std::size_t size : kSizeClasses) w.flush(a.add(w, size));
    while (w.insert_lsn() < 2 * kSegBytes + 100000) w.flush(a.add(w, 8192));
    BOOST_TEST(w.stats().segment_switches == 1u);  // segment 1 into 2
  });
}

BOOST_AUTO_TEST_CASE(Commit_OfAnEightKilobyteRecord_WritesWholeSectorsNotWholeMemoryPages) {
  // The point of walseg.direct_io: an 8 kB commit writes about 8.5 kB (whole 512-byte sectors
  // here) where buffered writes end on 4 kB boundaries (12 kB). A write rounded to memory
  // pages fails the upper bound whenever the sector is smaller than 4 kB; a write that does
  // not rewrite the sector holding the previous end fails the read-back (its start would be
  // unaligned and O_DIRECT would refuse it).
  const std::uint64_t reported = reported_direct_unit(dir.path());
  const std::uint64_t unit = reported != 0 ? reported : 4096;
  BOOST_TEST_MESSAGE("O_DIRECT unit here: " << unit << " bytes");
  with_direct_io(cfg, [&](const std::string& d, Appended& a) {
    auto wal = Wal::open(d, cfg);
    WalWriter& w = wal->writer();
    const Lsn start = w.insert_lsn();
    constexpr int kCommits = 40;
    for (int i = 0; i < kCommits; ++i) w.flush(a.add(w, 8192));
    const std::uint64_t fresh = w.flushed_lsn() - start;
    BOOST_TEST(w.stats().bytes_written % unit == 0u);
    BOOST_TEST(w.stats().bytes_written >= fresh);
    // At most one sector before each commit's new bytes and one after them.
    BOOST_TEST(w.stats().bytes_written <= fresh + kCommits * 2 * (unit - 1) + unit);
  });
}

BOOST_AUTO_TEST_CASE(Resume_InTheMiddleOfASector_RecordsBeforeTheResumePointSurvive) {
  // The resumed page is read back through a buffered descriptor (an O_DIRECT read of a length
  // that is not whole sectors fails), and the first commit after it rewrites the sector
  // holding the resume point from that copy: zeros there would erase the first records.
  with_direct_io(cfg, [&](const std::string& d, Appended& a) {
    {
      auto wal = Wal::open(d, cfg);
      for (int i = 0; i < 3; ++i) a.add(wal->writer(), 100);
      wal->writer().flush(a.ends.back());
    }
    for (int session = 0; session < 3; ++session) {
      auto wal = Wal::open(d, cfg);
      BOOST_TEST(wal->recovery().end_lsn == a.ends.back());
      BOOST_REQUIRE(wal->recovery().end_lsn % 512 != 0);  // really mid-sector
      for (int i = 0; i < 3; ++i) wal->writer().flush(a.add(wal->writer(), 100 + 7 * i));
    }
  });
}

BOOST_AUTO_TEST_CASE(UnreportedUnit_OneKilobytePagesOnTmpfs_AreNotRefused) {
  // tmpfs (like btrfs) does not report STATX_DIOALIGN on Linux 6.18 and takes O_DIRECT at any
  // alignment. Assuming 4096 there refused walseg.block_size = 1kB with "writes in units of
  // 4096 bytes", which the kernel never said.
  if (!std::filesystem::is_directory("/dev/shm")) {
    BOOST_TEST_MESSAGE("no /dev/shm here: skipped");
    return;
  }
  TempDir d("/dev/shm");
  if (reported_direct_unit(d.path()) != 0) {
    BOOST_TEST_MESSAGE("this kernel reports an O_DIRECT unit on /dev/shm: nothing to check");
    return;
  }
  cfg.block_size_bytes = 1024;
  cfg.direct_io = true;
  Appended a;
  {
    auto wal = Wal::open(d.path(), cfg);
    for (std::size_t size : kSizeClasses) wal->writer().flush(a.add(wal->writer(), size));
  }
  a.check_read_back(d.path(), cfg);
}

BOOST_AUTO_TEST_SUITE_END()
