// Order statistics of latency samples: the one percentile definition of walseg.
//
// `walseg bench`, `walseg_bench()`, auto's probe (auto_method.h) and the segment manager's
// recorders (latency_stats.h) all summarise through these two functions, so the same samples
// give the same figures wherever they are shown. Before, four formulas (ceil(p·n),
// round(p·(n−1)), n·p/100 and floor) made the tool and the extension print different medians.
//
// Definition (nearest rank): the p-th percentile of n samples is the smallest sample x such
// that at least p·n of the samples are <= x, i.e. the ceil(p·n)-th smallest (at least the
// first). p·n is taken to 12 significant digits first, so that 0.7·10 (7.000000000000001 in
// binary floating point) counts as 7. No interpolation: every figure is a measured sample.
//
// Not for: streaming or bounded-memory statistics (LatencyRecorder keeps a reservoir).
// Thread-safety: pure functions; call from any thread.
#pragma once

#include <cstddef>
#include <vector>

namespace walseg {

/// Order statistics of one series of samples, microseconds (n is a count). All 0 when empty.
struct SampleSummary {
  std::size_t n = 0;
  double p10 = 0, median = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
};

/// The nearest-rank p-th percentile (p in [0, 1]; outside, clamped) of `sorted` (ascending, as
/// std::sort leaves it). Returns 0 for no samples. Never throws.
double nearest_rank(const std::vector<double>& sorted, double p) noexcept;

/// Sorts `us` in place (ascending) and summarises it: nearest_rank at 0.1, 0.5, 0.9, 0.99 and
/// 0.999, the maximum and the arithmetic mean. Never throws.
SampleSummary summarize_latencies(std::vector<double>& us) noexcept;

}  // namespace walseg
