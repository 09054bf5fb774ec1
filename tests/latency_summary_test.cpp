#define BOOST_TEST_MODULE latency_summary
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/latency_summary.h: the nearest-rank definition on hand-worked
// cases, and, in the last suite, that every host that prints percentiles (the `walseg bench`
// tool, the extension's walseg_bench() bridge, auto's probe and the segment manager's
// recorder) reports the same figure for the same samples. Before, the tool took ceil(p·n),
// the bridge round(p·(n−1)) and auto n·p/100, so for the 10 samples below the tool's median
// was 50, the bridge's 60 (rank round(4.5) = 5, index 5) and auto's 60.

#include <algorithm>
#include <vector>

#include "bridge_internal.h"  // contrib/walseg: set_bench_stats
#include "tool_util.h"        // src/bin: summarize
#include "walseg/auto_method.h"
#include "walseg/latency_stats.h"
#include "walseg/latency_summary.h"

using namespace walseg;

namespace {
// 10, 20, ..., 100 in a scrambled order, so that a summary that forgets to sort fails.
std::vector<double> tens() { return {70, 10, 100, 40, 30, 90, 20, 60, 80, 50}; }
}  // namespace

BOOST_AUTO_TEST_SUITE(definition)

BOOST_AUTO_TEST_CASE(no_samples_give_zeros) {
  std::vector<double> v;
  SampleSummary s = summarize_latencies(v);
  BOOST_TEST(s.n == 0u);
  BOOST_TEST(s.median == 0.0);
  BOOST_TEST(s.max == 0.0);
  BOOST_TEST(nearest_rank(v, 0.5) == 0.0);
}

BOOST_AUTO_TEST_CASE(ten_samples_give_the_ceil_p_n_th_smallest) {
  std::vector<double> v = tens();
  SampleSummary s = summarize_latencies(v);
  BOOST_TEST(s.n == 10u);
  BOOST_TEST(s.p10 == 10.0);    // rank ceil(1) = 1
  BOOST_TEST(s.median == 50.0); // rank ceil(5) = 5: 5 of 10 samples are <= 50
  BOOST_TEST(s.p90 == 90.0);    // rank 9
  BOOST_TEST(s.p99 == 100.0);   // rank ceil(9.9) = 10
  BOOST_TEST(s.p999 == 100.0);
  BOOST_TEST(s.max == 100.0);
  BOOST_TEST(s.mean == 55.0);
  BOOST_TEST(v.front() == 10.0);  // sorted in place
}

BOOST_AUTO_TEST_CASE(p_times_n_a_hair_above_an_integer_counts_as_that_integer) {
  // 0.7 * 10 is 7.000000000000001 in doubles: ceil would give rank 8 (80).
  std::vector<double> v = tens();
  std::sort(v.begin(), v.end());
  BOOST_TEST(nearest_rank(v, 0.7) == 70.0);
  BOOST_TEST(nearest_rank(v, 0.71) == 80.0);  // 7.1 -> rank 8
}

BOOST_AUTO_TEST_CASE(p_zero_gives_the_minimum_and_p_outside_zero_one_is_clamped) {
  std::vector<double> v = {3, 1, 2};
  std::sort(v.begin(), v.end());
  BOOST_TEST(nearest_rank(v, 0.0) == 1.0);
  BOOST_TEST(nearest_rank(v, -1.0) == 1.0);
  BOOST_TEST(nearest_rank(v, 1.0) == 3.0);
  BOOST_TEST(nearest_rank(v, 2.0) == 3.0);
}

BOOST_AUTO_TEST_CASE(one_sample_is_every_percentile) {
  std::vector<double> v = {42};
  SampleSummary s = summarize_latencies(v);
  BOOST_TEST(s.p10 == 42.0);
  BOOST_TEST(s.median == 42.0);
  BOOST_TEST(s.p999 == 42.0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(hosts_agree)

BOOST_AUTO_TEST_CASE(bench_tool_walseg_bench_and_auto_report_the_same_percentiles_for_the_same_samples) {
  for (const std::vector<double>& samples :
       {tens(), std::vector<double>{5, 1, 4, 2, 3}, std::vector<double>(128, 90.0),
        [] {
          std::vector<double> v;  // a probe's 128 commits: 1..128 us, reversed
          for (int i = 128; i >= 1; --i) v.push_back(i);
          return v;
        }()}) {
    BOOST_TEST_CONTEXT(samples.size() << " samples") {
      std::vector<double> tool_in = samples;
      const tool::Summary tool = tool::summarize(tool_in);  // `walseg bench`'s rows (latency_row)

      WalsegBenchRow row{};
      bridge::set_bench_stats(&row, samples);  // walseg_bench()'s rows

      const ProbeResult probe = probe_result(InitMethod::kZeroWrite, 1000, samples);  // auto

      LatencyRecorder rec;  // the segment manager's stats
      for (double us : samples) rec.add(us);
      const LatencySummary mgr = rec.summary();

      BOOST_TEST(row.n == static_cast<int>(tool.n));
      BOOST_TEST(row.median_us == tool.median);
      BOOST_TEST(row.p90_us == tool.p90);
      BOOST_TEST(row.p99_us == tool.p99);
      BOOST_TEST(row.max_us == tool.max);
      BOOST_TEST(probe.commit_p10_us == tool.p10);
      BOOST_TEST(probe.commit_median_us == tool.median);
      BOOST_TEST(probe.commit_p99_us == tool.p99);
      BOOST_TEST(mgr.p50_us == tool.median);
      BOOST_TEST(mgr.p99_us == tool.p99);
    }
  }
}

BOOST_AUTO_TEST_CASE(ten_samples_give_median_50_everywhere) {
  // The case of the suite's header: the figure itself, not only agreement.
  WalsegBenchRow row{};
  bridge::set_bench_stats(&row, tens());
  BOOST_TEST(row.median_us == 50.0);
  BOOST_TEST(probe_result(InitMethod::kSparse, 0, tens()).commit_median_us == 50.0);
}

BOOST_AUTO_TEST_SUITE_END()
