// Unit tests for include/walseg/guc_value.h: PostgreSQL's rules for booleans, numbers with
// units, rounding of fractional values, and SHOW's choice of unit.
#define BOOST_TEST_MODULE guc_value
#include <boost/test/unit_test.hpp>

#include <limits>

#include "walseg/guc_value.h"

using namespace walseg::guc;

namespace {
std::int64_t int_of(std::string_view text, Unit base) {
  auto p = parse_int(text, base);
  BOOST_TEST_REQUIRE(p.value.has_value(), "expected \"" << text << "\" to parse");
  return *p.value;
}
bool int_fails(std::string_view text, Unit base) { return !parse_int(text, base).value; }
}  // namespace

BOOST_AUTO_TEST_SUITE(booleans)

BOOST_AUTO_TEST_CASE(every_postgresql_spelling_and_unique_prefix_parses) {
  for (auto t : {"on", "ON", "true", "tRuE", "t", "tr", "yes", "y", "ye", "1"})
    BOOST_TEST((parse_bool(t) == std::optional<bool>(true)), t);
  for (auto f : {"off", "OFF", "of", "false", "f", "fal", "no", "n", "N", "0"})
    BOOST_TEST((parse_bool(f) == std::optional<bool>(false)), f);
}

BOOST_AUTO_TEST_CASE(ambiguous_or_foreign_words_are_not_booleans) {
  for (auto s : {"", "o", "onn", "offf", "truex", "yess", "2", "01", "10", " on", "on ", "enable"})
    BOOST_TEST(!parse_bool(s).has_value(), "\"" << s << "\"");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(integers)

BOOST_AUTO_TEST_CASE(number_without_unit_is_in_the_base_unit) {
  BOOST_TEST(int_of("16384", Unit::kKilobytes) == 16384);
  BOOST_TEST(int_of("8192", Unit::kBytes) == 8192);
  BOOST_TEST(int_of("80", Unit::kMegabytes) == 80);
  BOOST_TEST(int_of("-1", Unit::kNone) == -1);
}

BOOST_AUTO_TEST_CASE(memory_units_convert_with_multiplier_1024) {
  BOOST_TEST(int_of("16MB", Unit::kKilobytes) == 16384);
  BOOST_TEST(int_of("16MB", Unit::kBytes) == 16 * 1024 * 1024);
  BOOST_TEST(int_of("1GB", Unit::kMegabytes) == 1024);
  BOOST_TEST(int_of("2TB", Unit::kKilobytes) == std::int64_t{2} << 30);
  BOOST_TEST(int_of("8kB", Unit::kBytes) == 8192);
  BOOST_TEST(int_of("2048B", Unit::kKilobytes) == 2);
}

BOOST_AUTO_TEST_CASE(time_units_convert_to_the_base_unit) {
  BOOST_TEST(int_of("1s", Unit::kMilliseconds) == 1000);
  BOOST_TEST(int_of("2min", Unit::kSeconds) == 120);
  BOOST_TEST(int_of("1h", Unit::kMinutes) == 60);
  BOOST_TEST(int_of("1d", Unit::kMilliseconds) == 86'400'000);
  BOOST_TEST(int_of("1500us", Unit::kMilliseconds) == 2);  // 1.5 rounds half to even
  BOOST_TEST(int_of("2500us", Unit::kMilliseconds) == 2);
}

BOOST_AUTO_TEST_CASE(whitespace_around_number_and_unit_is_allowed) {
  BOOST_TEST(int_of("16 MB", Unit::kKilobytes) == 16384);
  BOOST_TEST(int_of("  16MB  ", Unit::kKilobytes) == 16384);
  BOOST_TEST(int_of("\t5\t", Unit::kNone) == 5);
}

BOOST_AUTO_TEST_CASE(hex_and_octal_are_read_as_strtol_base_0_does) {
  BOOST_TEST(int_of("0x10", Unit::kNone) == 16);
  BOOST_TEST(int_of("0x10kB", Unit::kBytes) == 16384);
  BOOST_TEST(int_of("010", Unit::kNone) == 8);
  BOOST_TEST(int_of("0", Unit::kNone) == 0);
  BOOST_TEST(int_of("010.5", Unit::kNone) == 10);  // re-read as decimal, 10.5 rounds to even
}

BOOST_AUTO_TEST_CASE(fractional_value_rounds_to_the_next_smaller_unit_first) {
  BOOST_TEST(int_of("1.5MB", Unit::kKilobytes) == 1536);
  BOOST_TEST(int_of("1.5MB", Unit::kBytes) == 1536 * 1024);
  // 1.0001MB is 1048680.9 bytes; rounded to whole kB first, it is exactly 1MB.
  BOOST_TEST(int_of("1.0001MB", Unit::kBytes) == 1024 * 1024);
  BOOST_TEST(int_of("0.5kB", Unit::kBytes) == 512);
  BOOST_TEST(int_of("1536B", Unit::kKilobytes) == 2);  // B has no smaller unit: rint(1.5)
  BOOST_TEST(int_of("1.5s", Unit::kMilliseconds) == 1500);
  BOOST_TEST(int_of("1e3", Unit::kNone) == 1000);
  BOOST_TEST(int_of(".5GB", Unit::kMegabytes) == 512);
  BOOST_TEST(int_of("2.5", Unit::kNone) == 2);
  BOOST_TEST(int_of("3.5", Unit::kNone) == 4);
}

BOOST_AUTO_TEST_CASE(values_beyond_32_bits_keep_every_bit) {
  BOOST_TEST(int_of("4294967296", Unit::kKilobytes) == std::int64_t{4294967296});
  BOOST_TEST(int_of("9223372036854775807", Unit::kNone) == std::numeric_limits<std::int64_t>::max());
  BOOST_TEST(int_of("-9223372036854775808", Unit::kNone) == std::numeric_limits<std::int64_t>::min());
  BOOST_TEST(int_of("9007199254740993", Unit::kBytes) == std::int64_t{9007199254740993});
}

// ---- error paths: each checks the outcome and the hint given ----

BOOST_AUTO_TEST_CASE(units_are_case_sensitive_and_wrong_case_gets_the_units_hint) {
  for (auto s : {"16mb", "16Mb", "16KB", "16M", "16kb", "16 mB", "1gb", "16MiB"}) {
    auto p = parse_int(s, Unit::kKilobytes);
    BOOST_TEST(!p.value.has_value(), s);
    BOOST_TEST(p.hint == R"(Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".)");
  }
}

BOOST_AUTO_TEST_CASE(time_unit_on_a_memory_setting_is_rejected_with_memory_hint) {
  auto p = parse_int("5s", Unit::kKilobytes);
  BOOST_TEST(!p.value.has_value());
  BOOST_TEST(p.hint.find("\"kB\"") != std::string::npos);
  auto t = parse_int("5MB", Unit::kMilliseconds);
  BOOST_TEST(!t.value.has_value());
  BOOST_TEST(t.hint == R"(Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".)");
}

BOOST_AUTO_TEST_CASE(unit_on_a_unitless_setting_is_rejected_without_hint) {
  auto p = parse_int("5MB", Unit::kNone);
  BOOST_TEST(!p.value.has_value());
  BOOST_TEST(p.hint.empty());
}

BOOST_AUTO_TEST_CASE(garbage_and_empty_text_are_rejected) {
  for (auto s : {"", " ", "abc", "-", ".", "16 MB x", "1,5MB", "08", "0x", "1e", "inf", "nan"})
    BOOST_TEST(int_fails(s, Unit::kKilobytes), "\"" << s << "\"");
}

BOOST_AUTO_TEST_CASE(overflowing_64_bits_is_rejected_not_wrapped) {
  for (auto s : {"9223372036854775808", "18446744073709551616", "99999999999999999999999",
                 "8589934592TB", "1e30"}) {
    auto p = parse_int(s, Unit::kKilobytes);
    BOOST_TEST(!p.value.has_value(), s);
    BOOST_TEST(p.hint == "Value exceeds integer range.", s);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(reals)

BOOST_AUTO_TEST_CASE(decimal_and_exponent_forms_parse) {
  BOOST_TEST(*parse_real("0.5", Unit::kNone).value == 0.5);
  BOOST_TEST(*parse_real("-2.5e-1", Unit::kNone).value == -0.25);
  BOOST_TEST(*parse_real("3", Unit::kNone).value == 3.0);
  BOOST_TEST(*parse_real(" 1.5 ", Unit::kNone).value == 1.5);
}

BOOST_AUTO_TEST_CASE(units_convert_with_next_smaller_unit_rounding) {
  BOOST_TEST(*parse_real("1.5min", Unit::kSeconds).value == 90.0);
  BOOST_TEST(*parse_real("250ms", Unit::kSeconds).value == 0.25);
  BOOST_TEST(*parse_real("0.0001ms", Unit::kSeconds).value == 0.0);  // rounded to whole us
  BOOST_TEST(*parse_real("1.5kB", Unit::kKilobytes).value == 1.5);
}

BOOST_AUTO_TEST_CASE(non_numbers_infinity_and_bad_units_are_rejected) {
  for (auto s : {"", "x", "inf", "nan", "1e999", "0x10", "1.5 S", "1.5xs"})
    BOOST_TEST(!parse_real(s, Unit::kMilliseconds).value.has_value(), "\"" << s << "\"");
  BOOST_TEST(parse_real("1.5 S", Unit::kMilliseconds).hint.find("\"min\"") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(display)

BOOST_AUTO_TEST_CASE(show_uses_the_largest_unit_that_divides_exactly) {
  BOOST_TEST(format_int(16384, Unit::kKilobytes) == "16MB");
  BOOST_TEST(format_int(1536, Unit::kKilobytes) == "1536kB");
  BOOST_TEST(format_int(1024, Unit::kMegabytes) == "1GB");
  BOOST_TEST(format_int(8192, Unit::kBytes) == "8kB");
  BOOST_TEST(format_int(1000, Unit::kBytes) == "1000B");
  BOOST_TEST(format_int(60000, Unit::kMilliseconds) == "1min");
  BOOST_TEST(format_int(1500, Unit::kMilliseconds) == "1500ms");
  BOOST_TEST(format_int(std::int64_t{2} << 30, Unit::kKilobytes) == "2TB");
}

BOOST_AUTO_TEST_CASE(zero_negative_and_unitless_values_print_as_plain_numbers) {
  BOOST_TEST(format_int(0, Unit::kKilobytes) == "0");
  BOOST_TEST(format_int(-1, Unit::kKilobytes) == "-1");
  BOOST_TEST(format_int(7, Unit::kNone) == "7");
}

BOOST_AUTO_TEST_CASE(reals_print_in_a_whole_unit_when_one_exists) {
  BOOST_TEST(format_real(90.0, Unit::kSeconds) == "90s");
  BOOST_TEST(format_real(120.0, Unit::kSeconds) == "2min");
  BOOST_TEST(format_real(0.25, Unit::kSeconds) == "0.25s");
  BOOST_TEST(format_real(0.5, Unit::kNone) == "0.5");
}

BOOST_AUTO_TEST_CASE(printed_values_parse_back_to_the_same_value) {
  for (std::int64_t v : {1, 3, 1023, 1024, 1536, 16384, 1048576, 2147483647})
    for (Unit u : {Unit::kBytes, Unit::kKilobytes, Unit::kMegabytes, Unit::kMilliseconds,
                   Unit::kSeconds, Unit::kMinutes})
      BOOST_TEST(int_of(format_int(v, u), u) == v);
}

BOOST_AUTO_TEST_CASE(messages_show_values_with_a_spaced_base_unit) {
  BOOST_TEST(with_unit(std::int64_t{4294967296}, Unit::kKilobytes) == "4294967296 kB");
  BOOST_TEST(with_unit(std::int64_t{7}, Unit::kNone) == "7");
  BOOST_TEST(with_unit(0.5, Unit::kSeconds) == "0.5 s");
}

BOOST_AUTO_TEST_SUITE_END()
