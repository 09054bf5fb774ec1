// Unit tests for include/walseg/guc_registry.h over a test-only table that has one setting of
// every type (including real and a time unit, which walseg's own table does not use yet) and
// every context.
#define BOOST_TEST_MODULE guc_registry
#include <boost/test/unit_test.hpp>

#include <array>
#include <stdexcept>

#include "walseg/guc_registry.h"

using namespace walseg::guc;

namespace {

const char* not_forbidden(std::string_view v) {
  return v == "forbidden" ? "must not be \"forbidden\"" : nullptr;
}
const char* even(std::int64_t v) { return v % 2 == 0 ? nullptr : "must be even"; }

constexpr EnumOption kColours[] = {{"red", 0}, {"green", 1}, {"blue", 2}};

const std::array<SettingDef, 7> kTestSettings = {{
    {"test.flag", Context::kUser, "A Boolean.", BoolSpec{true}},
    {"test.size", Context::kPostmaster, "A size in kB, even.",
     IntSpec{.default_value = 1024, .min = 2, .max = 1048576, .unit = Unit::kKilobytes,
             .check = even}},
    {"test.delay", Context::kSighup, "A time in ms.",
     IntSpec{.default_value = 200, .min = 0, .max = 10000, .unit = Unit::kMilliseconds}},
    {"test.ratio", Context::kUser, "A real in s.",
     RealSpec{.default_value = 0.5, .min = 0.0, .max = 100.0, .unit = Unit::kSeconds}},
    {"test.factor", Context::kSighup, "A unitless real.",
     RealSpec{.default_value = 1.0, .min = -1.0, .max = 1.0}},
    {"test.label", Context::kUser, "A string.", StringSpec{"none", not_forbidden}},
    {"test.colour", Context::kSighup, "An enum.", EnumSpec{kColours, 1}},
}};

Registry make() { return Registry(kTestSettings, "test."); }

void ok(std::optional<ConfigError> err) {
  BOOST_TEST(!err.has_value(), (err ? err->to_string() : ""));
}
ConfigError fails(std::optional<ConfigError> err) {
  BOOST_TEST_REQUIRE(err.has_value());
  return *err;
}

}  // namespace

BOOST_AUTO_TEST_CASE(defaults_are_effective_with_source_default) {
  Registry r = make();
  BOOST_TEST(r.get_bool("test.flag"));
  BOOST_TEST(r.get_int("test.size") == 1024);
  BOOST_TEST(r.get_real("test.ratio") == 0.5);
  BOOST_TEST(r.get_string("test.label") == "none");
  BOOST_TEST(r.get_enum("test.colour") == 1);
  BOOST_TEST((r.source_of("test.size") == Source::kDefault));
}

BOOST_AUTO_TEST_CASE(show_row_has_pg_settings_columns) {
  Registry r = make();
  ok(r.set("test.size", "4MB", Source::kFile, Phase::kStartup, Origin{"a.conf", 7}));
  auto row = *r.show("TEST.SIZE");
  BOOST_TEST(row.name == "test.size");
  BOOST_TEST(row.value == "4MB");
  BOOST_TEST(row.setting == "4096");
  BOOST_TEST(row.unit == "kB");
  BOOST_TEST(row.vartype == "integer");
  BOOST_TEST(row.source == "configuration file");
  BOOST_TEST(row.sourcefile == "a.conf");
  BOOST_TEST(row.sourceline == 7);
  BOOST_TEST(row.context == "postmaster");
  BOOST_TEST(row.description == "A size in kB, even.");
  BOOST_TEST(row.min_val == "2");
  BOOST_TEST(row.max_val == "1048576");
  auto colour = *r.show("test.colour");
  BOOST_TEST(colour.vartype == "enum");
  BOOST_TEST(colour.enum_values == (std::vector<std::string>{"red", "green", "blue"}));
  BOOST_TEST(r.show_all().size() == kTestSettings.size());
  BOOST_TEST(!r.show("test.nothing").has_value());
}

