// walseg bench's space estimate (bench_space.h): each phase's peak, from what it keeps.
#include "bench_space.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "walseg/auto_method.h"
#include "walseg/free_space.h"
#include "walseg/wal_format.h"

namespace walseg::tool {
namespace {

bool runs(const std::vector<std::string>& phases, const char* p) {
  return std::find(phases.begin(), phases.end(), p) != phases.end();
}

// "1.4GB", "85MB": rounded for a message (format_size prints exact units only).
std::string rough(std::uint64_t bytes) {
  constexpr std::uint64_t kGiB = 1024 * kMiB;
  const double b = static_cast<double>(bytes);
  if (bytes >= kGiB) return fmt::format("{:.1f}GB", b / static_cast<double>(kGiB));
  if (bytes >= kMiB) return fmt::format("{:.0f}MB", b / static_cast<double>(kMiB));
  return fmt::format("{:.0f}kB", b / 1024.0);
}

// create: every series keeps its --segments files until the run ends (they are what --keep
// keeps). sparse and none allocate nothing; every other method, both references and recycle's
// written segments hold the whole segment.
std::uint64_t create_bytes(const BenchSettings& s) {
  std::uint64_t full = 3;  // pg13_reference, pg15_reference, recycle
  for (InitMethod m : s.methods)
    if (m != InitMethod::kSparse && m != InitMethod::kNone) ++full;
  return full * static_cast<std::uint64_t>(s.segments) * s.segment_size;
}

// commit runs for a time, not a volume: what bounds it is recycling. The checkpointer retires
// every segment before the one a quarter written, so the retire distance is about a segment
// and the recycle horizon is walseg.min_size (at least 4 segments); add the pool and the
// segments being written and retired. An estimate, as the margin's reason says.
std::uint64_t commit_bytes(const BenchSettings& s) {
  const std::uint64_t min_segs = std::max<std::uint64_t>(4, s.config.min_size_bytes / s.segment_size);
  return (min_segs + static_cast<std::uint64_t>(s.config.prealloc_segments) + 3) * s.segment_size;
}

}  // namespace

std::uint64_t append_segments_ahead(const BenchSettings& s, std::uint64_t block_size_bytes) {
  const std::uint64_t commits =
      std::max<std::uint64_t>(1, s.write_bytes * static_cast<std::uint64_t>(s.segments) / s.write_size);
  // Record and data headers and alignment are under 64 bytes a record; page headers take up
  // to kLongPageHeaderBytes (a segment's first) of every walseg.block_size page.
  const std::uint64_t bs = block_size_bytes;
  const std::uint64_t wal_bytes = commits * (s.write_size + 64) / (bs - kLongPageHeaderBytes) * bs + bs;
  return wal_bytes / s.segment_size + 2;
}

SpaceNeed bench_space_need(const BenchSettings& s, const std::vector<std::string>& phases) {
  SpaceNeed need;
  if (runs(phases, "create")) need.create_bytes = create_bytes(s);
  const std::uint64_t pool = static_cast<std::uint64_t>(s.config.prealloc_segments);
  const std::uint64_t methods = s.methods.size();
  std::vector<std::pair<std::string, std::uint64_t>> peaks;
  // write: one segment per method and one recycled, all present in each round.
  if (runs(phases, "write")) peaks.emplace_back("write", (methods + 1) * s.segment_size);
  // switch: no more segments than it writes (boundaries, the recycled warm-up's 3 and the
  // first) plus the pool; one configuration at a time, each removed after it.
  if (runs(phases, "switch"))
    peaks.emplace_back("switch", (static_cast<std::uint64_t>(std::max(8, s.switch_boundaries)) + 4 + pool + 1) *
                                     s.switch_segment_size);
  // append: each row's segments, all made before it (walseg.max_size stops the pool there).
  if (runs(phases, "append"))
    peaks.emplace_back("append", append_segments_ahead(s, s.config.block_size_bytes) * s.segment_size);
  if (runs(phases, "commit")) peaks.emplace_back("commit", commit_bytes(s));
  // auto's probe, after the phases, beside the create phase's files.
  if (runs(phases, "create") && runs(phases, "write"))
    peaks.emplace_back("auto's probe", std::size(kCandidateOrder) * kProbeFileBytes);
  for (const auto& [phase, bytes] : peaks)
    if (bytes > need.peak_bytes) {
      need.peak_bytes = bytes;
      need.peak_phase = phase;
    }
  need.margin_bytes = (need.create_bytes + need.peak_bytes) * kSpaceMarginPercent / 100 + kSpaceMarginBytes;
  return need;
}

void check_free_space(const SpaceNeed& need, std::uint64_t free_bytes, const std::string& dir) {
  std::vector<std::string> parts;
  if (need.create_bytes > 0) parts.push_back(fmt::format("{} of create-phase segments, kept until the end", rough(need.create_bytes)));
  if (need.peak_bytes > 0) parts.push_back(fmt::format("{} at most for {} beside them", rough(need.peak_bytes), need.peak_phase));
  require_free_space(fmt::format("this run ({})", fmt::join(parts, ", and ")), dir, free_bytes,
                     need.create_bytes + need.peak_bytes, need.margin_bytes,
                     fmt::format("a margin of {}% + {} (metadata, xfs's speculative preallocation)", kSpaceMarginPercent,
                                 rough(kSpaceMarginBytes)),
                     "free some space, give another --dir, or make the run smaller (--segments, --segment-size, "
                     "--methods, --phases)");
}

}  // namespace walseg::tool
