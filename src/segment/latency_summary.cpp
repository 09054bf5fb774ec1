// Nearest-rank order statistics (include/walseg/latency_summary.h).
#include "walseg/latency_summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace walseg {

double nearest_rank(const std::vector<double>& sorted, double p) noexcept {
  if (sorted.empty()) return 0;
  const double n = static_cast<double>(sorted.size());
  // Rounded to 12 significant digits: p·n a hair above an integer is that integer.
  const double x = std::clamp(p, 0.0, 1.0) * n;
  const double rank = std::ceil(x - x * 1e-12);
  const auto i = static_cast<std::size_t>(std::max(1.0, rank)) - 1;
  return sorted[std::min(i, sorted.size() - 1)];
}

SampleSummary summarize_latencies(std::vector<double>& us) noexcept {
  SampleSummary r;
  r.n = us.size();
  if (us.empty()) return r;
  std::sort(us.begin(), us.end());
  r.p10 = nearest_rank(us, 0.1);
  r.median = nearest_rank(us, 0.5);
  r.p90 = nearest_rank(us, 0.9);
  r.p99 = nearest_rank(us, 0.99);
  r.p999 = nearest_rank(us, 0.999);
  r.max = us.back();
  r.mean = std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(us.size());
  return r;
}

}  // namespace walseg
