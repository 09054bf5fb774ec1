// Free space before a measurement (include/walseg/free_space.h).
#include "walseg/free_space.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "walseg/error.h"

namespace walseg {

namespace {
constexpr std::uint64_t kMiB = 1024 * 1024;
std::uint64_t mib_up(std::uint64_t bytes) { return bytes / kMiB + (bytes % kMiB != 0); }
}  // namespace

std::uint64_t bench_peak_bytes(std::size_t methods, std::uint64_t segment_size_bytes) {
  return std::max<std::uint64_t>(methods, 1) * segment_size_bytes;
}

void require_free_space(std::string_view what, const std::string& dir, std::uint64_t free_bytes,
                        std::uint64_t peak_bytes, std::uint64_t margin_bytes, std::string_view margin_why,
                        std::string_view advice) {
  // Saturating: a margin near UINT64_MAX must refuse, not wrap round to a small need.
  const std::uint64_t need = peak_bytes > UINT64_MAX - margin_bytes ? UINT64_MAX : peak_bytes + margin_bytes;
  if (free_bytes >= need) return;
  throw make_error(ENOSPC, "check free space", dir,
                   fmt::format("not enough free space in \"{}\": {} needs {} MB ({} MB for its files at once and "
                               "{} MB left for {}), but only {} MB are free{}{}",
                               dir, what, mib_up(need), mib_up(peak_bytes), mib_up(margin_bytes), margin_why,
                               free_bytes / kMiB, advice.empty() ? "" : ": ", advice));
}

}  // namespace walseg
