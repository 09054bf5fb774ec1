// contrib/walseg/fill_pacing.h: the preallocator's fill pacing as pure computation (no clock,
// no I/O), so that its rules are unit tested (fill_pacing_test.cpp); bridge_segment.cpp
// applies them between the chunks of a fill. Never included from C.
//
// Why pace: the library's preallocator measured that a background fill writing a segment as
// fast as it can makes concurrent commits' fdatasync wait behind its I/O (p99.9 15-20x worse
// buffered, still worse with O_DIRECT); see src/segment/preallocator.cpp. The same rule here:
// small chunks (kPacedFillChunkBytes), spread over half the time until PostgreSQL is
// expected to need the segment, starting at 10% of it, and no pacing without a known rate.
//
// Differences from the library, both because the worker only sees PostgreSQL's insert
// position (GetXLogInsertRecPtr), not segment switches as they happen:
//  - the rate is the insert position's progress in bytes/s, sampled at most every 100 ms,
//    rather than the interval between switches: it follows a burst after an idle period
//    within a few samples (an interval average would first take in the whole idle gap);
//  - the time left is measured from the position in bytes to the target's first byte, so a
//    round that starts late in the current segment does not assume a whole segment's time;
//  - the deadline is capped (kMaxDeadlineS): the rate decays towards 0 while WAL is idle, and
//    a fill should not then be stretched over minutes; at 16 MB per 5 s the fill's I/O is
//    small anyway.
// Thread-safety: plain functions over the caller's values.
#pragma once

#include <cstdint>

#include "bridge.h"
#include "walseg/segment_manager.h"

namespace walseg::bridge {

/// Rate samples are taken at most this often: the worker's poll interval.
inline constexpr double kRateSamplePeriodS = 0.1;
/// Time constants of the rate average. It rises fast (0.3 s: about the library's 0.7 old +
/// 0.3 new per 100 ms sample) and falls slowly (3 s), since filling too slowly costs far more
/// (PostgreSQL then zero-fills the segment itself inside XLogWrite, holding WALWriteLock)
/// than filling a bit fast.
inline constexpr double kRateRiseS = 0.3;
inline constexpr double kRateFallS = 3.0;

/// Upper bound of the deadline, seconds (see the file comment).
inline constexpr double kMaxDeadlineS = 10.0;
/// "Near": a segment needed within this many seconds (or already) is filled at full speed.
inline constexpr double kNearS = 0.1;

/// Takes the insert position `insert_lsn` seen at `now_s` (seconds of a monotonic clock) into
/// the estimate r.bytes_per_s (an exponential average of bytes/s). The first call only records
/// the position; the first sample is then taken as it is (as the library's first interval).
/// Samples closer than kRateSamplePeriodS to the last are deferred (not lost: the next one
/// spans both). A position that goes backwards starts over with no rate.
void rate_observe(WalsegRate& r, std::uint64_t insert_lsn, double now_s) noexcept;

/// Seconds to wait before the fill writes its next chunk; 0: write it now.
///   elapsed_s    since the fill began;
///   done, total  bytes of the segment written so far, and its size;
///   insert_lsn   PostgreSQL's insert position now;
///   target_lsn   the first byte of the segment being filled;
///   bytes_per_s  the rate estimate (<= 0: unknown, no pacing).
/// The chunk after `done` bytes is due at deadline x fill_due_share(done, total) (the
/// library's rule, segment_manager.h: 10% + 50% x done/total) after the start, where deadline = elapsed_s + (target_lsn - insert_lsn) /
/// bytes_per_s, capped at kMaxDeadlineS: at a steady rate the deadline stays put, when the
/// rate rises it moves closer and the fill speeds up. No wait when the segment is near.
double fill_wait_s(double elapsed_s, std::uint64_t done, std::uint64_t total,
                   std::uint64_t insert_lsn, std::uint64_t target_lsn, double bytes_per_s) noexcept;

}  // namespace walseg::bridge
