// Unit tests of include/walseg/free_space.h: the free-space refusal before a measurement
// (walseg_bench() in the PostgreSQL extension) and what the bench holds at once.
#define BOOST_TEST_MODULE free_space
#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <cstdint>
#include <string>

#include "walseg/error.h"
#include "walseg/free_space.h"

namespace {
constexpr std::uint64_t kMiB = 1024 * 1024;
}

BOOST_AUTO_TEST_CASE(TheBenchHoldsOneSegmentPerMethodAtOnce) {
  BOOST_TEST(walseg::bench_peak_bytes(6, 16 * kMiB) == 96 * kMiB);
  BOOST_TEST(walseg::bench_peak_bytes(0, 16 * kMiB) == 16 * kMiB);  // the create phase's one
}

BOOST_AUTO_TEST_CASE(EnoughForTheFilesAndTheMarginPasses) {
  walseg::require_free_space("walseg_bench", "pg_wal", 1120 * kMiB, 96 * kMiB, 1024 * kMiB, "WAL");
}

// ---- refusals ----

BOOST_AUTO_TEST_CASE(TooLittleIsRefusedWithWhatItNeedsAndWhatIsFree) {
  try {
    walseg::require_free_space("walseg_bench", "pg_wal", 1000 * kMiB + 5, 96 * kMiB, 1024 * kMiB,
                               "PostgreSQL's WAL (max_wal_size)");
    BOOST_FAIL("not refused");
  } catch (const walseg::Error& e) {
    BOOST_TEST(e.errnum() == ENOSPC);
    BOOST_TEST(std::string(e.what()) ==
               "not enough free space in \"pg_wal\": walseg_bench needs 1120 MB (96 MB for its files at once and "
               "1024 MB left for PostgreSQL's WAL (max_wal_size)), but only 1000 MB are free");
  }
}

// The tool's bench makes the same check and adds what its user can change.
BOOST_AUTO_TEST_CASE(AdviceFollowsTheFigures) {
  try {
    walseg::require_free_space("this run", "d", 10 * kMiB, 20 * kMiB, kMiB, "a margin", "give another --dir");
    BOOST_FAIL("not refused");
  } catch (const walseg::Error& e) {
    BOOST_TEST(std::string(e.what()) == "not enough free space in \"d\": this run needs 21 MB (20 MB for its files at "
                                        "once and 1 MB left for a margin), but only 10 MB are free: give another --dir");
  }
}

BOOST_AUTO_TEST_CASE(AHugeMarginRefusesInsteadOfWrappingRound) {
  BOOST_CHECK_THROW(walseg::require_free_space("x", "d", UINT64_MAX - 1, kMiB, UINT64_MAX, "y"), walseg::Error);
}
