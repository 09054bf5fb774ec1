// Recycle horizon (include/walseg/recycle_horizon.h).
#include "walseg/recycle_horizon.h"

#include <algorithm>
#include <cmath>

namespace walseg {

void DistanceEstimate::observe(double bytes) {
  bytes_ = bytes > bytes_ ? bytes : 0.90 * bytes_ + 0.10 * bytes;
}

SegNo recycle_horizon(SegNo redo_segno, std::uint64_t segment_size_bytes,
                      std::uint64_t min_size_bytes, std::uint64_t max_size_bytes,
                      double distance_bytes) {
  // ConvertToXSegs: sizes in whole segments, at least 1 so the clamp below stays ordered.
  SegNo min_segs = std::max<SegNo>(1, min_size_bytes / segment_size_bytes);
  SegNo max_segs = std::max<SegNo>(min_segs, max_size_bytes / segment_size_bytes);
  SegNo lo = redo_segno + min_segs - 1;
  SegNo hi = redo_segno + max_segs - 1;
  double redo_bytes = static_cast<double>(redo_segno) * static_cast<double>(segment_size_bytes);
  double distance = distance_bytes * (1.0 + kCompletionTarget) * 1.10;
  auto want = static_cast<SegNo>(std::ceil((redo_bytes + distance) / static_cast<double>(segment_size_bytes)));
  return std::clamp(want, lo, hi);
}

}  // namespace walseg
