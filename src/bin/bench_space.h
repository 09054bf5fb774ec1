// walseg bench: how much disk space a run needs, checked before anything is measured.
//
// A run that fills the filesystem fails in the middle of a phase with an ENOSPC naming a step
// of the library ("custom fill"), after minutes of work. The estimate here follows what each
// phase holds at its peak (bench_create.cpp, bench_write.cpp, ...), so bench can refuse up
// front and say what it needs and what is free. It is an upper bound for the files' allocated
// bytes (sparse and plain-append files are counted as their writes), plus a margin for what no
// phase controls: filesystem metadata, xfs's speculative preallocation beyond a growing file's
// end, a recycled segment rewritten on a copy-on-write filesystem.
//
// Not for: a guarantee. Other writers on the same filesystem can still fill it meanwhile, and
// ENOSPC is then reported as itself, as everywhere in walseg.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench.h"

namespace walseg::tool {

/// The margin added to the phases' peak: kSpaceMarginPercent of it plus kSpaceMarginBytes.
inline constexpr std::uint64_t kSpaceMarginPercent = 10;
inline constexpr std::uint64_t kSpaceMarginBytes = 32 * kMiB;

struct SpaceNeed {
  std::uint64_t create_bytes = 0;  ///< the create phase's files, kept until the run ends
  std::uint64_t peak_bytes = 0;    ///< the largest of the other phases (and auto's probe), at once
  std::string peak_phase;          ///< whose peak_bytes is ("" when none runs)
  std::uint64_t margin_bytes = 0;  ///< kSpaceMarginPercent of the two plus kSpaceMarginBytes
  std::uint64_t total() const { return create_bytes + peak_bytes + margin_bytes; }
};

/// The space a run of `phases` (names as --phases spells them) with settings `s` needs at its
/// peak, in bytes.
SpaceNeed bench_space_need(const BenchSettings& s, const std::vector<std::string>& phases);

/// Segments the append phase makes before each of its rows (every one its writer will write
/// into, so that none is made while it is timed); shared with bench_wal.cpp so the estimate
/// and the phase cannot disagree. `block_size_bytes`: walseg.block_size.
std::uint64_t append_segments_ahead(const BenchSettings& s, std::uint64_t block_size_bytes);

/// Throws walseg::Error(ENOSPC) (exit status 1) when `free_bytes` (statvfs f_bavail * f_frsize
/// of the scratch directory's filesystem) is less than `need.total()`: the library's check
/// (require_free_space, as walseg_bench() makes it), whose message says how much the run needs,
/// from what, how much is free, and here what makes a run smaller.
void check_free_space(const SpaceNeed& need, std::uint64_t free_bytes, const std::string& dir);

}  // namespace walseg::tool
