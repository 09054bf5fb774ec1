// Unit tests of the preallocator's fill pacing (fill_pacing.h): the consumption-rate estimate
// and the wait before each chunk. Pure computation, so time is passed in.
#define BOOST_TEST_MODULE fill_pacing
#include <boost/test/unit_test.hpp>

#include <cstdint>

#include "fill_pacing.h"

using walseg::bridge::fill_wait_s;
using walseg::bridge::rate_observe;

namespace {

constexpr std::uint64_t kSeg = 16 * 1024 * 1024;
constexpr std::uint64_t kChunk = 64 * 1024;

// Feeds a steady rate for `seconds` in 100 ms samples, starting at (lsn, t); returns the end.
void feed(WalsegRate& r, std::uint64_t& lsn, double& t, double bytes_per_s, double seconds) {
  for (double end = t + seconds - 1e-9; t < end;) {
    t += 0.1;
    lsn += static_cast<std::uint64_t>(bytes_per_s * 0.1);
    rate_observe(r, lsn, t);
  }
}

// Runs one fill of kSeg bytes in kChunk chunks against a constant rate, starting with the
// insert position at `insert` and the segment at `target`; returns when the last chunk was due.
double simulate_fill(std::uint64_t insert, std::uint64_t target, double bytes_per_s) {
  double t = 0;
  for (std::uint64_t done = 0; done < kSeg; done += kChunk) {
    auto pos = insert + static_cast<std::uint64_t>(bytes_per_s * t);
    t += fill_wait_s(t, done, kSeg, pos, target, bytes_per_s);
  }
  return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(FirstObservationOnlyRecordsThePosition) {
  WalsegRate r{};
  rate_observe(r, 1000, 5.0);
  BOOST_TEST(r.primed);
  BOOST_TEST(r.bytes_per_s == 0.0);
}

BOOST_AUTO_TEST_CASE(FirstSampleIsTakenAsItIs) {
  WalsegRate r{};
  rate_observe(r, 0, 1.0);
  rate_observe(r, 2'000'000, 1.2);
  BOOST_TEST(r.bytes_per_s == 10'000'000.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(SamplesCloserThanThePeriodAreDeferredNotLost) {
  WalsegRate r{};
  rate_observe(r, 0, 1.0);
  rate_observe(r, 500'000, 1.05);  // too soon: nothing changes
  BOOST_TEST(r.bytes_per_s == 0.0);
  BOOST_TEST(r.last_lsn == 0u);
  rate_observe(r, 1'000'000, 1.1);  // spans both
  BOOST_TEST(r.bytes_per_s == 10'000'000.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(RateRisesWithinASecondAndFallsOverSeconds) {
  WalsegRate r{};
  std::uint64_t lsn = 0;
  double t = 0;
  rate_observe(r, lsn, t);
  feed(r, lsn, t, 1e6, 2.0);
  BOOST_TEST(r.bytes_per_s == 1e6, boost::test_tools::tolerance(1e-6));
  feed(r, lsn, t, 10e6, 1.0);  // a burst: mostly taken in after 1 s
  BOOST_TEST(r.bytes_per_s > 9e6);
  feed(r, lsn, t, 0, 1.0);  // idle for 1 s: still most of it (exp(-1/3) ~ 0.72)
  BOOST_TEST(r.bytes_per_s > 0.6 * 10e6);
  BOOST_TEST(r.bytes_per_s < 0.8 * 10e6);
  feed(r, lsn, t, 0, 30.0);  // long idle: decays towards 0, never negative
  BOOST_TEST(r.bytes_per_s < 1e3);
  BOOST_TEST(r.bytes_per_s >= 0);
}

BOOST_AUTO_TEST_CASE(PositionGoingBackwardsForgetsTheRate) {
  WalsegRate r{};
  rate_observe(r, 1'000'000, 0.0);
  rate_observe(r, 2'000'000, 0.1);
  BOOST_TEST(r.bytes_per_s > 0);
  rate_observe(r, 500, 0.2);
  BOOST_TEST(r.bytes_per_s == 0.0);
  BOOST_TEST(r.last_lsn == 500u);
}

BOOST_AUTO_TEST_CASE(NoPacingWithoutARate) {
  BOOST_TEST(fill_wait_s(0, 0, kSeg, 0, 4 * kSeg, 0) == 0.0);
  BOOST_TEST(fill_wait_s(0, 0, kSeg, 0, 4 * kSeg, -1) == 0.0);
}

BOOST_AUTO_TEST_CASE(NoPacingWhenThePositionReachedOrNearsTheSegment) {
  BOOST_TEST(fill_wait_s(0, 0, kSeg, 2 * kSeg, 2 * kSeg, 1e6) == 0.0);
  BOOST_TEST(fill_wait_s(0, 0, kSeg, 3 * kSeg, 2 * kSeg, 1e6) == 0.0);
  // 50 ms away at 16 MB/s: near.
  BOOST_TEST(fill_wait_s(0, 0, kSeg, 2 * kSeg - kSeg / 20, 2 * kSeg, double(kSeg)) == 0.0);
}

BOOST_AUTO_TEST_CASE(StartsAtATenthAndSpreadsOverHalfTheDeadline) {
  // Segment needed in 4 s: the first chunk waits 0.4 s, the middle one is due at 1.4 s.
  double rate = double(kSeg) / 2;  // 2 s per segment, the target 2 segments ahead
  auto tol = boost::test_tools::tolerance(1e-9);
  BOOST_TEST(fill_wait_s(0, 0, kSeg, 0, 2 * kSeg, rate) == 0.4, tol);
  // 1 s later the position moved on by half a segment, the deadline is still 4 s.
  BOOST_TEST(fill_wait_s(1.0, kSeg / 2, kSeg, kSeg / 2, 2 * kSeg, rate) == 0.4, tol);
  // Behind schedule: no wait.
  BOOST_TEST(fill_wait_s(2.0, kSeg / 2, kSeg, kSeg, 2 * kSeg, rate) == 0.0);
}

BOOST_AUTO_TEST_CASE(AWholeFillEndsAtSixTenthsOfTheDeadline) {
  double rate = double(kSeg) / 2;
  double end = simulate_fill(0, 2 * kSeg, rate);
  // The last chunk is due at 4 s x (0.1 + 0.5 x (kSeg - kChunk) / kSeg).
  BOOST_TEST(end > 2.3);
  BOOST_TEST(end <= 2.4);
}

BOOST_AUTO_TEST_CASE(AFasterRateShortensTheWait) {
  double slow = fill_wait_s(0.5, kSeg / 4, kSeg, 0, 2 * kSeg, 4e6);
  double fast = fill_wait_s(0.5, kSeg / 4, kSeg, 0, 2 * kSeg, 40e6);
  BOOST_TEST(slow > 0);
  BOOST_TEST(fast < slow);
}

BOOST_AUTO_TEST_CASE(DeadlineIsCappedWhenWalIsNearlyIdle) {
  // 100 bytes/s would put the segment days away; the fill still ends within 6 s.
  auto tol = boost::test_tools::tolerance(1e-9);
  BOOST_TEST(fill_wait_s(0, 0, kSeg, 0, kSeg, 100) == 1.0, tol);
  BOOST_TEST(simulate_fill(0, kSeg, 100) <= 6.0);
  BOOST_TEST(fill_wait_s(6.0, kSeg / 2, kSeg, 0, kSeg, 100) == 0.0);
}
