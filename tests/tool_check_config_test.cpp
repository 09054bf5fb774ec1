// Tests of `walseg check-config` (src/bin/cmd_check_config.cpp) and of what the settings load
// tells it (src/guc/load.cpp, file_parser.cpp): every error of a settings set in one run, the
// rules across settings included, each where it came from (file and line, or the -c option);
// a rule over a value already refused is left out (it would judge the default left in its
// place); one settings file per run; long values cut in messages; a UTF-8 byte-order mark
// skipped with a warning. Run as a user would (tool_test_util.h); skipped without the tool.
#define BOOST_TEST_MODULE tool_check_config
#include <boost/test/unit_test.hpp>

#include <string>

#include "tool_test_util.h"

using namespace walseg_test;

BOOST_FIXTURE_TEST_SUITE(tool_check_config, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(CrossSettingErrors_ComeWithTheOthers_AtTheirFileAndLine) {
  // The rule was checked only once every single value was valid, so this file needed two
  // runs, and the rule's error had no file and line.
  auto f = write("wal.conf", "walseg.segment_size = 64MB\nwalseg.min_size = 80MB\nwalseg.init_method = bogus\n");
  auto r = run("check-config '" + f + "'");
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "ERROR:  invalid value for parameter \"walseg.init_method\": \"bogus\" (file \"" + f + "\", line 3)"), r.err);
  BOOST_TEST(contains(r.err, "ERROR:  \"walseg.min_size\" must be at least twice \"walseg.segment_size\" (file \"" + f + "\", line 2)"), r.err);
  BOOST_TEST(contains(r.err, "HINT:  Set \"walseg.min_size\" to at least 128MB."), r.err);
}

BOOST_AUTO_TEST_CASE(ARuleOverARefusedValue_IsNotAnErrorOfItsOwnButNamedInTheHint) {
  // 8MBB is refused, so walseg.segment_size stays 16MB; judging min_size = 20MB against that
  // would report a combination nobody wrote as an error. Leaving it out unsaid hid it: fixing
  // the value to 16MB brought an error the run had not mentioned.
  auto f = write("wal.conf", "walseg.segment_size = 8MBB\nwalseg.min_size = 20MB\n");
  auto r = run("check-config '" + f + "'");
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "walseg.segment_size"), r.err);
  BOOST_TEST(!contains(r.err, "ERROR:  \"walseg.min_size\" must be at least twice"), r.err);
  BOOST_TEST(contains(r.err, "A rule across settings is not checked until this value is valid (it fails with "
                             "the default in its place): \"walseg.min_size\" must be at least twice \"walseg.segment_size\"."),
             r.err);
}

BOOST_AUTO_TEST_CASE(ErrorsFromMinusC_AreAttributedToMinusC) {
  auto rule = run("check-config -c walseg.min_size=20MB");
  BOOST_TEST(rule.status == 1, rule.err);
  BOOST_TEST(contains(rule.err, "must be at least twice \"walseg.segment_size\" (-c walseg.min_size=20MB)"), rule.err);
  // With a file beside it, the summary names the file: the -c error says it is not from there.
  auto f = write("wal.conf", "walseg.recycle = off\n");
  auto value = run("check-config '" + f + "' -c walseg.init_method=bogus");
  BOOST_TEST(value.status == 1, value.err);
  BOOST_TEST(contains(value.err, "invalid value for parameter \"walseg.init_method\": \"bogus\" (from -c)"), value.err);
}

// New-user trial 14: `-c walseg.max_size=20` was quoted back as "-c walseg.max_size=20MB",
// which nobody typed, and the rule's other side (min_size, at its 80MB default) was not said;
// `-c "walseg.segment_size = 1MB"`, a postgresql.conf line copied, was an unknown parameter
// "walseg.segment_size ".
BOOST_AUTO_TEST_CASE(MinusC_IsQuotedAsTyped_TheDefaultItMeetsIsSaid_AndBlanksAroundTheEqualsSignAreDropped) {
  auto r = run("check-config -c walseg.max_size=20");
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "must be at least \"walseg.min_size\" (-c walseg.max_size=20, that is 20MB)"), r.err);
  BOOST_TEST(contains(r.err, "HINT:  \"walseg.min_size\" is 80MB, its default. Set \"walseg.max_size\" to at least 80MB."),
             r.err);
  auto spaced = run("check-config -c ' walseg.segment_size = 1MB ' -c walseg.min_size=2MB");
  BOOST_TEST(spaced.status == 0, spaced.err);
  auto shown = run("show walseg.segment_size -c 'walseg.segment_size = 1MB' -c walseg.min_size=2MB");
  BOOST_TEST(shown.status == 0, shown.err);
  BOOST_TEST(contains(shown.out, "1MB"), shown.out);
}

