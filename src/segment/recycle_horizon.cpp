// Recycle horizon (include/walseg/recycle_horizon.h).
#include "walseg/recycle_horizon.h"

#include <algorithm>
#include <cmath>

namespace walseg {

void DistanceEstimate::observe(double bytes) {
  bytes_ = bytes > bytes_ ? bytes : 0.90 * bytes_ + 0.10 * bytes;
}

BoundedHorizon recycle_horizon_bounded(SegNo redo_segno, std::uint64_t segment_size_bytes,
                                       std::uint64_t min_size_bytes, std::uint64_t max_size_bytes,
                                       double distance_bytes) {
  // ConvertToXSegs: sizes in whole segments, at least 1 so that the bounds are segment numbers
  // from the redo segment on.
  const SegNo min_segs = std::max<SegNo>(1, min_size_bytes / segment_size_bytes);
  const SegNo max_segs = std::max<SegNo>(1, max_size_bytes / segment_size_bytes);
  const SegNo lo = redo_segno + min_segs - 1;
  const SegNo hi = redo_segno + max_segs - 1;
  double redo_bytes = static_cast<double>(redo_segno) * static_cast<double>(segment_size_bytes);
  double distance = distance_bytes * (1.0 + kCompletionTarget) * 1.10;
  auto want = static_cast<SegNo>(std::ceil((redo_bytes + distance) / static_cast<double>(segment_size_bytes)));
  // In XLOGfileslop's order: raised to the minimum, then lowered to the maximum, so that a
  // max_size below min_size (PostgreSQL allows it) caps.
  const SegNo h = std::min(std::max(want, lo), hi);
  return {h, h == hi ? HorizonBound::kMaxSize : h == lo ? HorizonBound::kMinSize : HorizonBound::kDistance};
}

SegNo recycle_horizon(SegNo redo_segno, std::uint64_t segment_size_bytes,
                      std::uint64_t min_size_bytes, std::uint64_t max_size_bytes,
                      double distance_bytes) {
  return recycle_horizon_bounded(redo_segno, segment_size_bytes, min_size_bytes, max_size_bytes, distance_bytes)
      .segno;
}

}  // namespace walseg
