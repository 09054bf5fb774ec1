// Small helpers shared by the walseg subcommands: size parsing for options, statistics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "walseg/config.h"

namespace walseg::tool {

/// Parses an option size such as "16MB", "8kB", "1GB" or "4096" (bytes), with PostgreSQL's
/// case-sensitive units B, kB, MB, GB, TB. Throws std::invalid_argument naming the option.
std::uint64_t parse_size_option(const std::string& option, const std::string& text);

/// parse_size_option for a segment size: also a power of two from 1MB to 1GB, else
/// std::invalid_argument naming the option (a usage error: exit status 2).
std::uint64_t parse_segment_size_option(const std::string& option, const std::string& text);

/// Parses an init method name exactly as walseg.init_method spells it; throws
/// std::invalid_argument listing the valid names.
InitMethod parse_method_option(const std::string& text);

/// Order statistics over samples (microseconds); the sample vector is sorted in place.
struct Summary {
  std::size_t n = 0;
  double p10 = 0, median = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
};
Summary summarize(std::vector<double>& samples);

/// "16MB"-style rendering of a byte count (exact units only, else bytes).
std::string format_size(std::uint64_t bytes);

}  // namespace walseg::tool