BOOST_AUTO_TEST_CASE(names_are_case_insensitive_and_values_keep_their_case) {
  Registry r = make();
  ok(r.set("Test.Label", "/mnt/MB/x", Source::kFile, Phase::kStartup));
  BOOST_TEST(r.get_string("TEST.LABEL") == "/mnt/MB/x");
  BOOST_TEST(r.owns_name("TEST.anything"));
  BOOST_TEST(!r.owns_name("testing.x"));
}

BOOST_AUTO_TEST_CASE(enum_values_match_case_insensitively_and_show_canonically) {
  Registry r = make();
  ok(r.set("test.colour", "BLUE", Source::kFile, Phase::kStartup));
  BOOST_TEST(r.get_enum("test.colour") == 2);
  BOOST_TEST(r.show("test.colour")->value == "blue");
}

BOOST_AUTO_TEST_CASE(time_and_real_values_take_units) {
  Registry r = make();
  ok(r.set("test.delay", "1.5s", Source::kFile, Phase::kStartup));
  BOOST_TEST(r.get_int("test.delay") == 1500);
  BOOST_TEST(r.show("test.delay")->value == "1500ms");
  ok(r.set("test.ratio", "1.5min", Source::kFile, Phase::kStartup));
  BOOST_TEST(r.get_real("test.ratio") == 90.0);
  BOOST_TEST(r.show("test.ratio")->value == "90s");
  ok(r.set("test.factor", "-0.25", Source::kFile, Phase::kStartup));
  BOOST_TEST(r.get_real("test.factor") == -0.25);
}

BOOST_AUTO_TEST_CASE(higher_priority_source_wins_whatever_the_order) {
  Registry r = make();
  ok(r.set("test.delay", "300", Source::kCommandLine, Phase::kStartup));
  ok(r.set("test.delay", "400", Source::kFile, Phase::kStartup));
  BOOST_TEST(r.get_int("test.delay") == 300);
  BOOST_TEST((r.source_of("test.delay") == Source::kCommandLine));
  BOOST_TEST(r.show("test.delay")->sourcefile.empty());
}

BOOST_AUTO_TEST_CASE(set_then_reset_returns_to_the_value_before_set) {
  Registry r = make();
  ok(r.set("test.flag", "off", Source::kFile, Phase::kStartup, Origin{"f.conf", 2}));
  ok(r.set_session("test.flag", "on"));
  BOOST_TEST(r.get_bool("test.flag"));
  BOOST_TEST(r.show("test.flag")->source == "session");
  ok(r.reset("test.flag"));
  BOOST_TEST(!r.get_bool("test.flag"));
  BOOST_TEST(r.show("test.flag")->sourcefile == "f.conf");
}

BOOST_AUTO_TEST_CASE(reset_all_drops_every_session_value) {
  Registry r = make();
  ok(r.set_session("test.label", "x"));
  ok(r.set_session("test.ratio", "2"));
  r.reset_all();
  BOOST_TEST(r.get_string("test.label") == "none");
  BOOST_TEST(r.get_real("test.ratio") == 0.5);
}

BOOST_AUTO_TEST_CASE(reload_changes_sighup_settings_under_a_session_value) {
  Registry r = make();
  ok(r.set("test.delay", "100", Source::kFile, Phase::kReload));
  BOOST_TEST(r.get_int("test.delay") == 100);
  ok(r.set_session("test.label", "mine"));
  ok(r.set("test.label", "file", Source::kFile, Phase::kReload));
  BOOST_TEST(r.get_string("test.label") == "mine");  // SET outranks the file
  ok(r.reset("test.label"));
  BOOST_TEST(r.get_string("test.label") == "file");
}

BOOST_AUTO_TEST_CASE(reload_of_unchanged_postmaster_value_is_accepted_silently) {
  Registry r = make();
  ok(r.set("test.size", "2MB", Source::kFile, Phase::kStartup));
  ok(r.set("test.size", "2048", Source::kFile, Phase::kReload));
  BOOST_TEST(r.get_int("test.size") == 2048);
}

