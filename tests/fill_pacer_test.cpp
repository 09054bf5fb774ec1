// Unit tests of include/walseg/fill_pacer.h, the fill pacing both preallocators use (the
// segment manager's thread and the PostgreSQL extension's worker): the rate estimate and the
// wait before each chunk. Pure computation, so time is passed in.
#define BOOST_TEST_MODULE fill_pacer
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <set>

#include "walseg/fill_pacer.h"
#include "walseg/preallocator.h"

using walseg::FillPacer;

namespace {

constexpr std::uint64_t kSeg = 16 * 1024 * 1024;
constexpr std::uint64_t kChunk = 64 * 1024;

// A pacer whose rate is exactly r bytes/s (its first sample is taken as it is).
FillPacer with_rate(double r) {
  FillPacer p;
  p.observe(0, 0.0);
  if (r > 0) p.observe(static_cast<std::uint64_t>(r), 1.0);
  return p;
}

// Feeds a steady rate for `seconds` in 100 ms samples, starting at (lsn, t); returns the end.
void feed(FillPacer& p, std::uint64_t& lsn, double& t, double bytes_per_s, double seconds) {
  for (double end = t + seconds - 1e-9; t < end;) {
    t += 0.1;
    lsn += static_cast<std::uint64_t>(bytes_per_s * 0.1);
    p.observe(lsn, t);
  }
}

// Runs one fill of kSeg bytes in kChunk chunks against a constant rate, starting with the
// position at `insert` and the segment at `target`; returns when the last chunk was due.
double simulate_fill(std::uint64_t insert, std::uint64_t target, double bytes_per_s) {
  const FillPacer p = with_rate(bytes_per_s);
  double t = 0;
  for (std::uint64_t done = 0; done < kSeg; done += kChunk) {
    auto pos = insert + static_cast<std::uint64_t>(bytes_per_s * t);
    t += p.wait_s(t, done, kSeg, pos, target);
  }
  return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(FirstObservationOnlyRecordsThePosition) {
  FillPacer p;
  p.observe(1000, 5.0);
  BOOST_TEST(p.bytes_per_s() == 0.0);
}

BOOST_AUTO_TEST_CASE(FirstSampleIsTakenAsItIs) {
  FillPacer p;
  p.observe(0, 1.0);
  p.observe(2'000'000, 1.2);
  BOOST_TEST(p.bytes_per_s() == 10'000'000.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(SamplesCloserThanThePeriodAreDeferredNotLost) {
  FillPacer p;
  p.observe(0, 1.0);
  p.observe(500'000, 1.05);  // too soon: nothing changes
  BOOST_TEST(p.bytes_per_s() == 0.0);
  p.observe(1'000'000, 1.1);  // spans both
  BOOST_TEST(p.bytes_per_s() == 10'000'000.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(RateRisesWithinASecondAndFallsOverSeconds) {
  FillPacer p;
  std::uint64_t lsn = 0;
  double t = 0;
  p.observe(lsn, t);
  feed(p, lsn, t, 1e6, 2.0);
  BOOST_TEST(p.bytes_per_s() == 1e6, boost::test_tools::tolerance(1e-6));
  feed(p, lsn, t, 10e6, 1.0);  // a burst: mostly taken in after 1 s
  BOOST_TEST(p.bytes_per_s() > 9e6);
  feed(p, lsn, t, 0, 1.0);  // idle for 1 s: still most of it (exp(-1/3) ~ 0.72)
  BOOST_TEST(p.bytes_per_s() > 0.6 * 10e6);
  BOOST_TEST(p.bytes_per_s() < 0.8 * 10e6);
  feed(p, lsn, t, 0, 30.0);  // long idle: decays towards 0, never negative
  BOOST_TEST(p.bytes_per_s() < 1e3);
  BOOST_TEST(p.bytes_per_s() >= 0);
}

BOOST_AUTO_TEST_CASE(PositionGoingBackwardsForgetsTheRate) {
  FillPacer p;
  p.observe(1'000'000, 0.0);
  p.observe(2'000'000, 0.1);
  BOOST_TEST(p.bytes_per_s() > 0);
  p.observe(500, 0.2);
  BOOST_TEST(p.bytes_per_s() == 0.0);
  p.observe(1'500'500, 0.2 + 0.1 * 1.01);  // and learns again from the new position (just past the period)
  BOOST_TEST(p.bytes_per_s() == 1'500'000.0 / (0.1 * 1.01), boost::test_tools::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(NoPacingWithoutARate) {
  BOOST_TEST(FillPacer{}.wait_s(0, 0, kSeg, 0, 4 * kSeg) == 0.0);
}

BOOST_AUTO_TEST_CASE(NoPacingWhenThePositionReachedOrNearsTheSegment) {
  BOOST_TEST(with_rate(1e6).wait_s(0, 0, kSeg, 2 * kSeg, 2 * kSeg) == 0.0);
  BOOST_TEST(with_rate(1e6).wait_s(0, 0, kSeg, 3 * kSeg, 2 * kSeg) == 0.0);
  // 50 ms away at 16 MB/s: near.
  BOOST_TEST(with_rate(double(kSeg)).wait_s(0, 0, kSeg, 2 * kSeg - kSeg / 20, 2 * kSeg) == 0.0);
}

BOOST_AUTO_TEST_CASE(StartsAtATenthAndSpreadsOverHalfTheDeadline) {
  // Segment needed in 4 s: the first chunk waits 0.4 s, the middle one is due at 1.4 s.
  const FillPacer p = with_rate(double(kSeg) / 2);  // 2 s per segment, the target 2 ahead
  auto tol = boost::test_tools::tolerance(1e-9);
  BOOST_TEST(p.wait_s(0, 0, kSeg, 0, 2 * kSeg) == 0.4, tol);
  // 1 s later the position moved on by half a segment, the deadline is still 4 s.
  BOOST_TEST(p.wait_s(1.0, kSeg / 2, kSeg, kSeg / 2, 2 * kSeg) == 0.4, tol);
  // Behind schedule: no wait.
  BOOST_TEST(p.wait_s(2.0, kSeg / 2, kSeg, kSeg, 2 * kSeg) == 0.0);
}

BOOST_AUTO_TEST_CASE(AWholeFillEndsAtSixTenthsOfTheDeadline) {
  double end = simulate_fill(0, 2 * kSeg, double(kSeg) / 2);
  // The last chunk is due at 4 s x (0.1 + 0.5 x (kSeg - kChunk) / kSeg).
  BOOST_TEST(end > 2.3);
  BOOST_TEST(end <= 2.4);
}

BOOST_AUTO_TEST_CASE(AFasterRateShortensTheWait) {
  double slow = with_rate(4e6).wait_s(0.5, kSeg / 4, kSeg, 0, 2 * kSeg);
  double fast = with_rate(40e6).wait_s(0.5, kSeg / 4, kSeg, 0, 2 * kSeg);
  BOOST_TEST(slow > 0);
  BOOST_TEST(fast < slow);
}

BOOST_AUTO_TEST_CASE(DeadlineIsCappedWhenWalIsNearlyIdle) {
  // 100 bytes/s would put the segment days away; the fill still ends within 6 s.
  auto tol = boost::test_tools::tolerance(1e-9);
  BOOST_TEST(with_rate(100).wait_s(0, 0, kSeg, 0, kSeg) == 1.0, tol);
  BOOST_TEST(simulate_fill(0, kSeg, 100) <= 6.0);
  BOOST_TEST(with_rate(100).wait_s(6.0, kSeg / 2, kSeg, 0, kSeg) == 0.0);
}

// ---- The step's job choice (preallocator.h), the same for both hosts ----

BOOST_AUTO_TEST_CASE(NextJobIsTheFirstMissingSegmentWithinTargetAndHorizon) {
  walseg::PoolView v;
  v.position = 10;
  v.target = 3;
  v.last_allowed = 100;
  v.present = [](walseg::SegNo s) { return s == 11 || s == 13; };
  BOOST_TEST(walseg::next_job(v).value().segno == 12u);
  v.present = [](walseg::SegNo s) { return s >= 11 && s <= 13; };
  BOOST_TEST(!walseg::next_job(v).has_value());  // the pool is full
  v.present = [](walseg::SegNo) { return false; };
  v.last_allowed = 10;  // at the horizon: nothing, however few are ready
  BOOST_TEST(!walseg::next_job(v).has_value());
  v.last_allowed = 11;
  BOOST_TEST(walseg::next_job(v).value().segno == 11u);
  v.target = 0;
  BOOST_TEST(!walseg::next_job(v).has_value());
}

BOOST_AUTO_TEST_CASE(OnlyTheJobThatCompletesThePoolIsPacedAndOnlyUntilTheWritersNextSegment) {
  walseg::PoolView v;
  v.position = 10;
  v.target = 3;
  v.last_allowed = 100;
  v.present = [](walseg::SegNo s) { return s == 11 || s == 12; };
  auto job = walseg::next_job(v).value();
  BOOST_TEST(job.segno == 13u);
  BOOST_TEST(job.pace_until.value() == 11u);
  v.present = [](walseg::SegNo s) { return s == 11 || s == 13; };  // short of two: behind
  job = walseg::next_job(v).value();
  BOOST_TEST(job.segno == 12u);
  BOOST_TEST(!job.pace_until.has_value());
  v.last_allowed = 12;  // the horizon is the target: 12 completes the pool
  BOOST_TEST(walseg::next_job(v).value().pace_until.value() == 11u);
}

namespace {

// One preallocator (next_job, then a fill chunk by chunk with the pacer's waits) against a
// writer at a constant rate, on a simulated clock; the pool starts full. Returns the fewest
// segments ready after the writer's over `seconds`. fill_bytes_per_s: the unpaced fill speed.
int fewest_ready(int target, double write_bytes_per_s, double fill_bytes_per_s, double seconds) {
  constexpr std::uint64_t kS = 1024 * 1024;
  constexpr std::uint64_t kChunkBytes = 256 * 1024;
  std::set<walseg::SegNo> ready;
  for (int k = 1; k <= target; ++k) ready.insert(static_cast<walseg::SegNo>(k));
  double t = 0;
  FillPacer pacer;
  auto position = [&] { return static_cast<std::uint64_t>(write_bytes_per_s * t); };
  auto ahead = [&] {
    int n = 0;
    for (walseg::SegNo s = position() / kS + 1; ready.count(s); ++s) ++n;
    return n;
  };
  pacer.observe(0, 0);
  int fewest = target;
  while (t < seconds) {
    pacer.observe(position(), t);
    walseg::PoolView v{position() / kS, target, ~walseg::SegNo{0}, [&](walseg::SegNo s) { return ready.count(s) > 0; }};
    const auto job = walseg::next_job(v);
    if (!job) {
      t += 0.01;  // a poll
      continue;
    }
    const double start = t;
    for (std::uint64_t done = 0; done < kS; done += kChunkBytes) {
      for (;;) {
        pacer.observe(position(), t);
        const double w = job->pace_until ? pacer.wait_s(t - start, done, kS, position(), *job->pace_until * kS) : 0;
        if (w <= 0) break;
        t += std::clamp(w, 1e-6, 0.01);  // at least a microsecond: a tiny wait must move the clock
        fewest = std::min(fewest, ahead());
      }
      t += static_cast<double>(kChunkBytes) / fill_bytes_per_s;
      fewest = std::min(fewest, ahead());
    }
    ready.insert(job->segno);
  }
  return fewest;
}

}  // namespace

BOOST_AUTO_TEST_CASE(APooledWriterKeepsThePoolNearItsTarget) {
  // A segment every 100 ms, fills at 100 MB/s (10 ms unpaced): the pool must not drain. Paced
  // to 60% of each segment's own time until needed, one filler let it fall to one segment
  // (issue 18's misses during a bulk load).
  BOOST_TEST(fewest_ready(8, 10.0 * 1024 * 1024, 100.0 * 1024 * 1024, 20.0) >= 7);
  BOOST_TEST(fewest_ready(2, 10.0 * 1024 * 1024, 100.0 * 1024 * 1024, 20.0) >= 1);
  // A writer faster than the fills: the pool runs out, but never because of the pacing.
  BOOST_TEST(fewest_ready(8, 10.0 * 1024 * 1024, 20.0 * 1024 * 1024, 5.0) >= 6);
}
