// Tests of `walseg ls` (src/bin/cmd_ls.cpp) on the files the trial found mislabelled:
// segments made by an append-mode method (none: 44 bytes, the ready stamp) are segments of
// the WAL, not "wrong size ... try --segment-size"; walseg 0.1's *.broken files are labelled as
// walseg's own, pointing to README; a name with a control character is printed escaped.
// Run as a user would (tool_test_util.h); skipped without the tool.
#define BOOST_TEST_MODULE tool_ls
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <regex>
#include <string>

#include "tool_test_util.h"

using namespace walseg_test;

BOOST_FIXTURE_TEST_SUITE(tool_ls, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(AppendModeSegments_BrokenFilesAndControlCharacters_AreLabelledAsWhatTheyAre) {
  const std::string wal = dir + "/wal";
  BOOST_TEST_REQUIRE(run("create --dir '" + wal + "' --method none --count 2 --segment-size 1MB").status == 0);
  std::ofstream(wal + "/000000010000000000000009.broken") << "old";
  std::ofstream(wal + "/bad\x01name") << "";
  auto r = run("ls --dir '" + wal + "' --segment-size 1MB");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(std::regex_search(r.out, std::regex("\\n000000010000000000000001 +44 +\\d+  segment of this WAL, [^\\n]*append mode")), r.out);
  BOOST_TEST(!contains(r.out, "try --segment-size"), r.out);
  BOOST_TEST(contains(r.out, "000000010000000000000009.broken"), r.out);
  BOOST_TEST(contains(r.out, "walseg's: a segment-named file walseg 0.1 moved aside"), r.out);
  BOOST_TEST(contains(r.out, "bad\\x01name"), r.out);
  BOOST_TEST(!contains(r.out, "bad\x01name"), r.out);
}

BOOST_AUTO_TEST_SUITE_END()
