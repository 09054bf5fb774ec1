// Helpers shared by the subcommands (tool_util.h).
#include "tool_util.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <regex>

#include <fmt/format.h>

#include "walseg/guc_value.h"
#include "walseg/segment_name.h"

namespace walseg::tool {

namespace {

// "010" (with optional spaces and sign before it): a zero followed by a digit.
bool has_leading_zero(const std::string& text) {
  std::size_t i = text.find_first_not_of(" \t\n\v\f\r+-");
  return i != std::string::npos && i + 1 < text.size() && text[i] == '0' && text[i + 1] >= '0' &&
         text[i + 1] <= '9';
}

}  // namespace

std::uint64_t parse_size_option(const std::string& option, const std::string& text, std::uint64_t min_bytes,
                                std::uint64_t max_bytes) {
  // The settings parser reads "010" as octal 8, as PostgreSQL does; every integer option of
  // the tool refuses a leading zero instead (number_options.h), and so does a size.
  if (has_leading_zero(text)) {
    const std::size_t nonzero = text.find_first_not_of(" \t\n\v\f\r+-0");
    const std::string digits = nonzero == std::string::npos ? "0" : text.substr(nonzero);
    throw std::invalid_argument(fmt::format(
        "invalid value for {}: \"{}\": a leading zero is ambiguous (settings read it as octal); "
        "write {} for decimal or 0x{} for hexadecimal",
        option, text, digits, digits));
  }
  const guc::Parsed<std::int64_t> p = guc::parse_int(text, guc::Unit::kBytes);
  if (!p.value)
    throw std::invalid_argument(fmt::format("invalid value for {}: \"{}\"{}{}", option, text,
                                            p.hint.empty() ? "" : ". ", p.hint));
  if (*p.value < 0)
    throw std::invalid_argument(fmt::format("invalid value for {}: \"{}\": a size is not negative", option, text));
  // The settings parser also takes " 5", "1e3" and "1.5" (rounded to 2 bytes), as PostgreSQL's
  // parse_int does; an option is typed by hand, so those are more likely slips than meant
  // ("2 MB", a space before the unit, is as postgresql.conf writes it).
  // Hex with a unit too, as the settings take it and as the leading-zero refusal suggests
  // (new-user trial 18: "write 0x10MB for hexadecimal", and 0x10MB was then refused).
  static const std::regex kPlain(R"((0x[0-9A-Fa-f]+( ?(B|kB|MB|GB|TB))?|[0-9]+( ?B)?|[0-9]+(\.[0-9]+)? ?(kB|MB|GB|TB)))");
  if (!std::regex_match(text, kPlain))
    throw std::invalid_argument(fmt::format(
        "invalid value for {}: \"{}\": give a whole number of bytes (decimal, or hexadecimal with 0x) or a number "
        "with a unit, a fraction only with kB and larger (e.g. 1536, 1.5kB or 2 MB), without spaces around it",
        option, text));
  const auto bytes = static_cast<std::uint64_t>(*p.value);
  if (bytes < min_bytes || bytes > max_bytes)
    throw std::invalid_argument(fmt::format("invalid value for {}: \"{}\" is {} bytes, out of range: valid sizes are "
                                            "{} .. {} bytes",
                                            option, text, bytes, min_bytes, max_bytes));
  return bytes;
}

std::uint64_t parse_segment_size_option(const std::string& option, const std::string& text) {
  const std::uint64_t bytes = parse_size_option(option, text);
  if (!is_valid_segment_size(bytes)) {
    // The unit rule explains only a number given without a unit ("2048" is not 2048 kB here).
    const bool unitless = !text.empty() && std::isxdigit(static_cast<unsigned char>(text.back())) &&
                          text.back() != 'B';
    throw std::invalid_argument(fmt::format(
        "invalid value for {}: \"{}\" is {} byte{}, and a segment size is a power of two from 1MB to 1GB{}", option,
        text, bytes, bytes == 1 ? "" : "s",
        unitless ? fmt::format(" ({}, unlike walseg.segment_size, reads a number without a unit as bytes)", option)
                 : ""));
  }
  return bytes;
}

std::string size_option_help(const std::string& what) {
  return what + "; a number without a unit is bytes";  // the units: every command's help footer
}

InitMethod parse_method_option(const std::string& text) {
  if (auto m = enum_from_name<InitMethod>(text, kInitMethodNames)) return *m;
  throw std::invalid_argument(fmt::format("invalid init method \"{}\"; valid methods are: {}",
                                          text, fmt::join(kInitMethodNames, ", ")));
}

Summary summarize(std::vector<double>& s) { return summarize_latencies(s); }

std::string format_size(std::uint64_t bytes) {
  static const std::pair<const char*, int> kUnits[] = {{"TB", 40}, {"GB", 30}, {"MB", 20}, {"kB", 10}};
  for (const auto& [name, shift] : kUnits)
    if (bytes >= (std::uint64_t{1} << shift) && bytes % (std::uint64_t{1} << shift) == 0)
      return fmt::format("{}{}", bytes >> shift, name);
  return fmt::format("{}B", bytes);
}

}  // namespace walseg::tool
