// Integer and seconds options (number_options.h).
#include "number_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace walseg::tool {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "1 .. 100000"; with a hex value also its hex form, so that the bound is comparable to what
// was typed.
std::string range_text(std::uint64_t min, std::uint64_t max, bool hex) {
  std::string s = fmt::format("{} .. {}", min, max);
  if (hex) s += fmt::format(" (0x{:X} .. 0x{:X})", min, max);
  return s;
}

enum class Digits { kOk, kInvalid, kOverflow };

// The number that `digits` spell in `base`.
Digits accumulate(const std::string& digits, int base, std::uint64_t* out) {
  if (digits.empty()) return Digits::kInvalid;
  std::uint64_t v = 0;
  bool overflow = false;
  for (char c : digits) {
    const int d = hex_digit(c);
    if (d < 0 || d >= base) return Digits::kInvalid;
    const auto b = static_cast<std::uint64_t>(base), u = static_cast<std::uint64_t>(d);
    if (v > (UINT64_MAX - u) / b) overflow = true;
    v = v * b + u;
  }
  *out = v;
  return overflow ? Digits::kOverflow : Digits::kOk;
}

}  // namespace

std::string parse_integer(const std::string& text, std::uint64_t min, std::uint64_t max,
                          std::uint64_t* value) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string digits = hex ? text.substr(2) : text;
  std::uint64_t v = 0;
  const Digits d = accumulate(digits, hex ? 16 : 10, &v);
  if (d == Digits::kInvalid)
    return fmt::format("invalid value \"{}\": expected a decimal number, or hexadecimal after 0x, "
                       "in {}",
                       text, range_text(min, max, false));
  if (!hex && digits.size() > 1 && digits[0] == '0') {
    const std::size_t nonzero = digits.find_first_not_of('0');
    const std::string rest = nonzero == std::string::npos ? "0" : digits.substr(nonzero);
    return fmt::format("invalid value \"{}\": a leading zero is ambiguous (C reads it as octal); "
                       "write {} for decimal or 0x{} for hexadecimal (as in segment file names)",
                       text, rest, rest);
  }
  if (d == Digits::kOverflow || v < min || v > max)
    return fmt::format("{} is out of range: valid values are {}", text, range_text(min, max, hex));
  *value = v;
  return "";
}

CLI::Validator integer_in(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) {
        std::uint64_t v = 0;
        std::string err = parse_integer(text, min, max, &v);
        if (err.empty()) text = std::to_string(v);
        return err;
      },
      fmt::format("{}..{}", min, max));  // the form is said once, in every command's help footer
}

// Why `text` is not seconds in the range, or "".
std::string check_seconds(const std::string& text, double min, bool min_inclusive, double max,
                          const std::string& range) {
  // strtod alone would take "nan", "inf" and hex floats ("0x1p3"): only decimal digits, a
  // point, an exponent and signs are seconds.
  const bool plain = text.find_first_not_of("0123456789.eE+-") == std::string::npos &&
                     text.find_first_of("0123456789") != std::string::npos;
  char* end = nullptr;
  errno = 0;
  const double v = plain ? std::strtod(text.c_str(), &end) : 0;
  const bool ok = plain && end == text.c_str() + text.size() && errno != ERANGE && std::isfinite(v) &&
                  (min_inclusive ? v >= min : v > min) && v <= max;
  return ok ? "" : fmt::format("invalid value \"{}\": expected seconds, {}", text, range);
}

CLI::Validator file_named() {
  return CLI::Validator(
      [](std::string& value) { return value.empty() ? std::string("an empty value names no file") : std::string(); },
      "FILE");
}

namespace {
CLI::Validator refuse_empty(std::string message) {
  return CLI::Validator([message](std::string& value) { return value.empty() ? message : std::string(); }, "");
}
}  // namespace

CLI::Validator value_given() {
  return refuse_empty("an empty value is not a value: leave the option out to use its default");
}

CLI::Validator dir_given() { return refuse_empty("an empty directory name: give a directory (. for the current one)"); }

CLI::Validator list_items_given() {
  return CLI::Validator(
      [](std::string& value) {
        const bool empty_item = value.empty() || value.front() == ',' || value.back() == ',' ||
                                value.find(",,") != std::string::npos;
        return empty_item ? std::string("an empty value is not a value: leave the option out to use its default, "
                                        "or name each item between the commas")
                          : std::string();
      },
      "");
}

std::vector<std::string> split_list(const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (const std::string& v : values)
    for (std::size_t at = 0; at <= v.size();) {
      const std::size_t end = std::min(v.find(',', at), v.size());
      items.push_back(v.substr(at, end - at));
      at = end + 1;
    }
  return items;
}

CLI::Validator seconds_in(double min, bool min_inclusive, double max) {
  const std::string range = min_inclusive ? fmt::format("{} .. {}", min, max)
                                          : fmt::format("greater than {} and at most {}", min, max);
  return CLI::Validator(
      [=](std::string& text) { return check_seconds(text, min, min_inclusive, max, range); },
      min_inclusive ? fmt::format("{}..{}", min, max) : fmt::format("(>{})..{}", min, max));  // the error says it in words
}

}  // namespace walseg::tool
