// Units, and parsing and printing of setting values (include/walseg/guc_value.h).
#include "walseg/guc_value.h"

#include <charconv>
#include <cmath>
#include <span>

#include <fmt/format.h>

namespace walseg::guc {

namespace {

struct UnitEntry {
  std::string_view name;
  std::int64_t factor;  ///< size of the unit in the family's smallest unit (B or us)
};

// Largest first: printing picks the first unit that divides the value, and parsing rounds a
// fractional value to the entry after the one written (the next smaller unit).
constexpr UnitEntry kMemoryUnits[] = {
    {"TB", std::int64_t{1} << 40}, {"GB", std::int64_t{1} << 30}, {"MB", std::int64_t{1} << 20},
    {"kB", std::int64_t{1} << 10}, {"B", 1}};
constexpr UnitEntry kTimeUnits[] = {{"d", 86'400'000'000},  {"h", 3'600'000'000},
                                    {"min", 60'000'000},    {"s", 1'000'000},
                                    {"ms", 1'000},          {"us", 1}};

constexpr std::string_view kIntegerRangeHint = "Value exceeds integer range.";

std::span<const UnitEntry> family(Unit u) {
  if (is_memory_unit(u)) return kMemoryUnits;
  if (is_time_unit(u)) return kTimeUnits;
  return {};
}

std::int64_t base_factor(Unit u) {
  switch (u) {
    case Unit::kBytes: return 1;
    case Unit::kKilobytes: return std::int64_t{1} << 10;
    case Unit::kMegabytes: return std::int64_t{1} << 20;
    case Unit::kMilliseconds: return 1'000;
    case Unit::kSeconds: return 1'000'000;
    case Unit::kMinutes: return 60'000'000;
    case Unit::kNone: return 1;
  }
  return 1;
}

// C isspace() in the "C" locale, which is what PostgreSQL's parsers skip.
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A number at the start of a value. Integers are kept exactly (up to 2^64, else `overflow`)
// so that 64-bit settings do not go through a double; fractional forms are doubles.
struct Number {
  bool integral = true;
  bool negative = false;
  bool overflow = false;
  std::uint64_t magnitude = 0;
  double real = 0;
  std::size_t end = 0;
};

// Integer part as strtol with base 0 reads it: 0x hex, leading-0 octal, else decimal.
std::size_t scan_integer(std::string_view s, std::size_t i, Number& n) {
  unsigned radix = 10;
  if (i + 2 < s.size() && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') &&
      hex_value(s[i + 2]) >= 0) {
    radix = 16;
    i += 2;
  } else if (i < s.size() && s[i] == '0') {
    radix = 8;
  }
  std::size_t start = i;
  for (; i < s.size(); ++i) {
    int d = radix == 16 ? hex_value(s[i]) : (is_digit(s[i]) ? s[i] - '0' : -1);
    if (d < 0 || d >= static_cast<int>(radix)) break;
    n.real = n.real * radix + d;
    if (__builtin_mul_overflow(n.magnitude, radix, &n.magnitude) ||
        __builtin_add_overflow(n.magnitude, static_cast<unsigned>(d), &n.magnitude))
      n.overflow = true;
  }
  return i == start ? std::string_view::npos : i;
}

// Decimal digits, optional fraction, optional exponent (only when digits follow the 'e').
std::optional<Number> scan_fraction(std::string_view s, std::size_t start, Number n) {
  std::size_t i = start, digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && is_digit(s[j])) {
      while (j < s.size() && is_digit(s[j])) ++j;
      i = j;
    }
  }
  auto [ptr, ec] = std::from_chars(s.data() + start, s.data() + i, n.real);
  if (ec != std::errc() || ptr != s.data() + i) return std::nullopt;  // ERANGE: no hint
  n.integral = false;
  n.end = i;
  return n;
}

std::optional<Number> scan_number(std::string_view s, bool allow_integer_forms) {
  Number n;
  std::size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) n.negative = s[i++] == '-';
  if (allow_integer_forms) {
    std::size_t end = scan_integer(s, i, n);
    // As PostgreSQL: a decimal point or exponent after the integer means "read it again as
    // a decimal real" (so "010.5" is 10.5 although "010" is 8).
    bool fractional = end == std::string_view::npos
                          ? (i < s.size() && s[i] == '.')
                          : (end < s.size() && (s[end] == '.' || s[end] == 'e' || s[end] == 'E'));
    if (!fractional) {
      if (end == std::string_view::npos) return std::nullopt;
      n.end = end;
      return n;
    }
    n.real = 0;
  }
  return scan_fraction(s, i, n);
}

// The unit text after the number: nullopt if there is garbage after it; "" if none.
std::optional<std::string_view> unit_text(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  std::size_t start = i;
  while (i < s.size() && !is_space(s[i])) ++i;
  std::string_view unit = s.substr(start, i - start);
  while (i < s.size() && is_space(s[i])) ++i;
  if (i != s.size()) return std::nullopt;
  return unit;
}

// Index of `name` in base's unit family, or -1.
int find_unit(Unit base, std::string_view name) {
  auto units = family(base);
  for (std::size_t k = 0; k < units.size(); ++k)
    if (units[k].name == name) return static_cast<int>(k);
  return -1;
}

// value written in units[k], converted to base and rounded to whole units[k + 1] first.
double to_base(double value, Unit base, int k) {
  if (k < 0) return value;
  auto units = family(base);
  double x = value * static_cast<double>(units[k].factor);
  if (static_cast<std::size_t>(k) + 1 < units.size()) {
    double next = static_cast<double>(units[k + 1].factor);
    x = std::rint(x / next) * next;
  }
  return x / static_cast<double>(base_factor(base));
}

// Number plus unit, the shared front half of parse_int and parse_real. On success `k` is the
// unit's index in the family (-1: no unit written).
std::optional<Number> number_and_unit(std::string_view text, Unit base, bool integer_forms,
                                      int& k, std::string& hint) {
  auto n = scan_number(text, integer_forms);
  if (!n) return std::nullopt;
  auto unit = unit_text(text, n->end);
  k = -1;
  if (unit && unit->empty()) return n;
  if (base == Unit::kNone) return std::nullopt;  // takes no unit; PostgreSQL gives no hint
  if (unit) k = find_unit(base, *unit);
  if (k < 0) {
    hint = valid_units_hint(base);
    return std::nullopt;
  }
  return n;
}

}  // namespace

