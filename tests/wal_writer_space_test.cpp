// Case C05, the append side: with a method that reserves no space (sparse, none) on a small
// tmpfs, segment creation succeeds, the manager warns at start-up that running out of space
// will show at commit time, and when a write does hit ENOSPC the flush reports it (no crash,
// no SIGBUS) while every record acknowledged before it reads back intact.
#define BOOST_TEST_MODULE wal_writer_space
#include <boost/test/unit_test.hpp>

#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "fs_test_util.h"
#include "walseg/wal.h"
#include "walseg/wal_reader.h"

using namespace walseg;

namespace {

struct SmallTmpfs {
  walseg_test::TempDir point;
  bool mounted = false;
  std::string why;
  SmallTmpfs() {
    if (::mount("tmpfs", point.path().c_str(), "tmpfs", 0, "size=3m") == 0) mounted = true;
    else why = std::strerror(errno);
  }
  ~SmallTmpfs() {
    if (mounted) ::umount2(point.path().c_str(), MNT_DETACH);
  }
};

Config space_config(InitMethod m) {
  Config c;
  c.segment_size_bytes = 1 * kMiB;
  c.init_method = m;
  c.prealloc_segments = 6;  // 6 sparse segments "fit" in 3 MiB until they are written
  c.recycle = false;
  c.wal_buffers_bytes = 256 * 1024;
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(C05_sparse_on_full_tmpfs_fails_the_commit_and_keeps_acknowledged_records) {
  for (InitMethod method : {InitMethod::kSparse, InitMethod::kNone}) {
    BOOST_TEST_CONTEXT(to_string(method)) {
      SmallTmpfs fs;
      if (!fs.mounted) {
        BOOST_WARN_MESSAGE(false, "C05 skipped: cannot mount a tmpfs (" << fs.why << "); needs root");
        return;
      }
      const std::string wal = fs.point.path() + "/wal";
      walseg_test::LogCapture logs;
      std::vector<std::byte> payload(32 * 1024, std::byte{0x3c});
      std::uint64_t acked = 0;
      int failed_errno = 0;
      std::string failed_what;
      {
        auto w = Wal::open(wal, space_config(method));
        BOOST_TEST(logs.count(LogLevel::kWarning, "reserves no space") == 1u);
        BOOST_TEST(logs.count(LogLevel::kWarning, "memory-backed") == 1u);
        // 3 MiB cannot hold 200 x 32 kB: the writer must run into ENOSPC on the way.
        for (int i = 0; i < 200; ++i) {
          try {
            w->writer().flush(w->writer().append(payload));
            ++acked;
          } catch (const Error& e) {
            failed_errno = e.errnum();
            failed_what = e.what();
            break;
          }
        }
      }
      BOOST_TEST(failed_errno == ENOSPC);
      BOOST_TEST(failed_what.find("No space left on device") != std::string::npos);
      BOOST_TEST(acked > 10u);  // well into the file system before it filled
      WalReaderOptions ro;
      ro.segment_size_bytes = 1 * kMiB;
      RecoveryResult r = find_end_of_wal(wal, ro);
      BOOST_TEST(r.records >= acked);
      BOOST_TEST(!r.corruption);
      WalReader reader = WalReader::open(wal, ro);
      WalRecord rec;
      for (std::uint64_t i = 0; i < acked; ++i) {
        BOOST_REQUIRE(reader.next(&rec));
        BOOST_TEST(rec.payload.size() == payload.size());
        BOOST_TEST(std::memcmp(rec.payload.data(), payload.data(), payload.size()) == 0);
      }
    }
  }
}