BOOST_AUTO_TEST_CASE(reload_of_postmaster_value_hidden_by_command_line_is_not_an_error) {
  Registry r = make();
  ok(r.set("test.size", "8MB", Source::kCommandLine, Phase::kStartup));
  ok(r.set("test.size", "4MB", Source::kFile, Phase::kReload));
  BOOST_TEST(r.get_int("test.size") == 8192);
}

BOOST_AUTO_TEST_CASE(cross_check_hook_is_run_on_request) {
  Registry plain = make();
  BOOST_TEST(plain.cross_check().empty());
  Registry checked(kTestSettings, "test.", [](const Registry& reg) {
    std::vector<ConfigError> errors;
    if (reg.get_int("test.delay") > 1000) errors.push_back(ConfigError{.message = "too slow"});
    return errors;
  });
  ok(checked.set("test.delay", "2s", Source::kFile, Phase::kStartup));
  BOOST_TEST(checked.cross_check().size() == 1u);
}

// ---- error paths: outcome (nothing changes) and message text ----

BOOST_AUTO_TEST_CASE(unknown_name_is_rejected) {
  Registry r = make();
  auto e = fails(r.set("test.nope", "1", Source::kFile, Phase::kStartup));
  BOOST_TEST((e.kind == ErrorKind::kUnknownParameter));
  BOOST_TEST(e.message == "unrecognized configuration parameter \"test.nope\"");
}

BOOST_AUTO_TEST_CASE(bad_boolean_is_rejected_and_value_kept) {
  Registry r = make();
  auto e = fails(r.set("test.flag", "o", Source::kFile, Phase::kStartup));
  BOOST_TEST(e.message == "parameter \"test.flag\" requires a Boolean value");
  BOOST_TEST(r.get_bool("test.flag"));
  BOOST_TEST((r.source_of("test.flag") == Source::kDefault));
}

BOOST_AUTO_TEST_CASE(bad_unit_gets_invalid_value_message_and_units_hint) {
  Registry r = make();
  auto e = fails(r.set("test.size", "4mb", Source::kFile, Phase::kStartup));
  BOOST_TEST((e.kind == ErrorKind::kInvalidValue));
  BOOST_TEST(e.parameter == "test.size");
  BOOST_TEST(e.message == "invalid value for parameter \"test.size\": \"4mb\"");
  BOOST_TEST(e.hint == R"(Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".)");
  auto t = fails(r.set("test.delay", "1sec", Source::kFile, Phase::kStartup));
  BOOST_TEST(t.hint == R"(Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".)");
}

BOOST_AUTO_TEST_CASE(out_of_range_integer_names_the_range_in_base_units) {
  Registry r = make();
  auto e = fails(r.set("test.size", "2GB", Source::kFile, Phase::kStartup));
  BOOST_TEST((e.kind == ErrorKind::kOutOfRange));
  BOOST_TEST(e.message == "2097152 kB is outside the valid range for parameter \"test.size\" "
                          "(2 kB .. 1048576 kB)");
  auto t = fails(r.set("test.delay", "-1", Source::kFile, Phase::kStartup));
  BOOST_TEST(t.message == "-1 ms is outside the valid range for parameter \"test.delay\" (0 ms .. 10000 ms)");
  BOOST_TEST(r.get_int("test.size") == 1024);
}

BOOST_AUTO_TEST_CASE(integer_check_hook_failure_is_reported) {
  Registry r = make();
  auto e = fails(r.set("test.size", "3", Source::kFile, Phase::kStartup));
  BOOST_TEST((e.kind == ErrorKind::kCheckFailed));
  BOOST_TEST(e.message == "parameter \"test.size\" must be even");
}

BOOST_AUTO_TEST_CASE(bad_real_requires_a_numeric_value_and_range_is_checked) {
  Registry r = make();
  auto e = fails(r.set("test.ratio", "fast", Source::kFile, Phase::kStartup));
  BOOST_TEST(e.message == "parameter \"test.ratio\" requires a numeric value");
  auto u = fails(r.set("test.ratio", "2 parsecs", Source::kFile, Phase::kStartup));
  BOOST_TEST(u.hint.find("\"min\"") != std::string::npos);
  auto g = fails(r.set("test.ratio", "2min", Source::kFile, Phase::kStartup));
  BOOST_TEST(g.message == "120 s is outside the valid range for parameter \"test.ratio\" (0 s .. 100 s)");
  auto f = fails(r.set("test.factor", "1.5", Source::kFile, Phase::kStartup));
  BOOST_TEST(f.message == "1.5 is outside the valid range for parameter \"test.factor\" (-1 .. 1)");
}