// New-user trial 14: a settings file that does not exist ended with "FATAL:  the -c settings
// contain errors", though no -c was given.
BOOST_AUTO_TEST_CASE(AMissingFileIsTheFilesError) {
  for (const std::string& args : {std::string("check-config '") + dir + "/nonexist.conf'",
                                   std::string("check-config --config '") + dir + "/nonexist.conf'"}) {
    auto r = run(args);
    BOOST_TEST(r.status == 1, r.err);
    BOOST_TEST(contains(r.err, "FATAL:  configuration file \"" + dir + "/nonexist.conf\" contains errors"), r.err);
    BOOST_TEST(!contains(r.err, "-c settings"), r.err);
  }
}

BOOST_AUTO_TEST_CASE(OneSettingsFilePerRun) {
  // FILE and --config both given: --config was silently ignored.
  auto a = write("a.conf", "walseg.recycle = off\n");
  auto b = write("b.conf", "walseg.init_method = bogus\n");
  auto both = run("check-config '" + a + "' --config '" + b + "'");
  BOOST_TEST(both.status == 2, both.err);
  BOOST_TEST(contains(both.err, "give one settings file, FILE or --config"), both.err);
  auto twice = run("check-config --config '" + a + "' --config '" + b + "'");
  BOOST_TEST(twice.status == 2, twice.err);
  BOOST_TEST(contains(twice.err, "--config"), twice.err);
}

BOOST_AUTO_TEST_CASE(LongValues_AreCutInMessages) {
  const std::string value(300, 'x');
  auto r = run("check-config -c walseg.init_method=" + value);
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.err, "\"" + std::string(64, 'x') + "... (300 bytes)\""), r.err);
  BOOST_TEST(!contains(r.err, std::string(65, 'x')), r.err);
}

BOOST_AUTO_TEST_CASE(AByteOrderMark_IsSkippedWithAWarning) {
  // The mark made the first line's name "\xEF\xBB\xBFwalseg.segment_size", someone else's
  // setting, so the file was "valid (0 walseg settings set in it)" and the size ignored.
  auto f = write("bom.conf", "\xEF\xBB\xBFwalseg.segment_size = 64MB\n");
  auto r = run("check-config '" + f + "'");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(contains(r.err, "WARNING:  configuration file \"" + f + "\" starts with a UTF-8 byte-order mark"), r.err);
  BOOST_TEST(contains(r.out, "(1 walseg setting set in it)"), r.out);
  auto show = run("show walseg.segment_size --value-only --config '" + f + "'");
  BOOST_TEST(show.out == "64MB\n", show.out);
  BOOST_TEST(contains(show.err, "byte-order mark"), show.err);
}

// The new-user trial: walsg.init_method = sparse (a typo of the prefix) and a bare
// init_method were ignored, as names outside walseg. are, and check-config said "valid (0
// walseg settings set in it)"; create then used zero_write. check-config warns now, but not
// about PostgreSQL's own names or another extension's.
BOOST_AUTO_TEST_CASE(ANameThatLooksLikeAWalsegSettingIsWarnedAbout) {
  const std::string f = write("typo.conf", "walsg.init_method = sparse\ninit_method = none\nshared_buffers = 128MB\n"
                                           "block_size = 8192\nauto_explain.min_size = 3\n");
  auto r = run("check-config '" + f + "'");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(contains(r.err, "WARNING:  \"walsg.init_method\" on line 1 of \"" + f +
                                 "\" is not a walseg setting and is ignored, as names outside \"walseg.\" are: did you "
                                 "mean \"walseg.init_method\"?"),
             r.err);
  BOOST_TEST(contains(r.err, "\"init_method\" on line 2"), r.err);
  for (const char* quiet : {"shared_buffers", "block_size", "auto_explain"}) BOOST_TEST(!contains(r.err, quiet), r.err);
}

// The new-user trial: `check-config good.conf --config ./good.conf` was "give one settings
// file" (one file, two spellings), and with -c walseg.recycle=on over the file's own setting
// the file was said to set 0 settings, the -c not mentioned.
BOOST_AUTO_TEST_CASE(OneFileUnderTwoSpellingsIsOneAndTheCountSaysWhatTheFileSets) {
  const std::string f = write("good.conf", "walseg.recycle = off\n");
  const std::string dotted = dir + "/./good.conf";
  auto r = run("check-config '" + f + "' --config '" + dotted + "' -c walseg.recycle=on");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(contains(r.out, "is valid (1 walseg setting set in it), and so is the -c setting (1 given)"), r.out);
  const std::string other = write("other.conf", "walseg.recycle = on\n");
  BOOST_TEST(run("check-config '" + f + "' --config '" + other + "'").status == 2);
}

BOOST_AUTO_TEST_SUITE_END()
