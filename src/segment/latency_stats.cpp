// LatencyRecorder (include/walseg/latency_stats.h).
#include "walseg/latency_stats.h"

#include <algorithm>

#include "walseg/latency_summary.h"

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
  s.p50_us = nearest_rank(v, 0.50);
  s.p99_us = nearest_rank(v, 0.99);
  return s;
}

}  // namespace walseg
