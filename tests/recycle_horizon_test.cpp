#define BOOST_TEST_MODULE recycle_horizon
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/recycle_horizon.h (XLOGfileslop and the checkpoint distance
// estimate) and, in the last suite, include/walseg/latency_stats.h, the segment manager's
// other pure helper (the file list for this layer has no separate latency_stats_test.cpp).
//
// Every expected value is worked out by hand in the comment beside it from PostgreSQL's
// formula (xlog.c, XLOGfileslop):
//   minSegNo = redo_seg + min_segs - 1;  maxSegNo = redo_seg + max_segs - 1
//   recycleSegNo = ceil((redo_bytes + distance * (1 + 0.9) * 1.10) / seg_size), clamped.
// Values are chosen away from integer boundaries so floating-point rounding cannot decide them.

#include <cstdint>
#include <vector>

#include "walseg/latency_stats.h"
#include "walseg/recycle_horizon.h"

using namespace walseg;

namespace {
constexpr std::uint64_t kMB = std::uint64_t{1} << 20;
}  // namespace

BOOST_AUTO_TEST_SUITE(horizon)

BOOST_AUTO_TEST_CASE(distance_between_clamps_gives_ceil_of_redo_plus_1_point_9_times_1_1_distance) {
  // redo at segment 10 of 1 MB; distance 10 MB -> 10 * 1.9 * 1.1 = 20.9 MB;
  // (10 MB + 20.9 MB) / 1 MB = 30.9 -> 31. min 5 MB -> 14; max 100 MB -> 109.
  BOOST_TEST(recycle_horizon(10, kMB, 5 * kMB, 100 * kMB, 10.0 * kMB) == 31u);
}

BOOST_AUTO_TEST_CASE(zero_distance_is_raised_to_min_size) {
  // ceil(10 MB / 1 MB) = 10 < minSegNo = 10 + 5 - 1 = 14.
  BOOST_TEST(recycle_horizon(10, kMB, 5 * kMB, 100 * kMB, 0.0) == 14u);
}

BOOST_AUTO_TEST_CASE(huge_distance_is_capped_at_max_size) {
  // 1000 MB * 2.09 = 2090 MB -> 2100 > maxSegNo = 10 + 100 - 1 = 109.
  BOOST_TEST(recycle_horizon(10, kMB, 5 * kMB, 100 * kMB, 1000.0 * kMB) == 109u);
}

// The bound the horizon sits at, which the extension used to work out in C from two more
// horizon computations of its own (issue 18: one implementation of the policy).
BOOST_AUTO_TEST_CASE(the_bound_is_named_with_the_horizon) {
  const auto mid = recycle_horizon_bounded(10, kMB, 5 * kMB, 100 * kMB, 10.0 * kMB);
  BOOST_TEST(mid.segno == 31u);
  BOOST_TEST((mid.bound == HorizonBound::kDistance));
  const auto low = recycle_horizon_bounded(10, kMB, 5 * kMB, 100 * kMB, 1.0 * kMB);  // ceil(12.09) = 13 < 14
  BOOST_TEST(low.segno == 14u);
  BOOST_TEST((low.bound == HorizonBound::kMinSize));
  const auto high = recycle_horizon_bounded(10, kMB, 5 * kMB, 100 * kMB, 1000.0 * kMB);
  BOOST_TEST(high.segno == 109u);
  BOOST_TEST((high.bound == HorizonBound::kMaxSize));
  // min_size = max_size: both bounds are one segment number; max_size is what caps it.
  const auto both = recycle_horizon_bounded(10, kMB, 5 * kMB, 5 * kMB, 0.0);
  BOOST_TEST(both.segno == 14u);
  BOOST_TEST((both.bound == HorizonBound::kMaxSize));
  // max_size below min_size: XLOGfileslop applies the maximum last, so it caps (the
  // extension's regress test: max_wal_size 32MB of 16MB segments under min_wal_size 80MB).
  const auto under = recycle_horizon_bounded(10, 16 * kMB, 80 * kMB, 32 * kMB, 0.0);
  BOOST_TEST(under.segno == 11u);
  BOOST_TEST((under.bound == HorizonBound::kMaxSize));
}

BOOST_AUTO_TEST_CASE(sixteen_megabyte_segments_with_postgresql_defaults) {
  // PostgreSQL defaults: min_wal_size 80 MB = 5 segments, max_wal_size 1 GB = 64 segments.
  // redo segment 100, distance 160 MB (10 segments): 160 * 2.09 = 334.4 MB = 20.9 segments;
  // 100 + 20.9 = 120.9 -> 121. Bounds 104 and 163.
  const std::uint64_t seg = 16 * kMB;
  BOOST_TEST(recycle_horizon(100, seg, 80 * kMB, 1024 * kMB, 160.0 * kMB) == 121u);
  // Without history the minimum applies: 100 + 5 - 1.
  BOOST_TEST(recycle_horizon(100, seg, 80 * kMB, 1024 * kMB, 0.0) == 104u);
  // A distance of 1 GB wants 100 + 64 * 2.09 = 233.76 -> 234, capped at 100 + 64 - 1 = 163.
  BOOST_TEST(recycle_horizon(100, seg, 80 * kMB, 1024 * kMB, 1024.0 * kMB) == 163u);
}

BOOST_AUTO_TEST_CASE(min_size_below_one_segment_still_keeps_the_redo_segment) {
  // min 512 kB with 1 MB segments converts to 0 segments; walseg counts it as 1, so the
  // lower bound is the redo segment itself and never below it.
  BOOST_TEST(recycle_horizon(7, kMB, kMB / 2, 100 * kMB, 0.0) == 7u);
}

BOOST_AUTO_TEST_CASE(horizon_grows_with_the_redo_position) {
  // Same distance 3 MB (6.27 MB of slop), redo 0 and 1000: 6.27 -> 7 and 1006.27 -> 1007.
  BOOST_TEST(recycle_horizon(0, kMB, kMB, 64 * kMB, 3.0 * kMB) == 7u);
  BOOST_TEST(recycle_horizon(1000, kMB, kMB, 64 * kMB, 3.0 * kMB) == 1007u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(distance_estimate)

BOOST_AUTO_TEST_CASE(starts_at_zero) {
  DistanceEstimate d;
  BOOST_TEST(d.bytes() == 0.0);
}

BOOST_AUTO_TEST_CASE(larger_observation_is_taken_at_once) {
  DistanceEstimate d;
  d.observe(1000);
  BOOST_TEST(d.bytes() == 1000.0);
  d.observe(5000);
  BOOST_TEST(d.bytes() == 5000.0);
}

BOOST_AUTO_TEST_CASE(smaller_observation_moves_the_estimate_ten_percent_toward_it) {
  DistanceEstimate d;
  d.observe(1000);
  d.observe(0);  // 0.9 * 1000 + 0.1 * 0 = 900
  BOOST_TEST(d.bytes() == 900.0, boost::test_tools::tolerance(1e-9));
  d.observe(400);  // 0.9 * 900 + 0.1 * 400 = 850
  BOOST_TEST(d.bytes() == 850.0, boost::test_tools::tolerance(1e-9));
  d.observe(850);  // equal is not larger: 0.9 * 850 + 0.1 * 850 = 850
  BOOST_TEST(d.bytes() == 850.0, boost::test_tools::tolerance(1e-9));
  d.observe(851);  // larger by one byte: jumps
  BOOST_TEST(d.bytes() == 851.0);
}

BOOST_AUTO_TEST_CASE(repeated_small_observations_decay_geometrically) {
  DistanceEstimate d;
  d.observe(10000);
  for (int i = 0; i < 3; ++i) d.observe(0);  // 10000 * 0.9^3 = 7290
  BOOST_TEST(d.bytes() == 7290.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(latency_recorder)

BOOST_AUTO_TEST_CASE(empty_recorder_summarises_to_zeros) {
  LatencyRecorder r;
  LatencySummary s = r.summary();
  BOOST_TEST(s.count == 0u);
  BOOST_TEST(s.total_us == 0.0);
  BOOST_TEST(s.p50_us == 0.0);
  BOOST_TEST(s.p99_us == 0.0);
  BOOST_TEST(s.max_us == 0.0);
}

BOOST_AUTO_TEST_CASE(one_to_one_hundred_gives_nearest_rank_p50_50_p99_99_max_100) {
  LatencyRecorder r;
  // Added in a scrambled order so that a recorder that forgets to sort fails.
  for (int i = 0; i < 100; ++i) r.add(static_cast<double>((i * 37) % 100 + 1));
  LatencySummary s = r.summary();
  BOOST_TEST(s.count == 100u);
  BOOST_TEST(s.total_us == 5050.0);  // 100 * 101 / 2
  BOOST_TEST(s.p50_us == 50.0);       // rank ceil(0.50 * 100) = 50
  BOOST_TEST(s.p99_us == 99.0);       // rank ceil(0.99 * 100) = 99
  BOOST_TEST(s.max_us == 100.0);
}

BOOST_AUTO_TEST_CASE(ten_samples_give_p50_5_and_p99_the_maximum) {
  LatencyRecorder r;
  for (double v : {10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0}) r.add(v);
  LatencySummary s = r.summary();
  BOOST_TEST(s.p50_us == 5.0);   // rank ceil(5) = 5
  BOOST_TEST(s.p99_us == 10.0);  // rank ceil(9.9) = 10
  BOOST_TEST(s.max_us == 10.0);
}

BOOST_AUTO_TEST_CASE(single_sample_is_every_percentile) {
  LatencyRecorder r;
  r.add(42.5);
  LatencySummary s = r.summary();
  BOOST_TEST(s.count == 1u);
  BOOST_TEST(s.p50_us == 42.5);
  BOOST_TEST(s.p99_us == 42.5);
  BOOST_TEST(s.max_us == 42.5);
}

BOOST_AUTO_TEST_CASE(reservoir_keeps_only_the_most_recent_samples_but_count_total_max_over_all) {
  const std::size_t n = LatencyRecorder::kReservoirSize;
  BOOST_TEST(n == 4096u);
  LatencyRecorder r;
  for (std::size_t i = 0; i < n; ++i) r.add(1000.0);
  for (std::size_t i = 0; i < n; ++i) r.add(1.0);
  LatencySummary s = r.summary();
  // Percentiles see only the last 4096 samples (all 1); count, total and max see all 8192.
  BOOST_TEST(s.count == 2 * n);
  BOOST_TEST(s.total_us == 1001.0 * static_cast<double>(n));
  BOOST_TEST(s.max_us == 1000.0);
  BOOST_TEST(s.p50_us == 1.0);
  BOOST_TEST(s.p99_us == 1.0);
}

BOOST_AUTO_TEST_CASE(reservoir_overwrites_the_oldest_samples_first) {
  const std::size_t n = LatencyRecorder::kReservoirSize;
  LatencyRecorder r;
  for (int i = 0; i < 100; ++i) r.add(1e6);                        // oldest: 100 huge
  for (std::size_t i = 0; i < n - 100; ++i) r.add(1.0);            // fills the reservoir
  for (int i = 0; i < 100; ++i) r.add(2.0);                        // must evict the huge ones
  LatencySummary s = r.summary();
  // Retained if the oldest go first: 3996 ones and 100 twos. p99 is rank ceil(0.99 * 4096) =
  // 4056, index 4055 >= 3996, so 2. Had any huge sample survived (newest overwritten, or no
  // bound at all) the top 41 ranks would hold 1e6 and p99 would be 1e6.
  BOOST_TEST(s.p50_us == 1.0);
  BOOST_TEST(s.p99_us == 2.0);
  BOOST_TEST(s.max_us == 1e6);  // the maximum is over all samples, evicted or not
  BOOST_TEST(s.count == n + 100);
}

BOOST_AUTO_TEST_SUITE_END()
