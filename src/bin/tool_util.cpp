// Helpers shared by the subcommands (tool_util.h).
#include "tool_util.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "walseg/segment_name.h"

namespace walseg::tool {

std::uint64_t parse_size_option(const std::string& option, const std::string& text) {
  std::size_t pos = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
  if (pos == 0 || pos > 18)
    throw std::invalid_argument(fmt::format("invalid value for {}: \"{}\"", option, text));
  std::uint64_t n = std::stoull(text.substr(0, pos));
  std::string unit = text.substr(pos);
  if (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  static const std::pair<const char*, int> kUnits[] = {
      {"", 0}, {"B", 0}, {"kB", 10}, {"MB", 20}, {"GB", 30}, {"TB", 40}};
  for (const auto& [name, shift] : kUnits) {
    if (unit != name) continue;
    if (shift > 0 && n > (~std::uint64_t{0} >> shift))
      throw std::invalid_argument(fmt::format("value for {} is out of range: \"{}\"", option, text));
    return n << shift;
  }
  throw std::invalid_argument(fmt::format(
      "invalid value for {}: \"{}\"; valid units are \"B\", \"kB\", \"MB\", \"GB\", \"TB\"",
      option, text));
}

std::uint64_t parse_segment_size_option(const std::string& option, const std::string& text) {
  const std::uint64_t bytes = parse_size_option(option, text);
  if (!is_valid_segment_size(bytes))
    throw std::invalid_argument(fmt::format("invalid value for {}: \"{}\": a segment size is a power of two "
                                            "from 1MB to 1GB",
                                            option, text));
  return bytes;
}

InitMethod parse_method_option(const std::string& text) {
  if (auto m = enum_from_name<InitMethod>(text, kInitMethodNames)) return *m;
  throw std::invalid_argument(fmt::format("invalid init method \"{}\"; valid methods are: {}",
                                          text, fmt::join(kInitMethodNames, ", ")));
}

Summary summarize(std::vector<double>& s) {
  Summary r;
  r.n = s.size();
  if (s.empty()) return r;
  std::sort(s.begin(), s.end());
  // Nearest-rank percentiles: the value below which the given share of samples falls.
  auto pct = [&](double p) {
    std::size_t rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(s.size())));
    return s[std::min(s.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  r.p10 = pct(0.1);
  r.median = pct(0.5);
  r.p90 = pct(0.9);
  r.p99 = pct(0.99);
  r.p999 = pct(0.999);
  r.max = s.back();
  r.mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  return r;
}

std::string format_size(std::uint64_t bytes) {
  static const std::pair<const char*, int> kUnits[] = {{"TB", 40}, {"GB", 30}, {"MB", 20}, {"kB", 10}};
  for (const auto& [name, shift] : kUnits)
    if (bytes >= (std::uint64_t{1} << shift) && bytes % (std::uint64_t{1} << shift) == 0)
      return fmt::format("{}{}", bytes >> shift, name);
  return fmt::format("{}B", bytes);
}

}  // namespace walseg::tool