bool is_memory_unit(Unit u) {
  return u == Unit::kBytes || u == Unit::kKilobytes || u == Unit::kMegabytes;
}
bool is_time_unit(Unit u) {
  return u == Unit::kMilliseconds || u == Unit::kSeconds || u == Unit::kMinutes;
}

std::string_view unit_name(Unit u) {
  switch (u) {
    case Unit::kBytes: return "B";
    case Unit::kKilobytes: return "kB";
    case Unit::kMegabytes: return "MB";
    case Unit::kMilliseconds: return "ms";
    case Unit::kSeconds: return "s";
    case Unit::kMinutes: return "min";
    case Unit::kNone: return "";
  }
  return "";
}

std::string_view valid_units_hint(Unit u) {
  if (is_memory_unit(u))
    return R"(Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".)";
  if (is_time_unit(u))
    return R"(Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".)";
  return "";
}

std::optional<bool> parse_bool(std::string_view text) {
  // A case-insensitive prefix of `word` of at least `min_len` characters.
  auto prefix_of = [&](std::string_view word, std::size_t min_len) {
    if (text.size() < min_len || text.size() > word.size()) return false;
    for (std::size_t i = 0; i < text.size(); ++i)
      if ((text[i] | 0x20) != word[i]) return false;
    return true;
  };
  if (text.empty()) return std::nullopt;
  if (prefix_of("true", 1) || prefix_of("yes", 1) || prefix_of("on", 2)) return true;
  if (prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2)) return false;
  if (text == "1") return true;
  if (text == "0") return false;
  return std::nullopt;
}

Parsed<std::int64_t> parse_int(std::string_view text, Unit base) {
  Parsed<std::int64_t> out;
  int k = -1;
  auto n = number_and_unit(text, base, true, k, out.hint);
  if (!n) return out;
  std::int64_t unit_factor = k < 0 ? base_factor(base) : family(base)[k].factor;
  if (n->integral && !n->overflow && unit_factor % base_factor(base) == 0) {
    // Exact path: no double in between, so 64-bit values keep every bit.
    __int128 v = static_cast<__int128>(n->magnitude) * (unit_factor / base_factor(base));
    if (n->negative) v = -v;
    if (v < INT64_MIN || v > INT64_MAX) {
      out.hint = kIntegerRangeHint;
      return out;
    }
    out.value = static_cast<std::int64_t>(v);
    return out;
  }
  double v = std::rint(to_base(n->negative ? -n->real : n->real, base, k));
  // 2^63 is exactly representable; anything at or beyond it does not fit.
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
    out.hint = kIntegerRangeHint;
    return out;
  }
  out.value = static_cast<std::int64_t>(v);
  return out;
}

Parsed<double> parse_real(std::string_view text, Unit base) {
  Parsed<double> out;
  int k = -1;
  auto n = number_and_unit(text, base, false, k, out.hint);
  if (!n) return out;
  double v = to_base(n->negative ? -n->real : n->real, base, k);
  if (!std::isfinite(v)) return out;
  out.value = v;
  return out;
}

std::string format_int(std::int64_t value, Unit base) {
  if (base == Unit::kNone || value <= 0) return fmt::format("{}", value);
  for (const auto& u : family(base)) {
    if (u.factor < base_factor(base)) break;
    std::int64_t ratio = u.factor / base_factor(base);
    if (value % ratio == 0) return fmt::format("{}{}", value / ratio, u.name);
  }
  return fmt::format("{}{}", value, unit_name(base));
}

std::string format_real(double value, Unit base) {
  if (base == Unit::kNone || value == 0) return fmt::format("{:g}", value);
  for (const auto& u : family(base)) {
    if (u.factor < base_factor(base)) break;
    double scaled = value / (static_cast<double>(u.factor) / static_cast<double>(base_factor(base)));
    if (std::rint(scaled) == scaled) return fmt::format("{:g}{}", scaled, u.name);
  }
  return fmt::format("{:g}{}", value, unit_name(base));
}

std::string with_unit(std::int64_t value, Unit base) {
  if (base == Unit::kNone) return fmt::format("{}", value);
  return fmt::format("{} {}", value, unit_name(base));
}

std::string with_unit(double value, Unit base) {
  if (base == Unit::kNone) return fmt::format("{:g}", value);
  return fmt::format("{:g} {}", value, unit_name(base));
}

}  // namespace walseg::guc
