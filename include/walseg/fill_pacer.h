// FillPacer: how fast a background fill of a future segment may go, so that its I/O disturbs
// the commits that run meanwhile as little as possible and the segment is still ready in time.
// One rule for both preallocators: the segment manager's thread (segment_manager.h) and the
// PostgreSQL extension's worker (contrib/walseg/preallocator.c) feed it the writer's position
// and ask it how long to wait before each chunk.
//
// Why pace: a background fill that writes a segment as fast as it can makes every commit's
// fdatasync that lands meanwhile wait behind its I/O (p99.9 commit latency 15-20x worse in our
// measurements, src/segment/preallocator.cpp). So the chunk after `done` of `total` bytes is
// due at fill_due_share(done, total) (10% + 50% x done/total) of the time until the segment is
// expected to be needed, counted from the fill's start.
//
// The rate is the writer's position in bytes per second, an exponential average of samples
// taken at most every kSamplePeriodS: it rises fast (kRiseS) and falls slowly (kFallS), since
// filling too slowly costs far more (a commit then waits for a segment, or PostgreSQL
// zero-fills one inside XLogWrite holding WALWriteLock) than filling a bit fast. The time
// until a segment is needed is its distance in bytes from the position over the rate, capped
// at kMaxDeadlineS (the rate decays towards 0 while the WAL is idle, and a fill should not then
// be stretched over minutes); a segment needed within kNearS is filled at full speed, and
// without a known rate nothing is paced.
//
// Not for: sleeping or cancelling (the host waits, in its own way). Thread-safety: none; the
// host serialises observe() and wait_s(). Pure: time is passed in, in seconds of any monotonic
// clock.
#pragma once

#include <cstdint>

#include "walseg/segment_name.h"

namespace walseg {

/// The pacing rule's share of the time until the segment is needed at which the chunk after
/// `done` of `total` bytes (total > 0) is due: 10% at the start (the job appears when the
/// writer switches segments, and a first chunk at once would land in the device queue right
/// when the first commit in the new segment is flushed), 60% at the end (half the time, so a
/// faster writer still finds it ready).
constexpr double fill_due_share(std::uint64_t done, std::uint64_t total) {
  return 0.1 + 0.5 * static_cast<double>(done < total ? done : total) / static_cast<double>(total);
}

class FillPacer {
 public:
  static constexpr double kSamplePeriodS = 0.1;  ///< samples closer than this are deferred
  static constexpr double kRiseS = 0.3;          ///< time constant when the rate rises
  static constexpr double kFallS = 3.0;          ///< time constant when it falls
  static constexpr double kMaxDeadlineS = 10.0;  ///< cap of the time until a segment is needed
  static constexpr double kNearS = 0.1;          ///< a segment needed within this: no waiting

  /// Takes the writer's position (an LSN) seen at now_s into the rate. The first call only
  /// records the position and the first sample is then taken as it is; samples closer than
  /// kSamplePeriodS to the last are deferred (the next one spans both); a position that goes
  /// backwards, or a clock that does, starts over with no rate.
  void observe(Lsn position, double now_s) noexcept;

  /// Seconds to wait before the fill writes its next chunk (0: write it now). elapsed_s: since
  /// the fill began; done, total: bytes of the segment written so far and its size; position:
  /// the writer's position now; target: the first byte of the segment being filled.
  double wait_s(double elapsed_s, std::uint64_t done, std::uint64_t total, Lsn position, Lsn target) const noexcept;

  /// The rate estimate, bytes per second (0: unknown).
  double bytes_per_s() const noexcept { return bytes_per_s_; }

 private:
  double bytes_per_s_ = 0;
  Lsn last_ = 0;
  double last_s_ = 0;
  bool primed_ = false;
};

}  // namespace walseg
