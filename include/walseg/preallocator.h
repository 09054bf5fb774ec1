// The preallocator's step: which future segment the pool makes next, and the paced fill that
// prepares it. One implementation for both hosts: the segment manager's background thread
// (segment_manager.h) and the PostgreSQL extension's worker (contrib/walseg/preallocator.c).
// The hosts differ only in what they pass in: where the writer's position comes from (segment
// switches, or PostgreSQL's insert position), how far ahead they may go (walseg.max_size, or
// PostgreSQL's recycle horizon), how a wait is interrupted, and how the prepared segment is
// installed (segment_install.h; PostgreSQL's under ControlFileLock).
//
// A step: next_job(view) names the first segment missing from position + 1 ..
// min(position + target, last_allowed); prepare_paced() prepares it (PreparedSegment::prepare)
// with the FillPacer's wait before each chunk of a writing fill. The host installs it.
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

/// The next segment to prepare, or nullopt when the pool is full or at its horizon.
std::optional<SegNo> next_job(const PoolView& view);

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

/// Prepares the segment `name` whose first byte is `target` (PreparedSegment::prepare with
/// opts, stamp) and, before each chunk of a writing fill, waits as the host's pacer says
/// (hooks.pacer and hooks.position, read afresh each time; sleeping through hooks.wait).
/// Throws FillCancelled, or walseg::Error as PreparedSegment::prepare.
PreparedSegment prepare_paced(Directory& dir, const std::string& name, Lsn target, std::uint64_t size_bytes,
                              AllocOptions opts, std::span<const std::byte> stamp, const FillHooks& hooks);

}  // namespace walseg
