// Small helpers shared by the walseg subcommands: size parsing for options, statistics.
// Thread-safety: pure functions; call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "walseg/config.h"
#include "walseg/latency_summary.h"

namespace walseg::tool {

/// Parses a size option ("16MB", "8kB", "1.5MB", "0x100000", "4096") with the settings
/// parser's unit code (guc_value.h: units B, kB, MB, GB, TB, case-sensitive, multiplier 1024,
/// fractions rounded to whole bytes). The rule for every size option of the tool: a number
/// without a unit is bytes, whatever the base unit of a setting of the same name
/// (`--segment-size 2048` is 2048 bytes, `-c walseg.segment_size=2048` is 2048 kB). A leading
/// zero ("010"), nan, negative values and values outside [min_bytes, max_bytes] are refused,
/// before the caller allocates or creates anything by the size. Returns bytes; throws
/// std::invalid_argument naming the option, the reason and the valid range (a usage error:
/// exit status 2).
std::uint64_t parse_size_option(const std::string& option, const std::string& text, std::uint64_t min_bytes = 0,
                                std::uint64_t max_bytes = UINT64_MAX);

/// parse_size_option for a segment size: also a power of two from 1MB to 1GB, else
/// std::invalid_argument naming the option, the bytes read and the unit rule.
std::uint64_t parse_segment_size_option(const std::string& option, const std::string& text);

/// The --help text of a size option: `what`, then the units and the bytes rule above, so
/// that every size option states it the same way.
std::string size_option_help(const std::string& what);

/// Parses an init method name exactly as walseg.init_method spells it; throws
/// std::invalid_argument listing the valid names.
InitMethod parse_method_option(const std::string& text);

/// Order statistics over samples (microseconds), the library's nearest rank
/// (walseg/latency_summary.h); the sample vector is sorted in place.
using Summary = SampleSummary;
Summary summarize(std::vector<double>& samples);

/// "16MB"-style rendering of a byte count (exact units only, else bytes).
std::string format_size(std::uint64_t bytes);

}  // namespace walseg::tool
