// Setting values as text: units, and parsing and printing of booleans and numbers the way
// PostgreSQL's GUC code does it (parse_bool, parse_int, parse_real, and SHOW's unit choice).
//
// Rules (PostgreSQL's, documented in its "Setting Parameters" chapter):
//  * Memory units are B, kB, MB, GB, TB; time units are us, ms, s, min, h, d. Unit names are
//    case-sensitive ("16mb", "16KB", "16M" are invalid) and the memory multiplier is 1024.
//  * A number without a unit is in the setting's base unit (see Unit); whitespace is allowed
//    before and after the number and between number and unit ("16 MB" is 16MB).
//  * Integers may be written in hex (0x10) or octal (010 is 8), as strtol with base 0 reads
//    them in PostgreSQL. A fractional number ("1.5MB", "1e3") is converted to the base unit
//    after being rounded to a whole number of the next smaller unit (1.5MB = 1536kB; "0.5kB"
//    = 512B), and the result is rounded to a whole base unit, half to even as rint() does.
//  * Integer results are 64-bit and are range-checked by the caller (guc_registry.h) before
//    anyone narrows them; a value beyond 64 bits fails with "Value exceeds integer range.".
//  * Booleans: on/off, true/false, yes/no, 1/0, case-insensitive, and any unique prefix of
//    those words ("t", "of"; "o" alone is ambiguous).
//  * Not accepted (also not by PostgreSQL): inf, nan, a unit on a setting that has none.
//    Accepted by PostgreSQL through strtod but not here: hex fractions ("0x1.8") and hex
//    reals; real settings are decimal only.
//
// Not for: which setting has which unit or range (guc_definitions.h), the settings file syntax
// (guc_file.h).
// Thread-safety: pure functions. Returned strings own their storage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace walseg::guc {

/// A setting's base unit: the unit a number written without one is read in, and the unit
/// the registry stores. kNone: a plain number that takes no unit.
enum class Unit { kNone, kBytes, kKilobytes, kMegabytes, kMilliseconds, kSeconds, kMinutes };

bool is_memory_unit(Unit u);
bool is_time_unit(Unit u);
/// "B", "kB", "MB", "ms", "s", "min"; "" for kNone.
std::string_view unit_name(Unit u);
/// The hint PostgreSQL gives for an unknown unit, e.g.
/// `Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".`; "" for kNone.
std::string_view valid_units_hint(Unit u);

/// The result of parsing one value: `value` when it parsed; otherwise `hint` says why when
/// there is more to say than "invalid value" (it may be empty).
template <typename T>
struct Parsed {
  std::optional<T> value;
  std::string hint;
};

/// PostgreSQL's parse_bool: see the rules above. nullopt if not a Boolean.
std::optional<bool> parse_bool(std::string_view text);

/// PostgreSQL's parse_int, widened to 64 bits: the number (with optional unit) converted to
/// `base`. Range checking against a setting's bounds is the caller's job.
Parsed<std::int64_t> parse_int(std::string_view text, Unit base);

/// PostgreSQL's parse_real: a decimal number with optional unit, converted to `base`.
Parsed<double> parse_real(std::string_view text, Unit base);

/// SHOW's form of an integer: a positive value in the largest unit that divides it exactly
/// ("16MB" for 16384 with base kB); zero and negatives as a plain number, as PostgreSQL does.
std::string format_int(std::int64_t value, Unit base);

/// SHOW's form of a real: "%g" in the largest unit giving a whole number, else the base unit.
std::string format_real(double value, Unit base);

/// A value with its base unit for messages: "4294967296 kB", or "7" for kNone.
std::string with_unit(std::int64_t value, Unit base);
std::string with_unit(double value, Unit base);

}  // namespace walseg::guc
