// The recycle horizon: up to which future segment number a retired segment is worth keeping
// (by renaming it) rather than removing, computed as PostgreSQL's XLOGfileslop does.
//
// PostgreSQL keeps enough segments to reach min_wal_size, never more than max_wal_size, and in
// between enough to get through the next checkpoint cycle, estimated from the WAL the previous
// cycles consumed (CheckPointDistanceEstimate) times (1 + checkpoint_completion_target), plus
// 10%. walseg's "checkpoint" is retire(); the distance is the WAL consumed between retires.
// Thread-safety: pure functions and a value type; the owner serialises DistanceEstimate.
#pragma once

#include <cstdint>

#include "walseg/segment_name.h"

namespace walseg {

/// PostgreSQL's default checkpoint_completion_target.
inline constexpr double kCompletionTarget = 0.9;

/// Smoothed bytes of WAL consumed per retire cycle, as UpdateCheckPointDistanceEstimate: a
/// larger observation is taken at once, a smaller one moves the estimate by 10%.
class DistanceEstimate {
 public:
  /// An estimate of `bytes` so far (0: none yet), for a host that keeps the number itself.
  explicit DistanceEstimate(double bytes = 0) : bytes_(bytes) {}
  void observe(double bytes);
  double bytes() const { return bytes_; }

 private:
  double bytes_ = 0;
};

/// Highest segment number that a segment retired at `redo_segno` (the first segment still
/// needed) may be recycled to. Segment sizes and sizes are bytes; min/max_size are
/// walseg.min_size / walseg.max_size. Mirrors XLOGfileslop: clamp(ceil((redo + distance *
/// (1 + target) * 1.1) / size), redo_seg + min_segs - 1, redo_seg + max_segs - 1).
SegNo recycle_horizon(SegNo redo_segno, std::uint64_t segment_size_bytes,
                      std::uint64_t min_size_bytes, std::uint64_t max_size_bytes,
                      double distance_bytes);

/// Which of XLOGfileslop's bounds the horizon sits at: what a DBA raises to get more
/// segments ahead (walseg_status() in the extension names it).
enum class HorizonBound {
  kMaxSize,   ///< redo_segno + max_size - 1: max_size (max_wal_size) caps it
  kMinSize,   ///< redo_segno + min_size - 1: the distance asks for less than min_size keeps
  kDistance,  ///< in between: the checkpoint distance estimate decides
};

struct BoundedHorizon {
  SegNo segno = 0;  ///< recycle_horizon()'s answer
  HorizonBound bound = HorizonBound::kMinSize;
};

/// recycle_horizon() and the bound it sits at; max_size wins where both bounds are equal.
BoundedHorizon recycle_horizon_bounded(SegNo redo_segno, std::uint64_t segment_size_bytes,
                                       std::uint64_t min_size_bytes, std::uint64_t max_size_bytes,
                                       double distance_bytes);

}  // namespace walseg
