// The preallocator's step: which future segment the pool makes next, and the paced fill that
// prepares it. One implementation for both hosts: the segment manager's background thread
// (segment_manager.h) and the PostgreSQL extension's worker (contrib/walseg/preallocator.c).
// The hosts differ only in what they pass in: where the writer's position comes from (segment
// switches, or PostgreSQL's insert position), how far ahead they may go (walseg.max_size, or
// PostgreSQL's recycle horizon), how a wait is interrupted, and how the prepared segment is
// installed (segment_install.h; PostgreSQL's under ControlFileLock).
//
// A step: next_job(view) names the first segment missing from position + 1 ..
// min(position + target, last_allowed) and how its fill is paced; prepare_paced() prepares it
// (PreparedSegment::prepare) with the FillPacer's wait before each chunk of a writing fill. The
// host installs it.
//
// Pacing, and why only at the target: one fill at a time, each paced to end at 60% of the time
// until its own segment is needed, drains the pool. A fill of the segment d ahead takes 0.6 d
// segments' time, so the next one starts 0.4 d + 1 ahead: the pool shrinks towards one segment
// whatever the target (issue 18: 34 segments PostgreSQL made itself during `pgbench -i -s 10`).
// So a fill is paced only when it completes the pool (every other wanted segment is ready),
// and only until the writer enters its next segment: from then on the pool is short of two
// and the fill goes on at full speed, as every fill does while the pool is behind.
//
// Not for: installing, or keeping books of what exists (the hosts do). Thread-safety: a step
// runs on the host's thread; the hooks are called on it. Lifetime: view and hooks are used
// during the call only.
#pragma once

#include <cerrno>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "walseg/allocator.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/fill_pacer.h"
#include "walseg/segment_install.h"
#include "walseg/segment_name.h"

namespace walseg {

/// What the host sees of its pool.
struct PoolView {
  SegNo position = 0;      ///< the segment the writer is in (or last handed out)
  int target = 0;          ///< segments wanted ready after it (walseg.prealloc_segments)
  SegNo last_allowed = 0;  ///< the highest segment the host may make now (its horizon)
  std::function<bool(SegNo)> present;  ///< the segment exists or is being made
};

/// A segment to prepare and how its fill is paced.
struct PoolJob {
  SegNo segno = 0;  ///< the first segment missing from the pool
  /// The fill may be paced while the writer is before this segment (the pacer's deadline is
  /// its first byte): position + 1 when segno completes the pool. nullopt: the pool is behind,
  /// fill at full speed.
  std::optional<SegNo> pace_until;
};

/// The next job, or nullopt when the pool is full or at its horizon.
std::optional<PoolJob> next_job(const PoolView& view);

/// The host's side of a paced fill.
struct FillHooks {
  std::function<Lsn()> position;            ///< the writer's position now, for the pacer
  std::function<FillPacer()> pacer;         ///< the host's pacer as it is now (a copy)
  /// Sleeps up to `seconds` (the host may cut it short to look again); returns false when the
  /// fill must stop (shutdown, cancel): the fill then throws FillCancelled.
  std::function<bool(double seconds)> wait;
};

/// Thrown by prepare_paced when a hook says stop; the temporary file is gone by then.
struct FillCancelled : Error {
  FillCancelled() : Error(ECANCELED, "create", "", "segment creation cancelled") {}
};

/// Prepares the segment `name` (PreparedSegment::prepare with opts, stamp) and, before each
/// chunk of a writing fill, waits as the host's pacer says for a segment needed at
/// `pace_until` (a job's pace_until as an LSN; hooks.pacer and hooks.position read afresh each
/// time; sleeping through hooks.wait). Without pace_until nothing is waited for, but
/// hooks.wait(0) is still asked at every chunk, so a stop is seen. Throws FillCancelled, or
/// walseg::Error as PreparedSegment::prepare.
PreparedSegment prepare_paced(Directory& dir, const std::string& name, std::optional<Lsn> pace_until,
                              std::uint64_t size_bytes, AllocOptions opts, std::span<const std::byte> stamp,
                              const FillHooks& hooks);

}  // namespace walseg
