// Tests of the settings side of the `walseg` tool (src/bin/settings_options.cpp, cmd_show.cpp,
// cmd_check_config.cpp): --config, repeatable -c, `show` and `check-config`, run as a user
// would run them (tool_test_util.h); the tests are skipped when the tool has not been built.
#define BOOST_TEST_MODULE guc_tool
#include <boost/test/unit_test.hpp>

#include "tool_test_util.h"

using namespace walseg_test;
namespace fs = std::filesystem;

BOOST_FIXTURE_TEST_SUITE(tool, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(check_config_accepts_a_valid_file_and_says_so) {
  auto f = write("wal.conf", "walseg.segment_size = 32MB\nwalseg.recycle = off\n");
  auto r = run("check-config '" + f + "'");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.out == "configuration file \"" + f + "\" is valid (2 walseg settings set in it)\n");
}

BOOST_AUTO_TEST_CASE(show_all_gives_value_setting_unit_source_and_file_line) {
  auto f = write("wal.conf", "\nwalseg.segment_size = 32MB\n");
  auto r = run("show --config '" + f + "' -c walseg.recycle=off -c walseg.sync_method=fsync");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(contains(r.out, " name "));
  BOOST_TEST(contains(r.out, "(15 rows)"));
  BOOST_TEST(contains(r.out, "| 32MB "));
  BOOST_TEST(contains(r.out, "| 32768 "));
  BOOST_TEST(contains(r.out, "| configuration file | " + f + ":2 "));
  BOOST_TEST(contains(r.out, "| command line "));
  BOOST_TEST(contains(r.out, "| postmaster "));
}

BOOST_AUTO_TEST_CASE(show_one_setting_value_only_prints_what_show_prints) {
  auto r = run("show walseg.SEGMENT_SIZE --value-only -c walseg.segment_size=1GB -c walseg.min_size=2GB -c walseg.max_size=2GB");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.out == "1GB\n");
}

BOOST_AUTO_TEST_CASE(positional_file_after_c_options_is_not_swallowed) {
  auto f = write("wal.conf", "walseg.recycle = off\n");
  auto r = run("check-config -c walseg.sync_method=fsync '" + f + "'");
  BOOST_TEST(r.status == 0, r.err);
}

// ---- error paths: exit status and the messages ----

BOOST_AUTO_TEST_CASE(check_config_lists_every_error_and_exits_1) {
  auto f = write("wal.conf",
                 "walseg.segment_size = 16mb\nmethod_note = read committed\nwalseg.nope = 1\n"
                 "include 'missing.conf'\ninclude_if_exists 'maybe.conf'\n");
  auto r = run("check-config '" + f + "'");
  BOOST_TEST(r.status == 1);
  BOOST_TEST(contains(r.err, "ERROR:  invalid value for parameter \"walseg.segment_size\": \"16mb\" "
                             "(file \"" + f + "\", line 1)\nHINT:  Valid units for this parameter are "
                             "\"B\", \"kB\", \"MB\", \"GB\", and \"TB\"."), r.err);
  BOOST_TEST(contains(r.err, "ERROR:  syntax error in file \"" + f + "\" line 2, near token \"committed\""));
  BOOST_TEST(contains(r.err, "ERROR:  unrecognized configuration parameter \"walseg.nope\" in file \"" + f + "\" line 3"));
  BOOST_TEST(contains(r.err, "missing.conf\": No such file or directory"));
  BOOST_TEST(contains(r.err, "FATAL:  configuration file \"" + f + "\" contains errors"));
  BOOST_TEST(contains(r.out, "LOG:  skipping missing configuration file \"" + dir + "/maybe.conf\""));
}

BOOST_AUTO_TEST_CASE(check_config_without_a_file_is_a_usage_error) {
  auto r = run("check-config");
  BOOST_TEST(r.status == 2);
  BOOST_TEST(contains(r.err, "needs a settings file"));
}

BOOST_AUTO_TEST_CASE(bad_c_option_stops_any_command_with_the_reason) {
  auto r = run("show -c walseg.segment_size=16M");
  BOOST_TEST(r.status == 1);
  BOOST_TEST(contains(r.err, "walseg: invalid value for parameter \"walseg.segment_size\": \"16M\""), r.err);
}

// A name not accepted is a usage error, as README's exit status table says (it exited 1).
BOOST_AUTO_TEST_CASE(show_of_an_unknown_setting_is_a_usage_error) {
  auto r = run("show walseg.nope");
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.err == "walseg: unrecognized configuration parameter \"walseg.nope\" (walseg show all lists them)\n");
  r = run("show segment_size");  // the prefix forgotten: the hint -c gives
  BOOST_TEST(r.status == 2);
  BOOST_TEST(contains(r.err, "did you mean \"walseg.segment_size\"?"), r.err);
}

// A new user's trial: `-c segment_size=1MB` said only "unrecognized configuration parameter".
BOOST_AUTO_TEST_CASE(a_setting_without_its_prefix_is_refused_with_the_name_meant) {
  auto r = run("show -c segment_size=1MB");
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "unrecognized configuration parameter \"segment_size\""), r.err);
  BOOST_TEST(contains(r.err, "did you mean \"walseg.segment_size\"?"), r.err);
}

