// LatencyRecorder: counts and order statistics of one kind of event's duration, for the
// segment manager's observability (creations, fills, fsyncs, stalls ...).
//
// Keeps the count, total and maximum exactly, and the most recent kReservoirSize samples for
// percentiles, so memory stays bounded however long the process runs.
// Thread-safety: none; the owner serialises access (the segment manager holds its mutex).
#pragma once

#include <cstdint>
#include <vector>

namespace walseg {

/// Summary of one recorder. Durations in microseconds.
struct LatencySummary {
  std::uint64_t count = 0;
  double total_us = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
};

class LatencyRecorder {
 public:
  static constexpr std::size_t kReservoirSize = 4096;
  void add(double us);
  /// p50/p99 over the retained recent samples; count, total and max over all.
  LatencySummary summary() const;

 private:
  std::vector<double> recent_;
  std::size_t next_ = 0;
  std::uint64_t count_ = 0;
  double total_ = 0;
  double max_ = 0;
};

}  // namespace walseg