BOOST_AUTO_TEST_CASE(string_check_hook_failure_is_reported) {
  Registry r = make();
  auto e = fails(r.set("test.label", "forbidden", Source::kFile, Phase::kStartup));
  BOOST_TEST(e.message == "parameter \"test.label\" must not be \"forbidden\"");
  BOOST_TEST(r.get_string("test.label") == "none");
}

BOOST_AUTO_TEST_CASE(bad_enum_value_lists_the_available_values) {
  Registry r = make();
  auto e = fails(r.set("test.colour", "purple", Source::kFile, Phase::kStartup));
  BOOST_TEST(e.message == "invalid value for parameter \"test.colour\": \"purple\"");
  BOOST_TEST(e.hint == "Available values: red, green, blue.");
}

BOOST_AUTO_TEST_CASE(set_of_sighup_setting_at_run_time_cannot_be_changed_now) {
  Registry r = make();
  auto e = fails(r.set_session("test.delay", "5"));
  BOOST_TEST((e.kind == ErrorKind::kCannotChange));
  BOOST_TEST(e.message == "parameter \"test.delay\" cannot be changed now");
  auto reset = fails(r.reset("test.delay"));
  BOOST_TEST(reset.message == "parameter \"test.delay\" cannot be changed now");
}

BOOST_AUTO_TEST_CASE(set_of_postmaster_setting_at_run_time_needs_a_restart) {
  Registry r = make();
  auto e = fails(r.set_session("test.size", "4MB"));
  BOOST_TEST(e.message == "parameter \"test.size\" cannot be changed without restarting the server");
  BOOST_TEST(r.get_int("test.size") == 1024);
}

BOOST_AUTO_TEST_CASE(reload_of_changed_postmaster_setting_is_refused) {
  Registry r = make();
  auto e = fails(r.set("test.size", "4MB", Source::kFile, Phase::kReload, Origin{"a.conf", 3}));
  BOOST_TEST(e.message == "parameter \"test.size\" cannot be changed without restarting the server");
  BOOST_TEST(r.get_int("test.size") == 1024);
  BOOST_TEST(!r.has_value_from("test.size", Source::kFile));
}

BOOST_AUTO_TEST_CASE(invalid_value_is_reported_before_context) {
  Registry r = make();
  auto e = fails(r.set_session("test.size", "4mb"));
  BOOST_TEST((e.kind == ErrorKind::kInvalidValue));
}

BOOST_AUTO_TEST_CASE(reading_a_setting_as_the_wrong_type_is_a_logic_error) {
  Registry r = make();
  BOOST_CHECK_THROW(r.get_bool("test.size"), std::logic_error);
  BOOST_CHECK_THROW(r.get_int("test.colour"), std::logic_error);
  BOOST_CHECK_THROW(r.get_enum("test.size"), std::logic_error);
  BOOST_CHECK_THROW(r.get_int("test.missing"), std::logic_error);
}

BOOST_AUTO_TEST_CASE(broken_tables_are_refused_at_construction) {
  static const SettingDef dup[] = {{"t.a", Context::kUser, "", BoolSpec{true}},
                                   {"T.A", Context::kUser, "", BoolSpec{true}}};
  BOOST_CHECK_THROW(Registry(dup, "t."), std::logic_error);
  static const SettingDef outside[] = {{"other.a", Context::kUser, "", BoolSpec{true}}};
  BOOST_CHECK_THROW(Registry(outside, "t."), std::logic_error);
  static const SettingDef bad_default[] = {
      {"t.n", Context::kUser, "", IntSpec{.default_value = 5, .min = 0, .max = 4}}};
  BOOST_CHECK_THROW(Registry(bad_default, "t."), std::logic_error);
}