// The new-user trial: a WAL made with -c walseg.segment_size=1MB (or in append mode) refused
// every later write and create until the setting was given again, though its walseg.control
// says what it is, as pg_control gives wal_segment_size. Now those are the defaults; a
// setting given explicitly still wins, and one that contradicts the WAL is refused.
BOOST_AUTO_TEST_CASE(a_wals_control_file_gives_the_defaults_of_what_it_fixed) {
  const std::string small = dir + "/small", append = dir + "/append";
  BOOST_REQUIRE(run("write --dir '" + small + "' --records 5 -c walseg.segment_size=1MB").status == 0);
  auto r = run("write --dir '" + small + "' --records 5");
  BOOST_TEST(r.status == 0, r.err);
  r = run("create --dir '" + small + "' --method zero_write --start 5");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(fs::file_size(small + "/000000010000000000000005") == 1u << 20);
  r = run("recover --dir '" + small + "'");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(contains(r.out, "records: 10"), r.out);
  r = run("write --dir '" + small + "' --records 5 -c walseg.segment_size=16MB");
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "its WAL has 1MB segments (walseg.control), but walseg.segment_size is 16MB"), r.err);
  BOOST_REQUIRE(run("write --dir '" + append + "' --records 5 -c walseg.init_method=none").status == 0);
  r = run("write --dir '" + append + "' --records 5");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(fs::file_size(append + "/000000010000000000000001") < 16u << 20);  // still appended to
}

// The new-user trial: check-config printed a missing include (line 3 here) before the value
// errors of lines 1 and 2, and blamed the file for an error that came from -c.
BOOST_AUTO_TEST_CASE(check_config_lists_errors_in_line_order_and_blames_c_for_its_own) {
  auto f = write("a.conf", "walseg.segment_size = 3MB\nwalseg.recycle = maybe\ninclude 'missing.conf'\n"
                           "walseg.bogus = 1\n");
  auto r = run("check-config '" + f + "'");
  BOOST_TEST(r.status == 1);
  const auto l1 = r.err.find("line 1"), l2 = r.err.find("line 2"), l3 = r.err.find("line 3"), l4 = r.err.find("line 4");
  BOOST_TEST_REQUIRE((l1 != std::string::npos && l2 != std::string::npos && l3 != std::string::npos &&
                      l4 != std::string::npos), r.err);
  BOOST_TEST((l1 < l2 && l2 < l3 && l3 < l4), r.err);
  auto ok = write("ok.conf", "walseg.recycle = on\n");
  r = run("check-config '" + ok + "' -c walseg.min_size=1MB");
  BOOST_TEST(r.status == 1);
  BOOST_TEST(contains(r.err, "FATAL:  the -c settings contain errors"), r.err);
  BOOST_TEST(!contains(r.err, "configuration file \"" + ok + "\" contains errors"), r.err);
  // A -c with no value is -c's error too (the summary once found -c's errors by their text,
  // and this one's text did not match).
  r = run("check-config '" + ok + "' -c walseg.recycle");
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "-c walseg.recycle requires a value"), r.err);
  // Break-it round 23 L1: `-c ''` said "-c  requires a value", a gap where the name goes.
  const auto e = run("show all -c ''");
  BOOST_TEST(e.status != 0);
  BOOST_TEST(contains(e.err, "-c needs name=value, and was given an empty value"), e.err);
  BOOST_TEST(contains(r.err, "FATAL:  the -c settings contain errors"), r.err);
  BOOST_TEST(!contains(r.err, "configuration file \"" + ok + "\" contains errors"), r.err);
}

// New-user trial 15: a second --config ended in CLI11's "At Most 1 required but received 2".
// It is refused in words, with the include that reads both; one --config still works.
BOOST_AUTO_TEST_CASE(a_second_config_file_is_refused_in_words) {
  auto a = write("a.conf", "walseg.recycle = on\n"), b = write("b.conf", "walseg.recycle = off\n");
  for (const std::string& cmd : std::vector<std::string>{"check-config", "show walseg.recycle", "write --dir '" + a + ".d' --records 1"}) {
    auto r = run(cmd + " --config '" + a + "' --config '" + b + "'");
    BOOST_TEST(r.status == 2, cmd << ": " << r.err);
    BOOST_TEST(contains(r.err, "--config: given 2 times"), r.err);
    BOOST_TEST(contains(r.err, "put \"include '" + b + "'\" in \"" + a + "\""), r.err);
    BOOST_TEST(!contains(r.err, "At Most"), r.err);
  }
  BOOST_TEST(!fs::exists(a + ".d"));
  auto one = run("show walseg.recycle --config '" + a + "'");
  BOOST_TEST(one.status == 0, one.err);
  BOOST_TEST(contains(one.out, "on"), one.out);
}

BOOST_AUTO_TEST_SUITE_END()
