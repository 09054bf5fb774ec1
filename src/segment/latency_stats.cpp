// LatencyRecorder (include/walseg/latency_stats.h).
#include "walseg/latency_stats.h"

#include <algorithm>
#include <cmath>

namespace walseg {

void LatencyRecorder::add(double us) {
  if (recent_.size() < kReservoirSize) {
    recent_.push_back(us);
  } else {
    recent_[next_] = us;
    next_ = (next_ + 1) % kReservoirSize;
  }
  ++count_;
  total_ += us;
  max_ = std::max(max_, us);
}

LatencySummary LatencyRecorder::summary() const {
  LatencySummary s;
  s.count = count_;
  s.total_us = total_;
  s.max_us = max_;
  if (recent_.empty()) return s;
  std::vector<double> v = recent_;
  std::sort(v.begin(), v.end());
  auto pct = [&](double p) {
    auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  s.p50_us = pct(0.50);
  s.p99_us = pct(0.99);
  return s;
}

}  // namespace walseg
