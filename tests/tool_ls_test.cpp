// Tests of `walseg ls` (src/bin/cmd_ls.cpp) on the files the trial found mislabelled:
// segments made by an append-mode method (none: 44 bytes, the ready stamp) are segments of
// the WAL, not "wrong size ... try --segment-size"; walseg 0.1's *.broken files are labelled as
// walseg's own, pointing to README; a name with a control character is printed escaped.
// Run as a user would (tool_test_util.h); skipped without the tool.
#define BOOST_TEST_MODULE tool_ls
#include <boost/test/unit_test.hpp>

#include <unistd.h>

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
  BOOST_TEST(contains(r.out, "a name walseg 0.1 gave a segment-named file it moved aside"), r.out);
  BOOST_TEST(contains(r.out, "bad\\x01name"), r.out);
  BOOST_TEST(!contains(r.out, "bad\x01name"), r.out);
  // Break-it round 38 L3: a name with the four bytes \x0A read as one with a newline.
  std::ofstream(wal + "/odd\\x0Aname") << "";
  std::ofstream(wal + "/odd\nname") << "";
  r = run("ls --dir '" + wal + "' --segment-size 1MB");
  BOOST_TEST(contains(r.out, "odd\\x5Cx0Aname"), r.out);
  BOOST_TEST(contains(r.out, "odd\\x0Aname"), r.out);
}

// Break-it round 10 F7: every temporary name was labelled "temp leftover (removed when a writer
// opens the directory)", and a user's walseg.control.tmp "walseg's leftover", though a writer
// leaves the one alone and refuses the other. ls now says what a writer does with each.
BOOST_AUTO_TEST_CASE(TemporaryNamesAreLabelledAsTheWriterTreatsThem) {
  const std::string wal = dir + "/wal";
  BOOST_TEST_REQUIRE(run("write --dir '" + wal + "' --records 3 -c walseg.segment_size=1MB").status == 0);
  const std::string pid = as_if_the_last_writer_crashed(wal);
  put_as_walseg_would(wal + "/xlogtemp." + pid, std::string(8192, '\0'));
  put_as_walseg_would(wal + "/xlogtemp.8", std::string(100, 'X'));
  put_as_walseg_would(wal + "/xlogtemp.7", std::string(8192, '\0'));  // another process's name
  std::ofstream(wal + "/xlogtemp.6", std::ios::binary) << std::string(8192, '\0');  // 0644: not as walseg makes one
  BOOST_REQUIRE(::symlink("/nonexistent", (wal + "/xlogtemp.9").c_str()) == 0);
  std::ofstream(wal + "/walseg.control.tmp") << "x";
  auto r = run("ls --dir '" + wal + "'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  auto line_of = [&](const std::string& name) {
    std::smatch m;
    std::regex_search(r.out, m, std::regex("\n" + std::regex_replace(name, std::regex("\\."), "\\.") + " [^\n]*"));
    return m.str();
  };
  BOOST_TEST(contains(line_of("xlogtemp." + pid), "temp leftover (removed when a writer opens"), r.out);
  BOOST_TEST(contains(line_of("xlogtemp.8"), "not walseg's: a temporary file holding bytes walseg never writes"), r.out);
  // Round 16 L2: each label gives its own reason.
  BOOST_TEST(contains(line_of("xlogtemp.7"), "not walseg's: a temporary file not named for process " + pid), r.out);
  BOOST_TEST(contains(line_of("xlogtemp.9"), "not walseg's"), r.out);
  BOOST_TEST(contains(line_of("xlogtemp.6"), "not walseg's: a temporary file with mode 0644: walseg makes its files 0600"),
             r.out);
  BOOST_TEST(contains(line_of("walseg.control.tmp"), "not walseg's"), r.out);
}

// Issue 17 (new-user trial): in a directory without walseg.control (bench --keep's rows, a WAL
// whose control file was lost) every 1MB or empty segment was "N bytes (not 16777216: another
// segment size? try --segment-size)". ls now names the size, and what a first page says.
BOOST_AUTO_TEST_CASE(WithoutAControlFileSegmentsAreLabelledByTheirSizeAndFirstPage) {
  const std::string kept = dir + "/b";
  fs::create_directories(kept);
  BOOST_TEST_REQUIRE(run("bench --dir '" + kept + "' --phases create --methods zero_write,none --segments 1"
                         " --segment-size 1MB --keep").status == 0);
  std::string rows;
  for (const auto& e : fs::directory_iterator(kept)) rows = e.path().string() + "/create";
  auto z = run("ls --dir '" + rows + "/zero_write'");
  BOOST_TEST(z.status == 0, z.err);
  BOOST_TEST(contains(z.out, "the size of a 1MB segment"), z.out);
  auto n = run("ls --dir '" + rows + "/none'");
  // bench's none files are unstamped (0 bytes); `create --method none` stamps 44.
  BOOST_TEST(contains(n.out, "0 bytes (empty: a segment of an append-mode method before its ready stamp"), n.out);
  const std::string wal = dir + "/wal";
  BOOST_TEST_REQUIRE(run("write --dir '" + wal + "' --records 3 -c walseg.segment_size=1MB").status == 0);
  // A segment made ahead, not left to the preallocator's timing.
  BOOST_TEST_REQUIRE(run("create --dir '" + wal + "' --method zero_write --start 7").status == 0);
  fs::remove(wal + "/walseg.control");
  auto w = run("ls --dir '" + wal + "'");
  BOOST_TEST(std::regex_search(w.out, std::regex("\n000000010000000000000001 [^\n]*its first page says WAL of system [0-9]+, 1MB segments")),
             w.out);
  BOOST_TEST(std::regex_search(w.out, std::regex("\n000000010000000000000007 [^\n]*preallocated by walseg for system")), w.out);
  for (const auto* out : {&z.out, &n.out, &w.out}) BOOST_TEST(!contains(*out, "try --segment-size"), *out);
  // A ready stamp whose CRC does not match is nobody's known file: ls read the magic number
  // alone and called it walseg's (the directory scan, whose reading ls now shares, did not).
  {
    std::fstream f(wal + "/000000010000000000000007", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);  // the stamp's CRC-32C (wal_format.h: kReadyStampCrcOffset)
    f.put('\x55').put('\x55');
  }
  auto d = run("ls --dir '" + wal + "'");
  BOOST_TEST(std::regex_search(d.out, std::regex("\n000000010000000000000007 [^\n]*whose is unknown")), d.out);
  BOOST_TEST(!std::regex_search(d.out, std::regex("\n000000010000000000000007 [^\n]*preallocated by walseg")), d.out);
}

// New-user trial 14: README said ls refuses PostgreSQL's pg_wal; it listed pg_wal's segments
// as "whose is unknown" and said nothing of whose directory it was.
BOOST_AUTO_TEST_CASE(PostgresqlsPgWalIsListedAndSaidToBeIt) {
  const std::string pg_wal = dir + "/pgdata/pg_wal";
  fs::create_directories(pg_wal + "/archive_status");
  std::ofstream(dir + "/pgdata/PG_VERSION") << "15\n";
  std::ofstream(pg_wal + "/000000010000000000000001", std::ios::binary) << std::string(16 << 20, '\0');
  auto r = run("ls --dir '" + pg_wal + "'");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(contains(r.out, "walseg.control: none: not a walseg WAL directory. It looks like PostgreSQL's pg_wal"), r.out);
  BOOST_TEST(contains(r.out, "read PostgreSQL's WAL with pg_waldump"), r.out);
  BOOST_TEST(contains(r.out, "000000010000000000000001"), r.out);
}

// The new-user trial: 1MB of random bytes named "...09.broken" was "walseg's: a segment-named
// file walseg 0.1 moved aside", the line a real segment got, though README told the user to
// check with ls that the file is a segment of this WAL before bringing it back.
BOOST_AUTO_TEST_CASE(ABrokenFileIsSaidToBeThisWalsOnlyWhenItsFirstPageIs) {
  const std::string wal = dir + "/wal";
  BOOST_TEST_REQUIRE(run("write --dir '" + wal + "' --records 1500 --record-size 1kB -c walseg.segment_size=1MB").status == 0);
  fs::copy_file(wal + "/000000010000000000000001", wal + "/000000010000000000000001.broken");
  std::ofstream(wal + "/000000010000000000000009.broken", std::ios::binary) << std::string(1 << 20, 'R');
  {
    std::ifstream in(wal + "/000000010000000000000001", std::ios::binary);
    std::string head(5000, '\0');
    in.read(head.data(), 5000);
    std::ofstream(wal + "/000000010000000000000001.broken.2", std::ios::binary) << head;
  }
  const std::string other = dir + "/other";
  BOOST_TEST_REQUIRE(run("write --dir '" + other + "' --records 3 -c walseg.segment_size=1MB").status == 0);
  fs::copy_file(other + "/000000010000000000000001", wal + "/000000010000000000000003.broken");
  auto r = run("ls --dir '" + wal + "'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  auto line_of = [&](const std::string& name) {
    const auto at = r.out.find("\n" + name + " ");
    return at == std::string::npos ? std::string() : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  BOOST_TEST(contains(line_of("000000010000000000000001.broken"), "walseg's: "), r.out);
  BOOST_TEST(contains(line_of("000000010000000000000001.broken"), "its first page is this WAL's"), r.out);
  // The new-user trial: whether the name to bring it back under is free was not said.
  BOOST_TEST(contains(line_of("000000010000000000000001.broken"), "but the name 000000010000000000000001 is taken"), r.out);
  BOOST_TEST(!contains(line_of("000000010000000000000001.broken"), "bring it back"), r.out);
  for (const char* n : {"000000010000000000000009.broken", "000000010000000000000001.broken.2",
                        "000000010000000000000003.broken"})
    BOOST_TEST_CONTEXT(n) {
      BOOST_TEST(!line_of(n).empty(), r.out);
      BOOST_TEST(!contains(line_of(n), "walseg's: "), line_of(n));
      BOOST_TEST(!contains(line_of(n), "bring it back"), line_of(n));
    }
  BOOST_TEST(contains(line_of("000000010000000000000009.broken"), "no WAL page"), r.out);
  BOOST_TEST(contains(line_of("000000010000000000000001.broken.2"), "not a whole segment"), r.out);
  BOOST_TEST(contains(line_of("000000010000000000000003.broken"), "not this WAL's"), r.out);
  // A segment of this WAL under another segment's name.
  fs::copy_file(wal + "/000000010000000000000001", wal + "/000000010000000000000007.broken");
  // And one whose name is free: a copy of the directory without segment 1.
  const std::string copy = dir + "/copy";
  fs::copy(wal, copy);
  fs::rename(copy + "/000000010000000000000001", copy + "/000000010000000000000001.broken");
  auto m = run("ls --dir '" + wal + "'");
  auto c = run("ls --dir '" + copy + "'");
  BOOST_TEST_REQUIRE(m.status == 0, m.err);
  BOOST_TEST_REQUIRE(c.status == 0, c.err);
  r = m;
  BOOST_TEST(contains(line_of("000000010000000000000007.broken"),
                      "but it is segment 000000010000000000000001's (timeline 1, LSN 0/100000), not 000000010000000000000007's"),
             m.out);
  BOOST_TEST(!contains(line_of("000000010000000000000007.broken"), "walseg's: "), m.out);
  r = c;
  BOOST_TEST(contains(line_of("000000010000000000000001.broken"), "and the name 000000010000000000000001 is free: with no writer running, bring it back with mv"),
             c.out);
}

// Break-it round 23 L1: a walseg.control that is a symbolic link was listed as "walseg's
// control file, damaged", though nothing in it is damaged: it is not the file walseg writes.
BOOST_AUTO_TEST_CASE(ALinkedControlFileIsNotCalledDamaged) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3 -c walseg.segment_size=1MB").status == 0);
  fs::rename(wal + "/walseg.control", dir + "/control");
  fs::create_symlink("../control", wal + "/walseg.control");
  auto r = run("ls --dir '" + wal + "'");
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(contains(r.out, "is a symbolic link, not the regular file walseg writes"), r.out);
  BOOST_TEST(!contains(r.out, "damaged"), r.out);
  BOOST_TEST(contains(r.out, "walseg's control file name, but cannot be used (see above)"), r.out);
}

// Break-it round 26 M1: a 0600 walseg.auto holding a user's notes was listed as "walseg's
// init_method = auto decision", while a writer called it not walseg's cache (and kept it).
BOOST_AUTO_TEST_CASE(AWalsegAutoNotInWalsegsLayoutIsNotCalledItsDecision) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 3 -c walseg.segment_size=1MB").status == 0);
  put_as_walseg_would(wal + "/walseg.auto", "precious notes\n");
  auto r = run("ls --dir '" + wal + "'");
  BOOST_TEST(contains(r.out, "not walseg's: it does not hold walseg's auto decision"), r.out);
  BOOST_TEST(!contains(r.out, "walseg's init_method = auto decision"), r.out);
}

// Break-it round 25 (LOW): a segment of a full-size WAL cut short by a truncate was labelled
// "append mode", which a writer would refuse it as: it says it was cut, and what to do.
BOOST_AUTO_TEST_CASE(ASegmentCutShortInAFullSizeWalIsNotCalledAppendMode) {
  const std::string wal = dir + "/wal";
  BOOST_TEST_REQUIRE(run("write --dir '" + wal + "' --records 3000 --record-size 1000 --segment-size 1MB").status == 0);
  fs::resize_file(wal + "/000000010000000000000002", 500000);
  auto r = run("ls --dir '" + wal + "'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(!contains(r.out, "append mode"), r.out);
  BOOST_TEST(contains(r.out, "cut short: 500000 of 1048576 bytes"), r.out);
  BOOST_TEST(contains(r.out, "restore the complete file"), r.out);
}

// Break-it round 33 (LOW): a preallocated segment never written, cut short, was said to be
// refused by a writer ("restore the complete file"), though it holds no record and a writer
// writes into it. ls says what the writer does.
BOOST_AUTO_TEST_CASE(APreallocatedSegmentCutShortIsSaidToBeUsed) {
  const std::string wal = dir + "/wal";
  const std::string k = " --segment-size 1MB -c walseg.min_size=4MB";
  BOOST_TEST_REQUIRE(run("write --dir '" + wal + "' --records 10" + k).status == 0);
  const std::string ready = wal + "/000000010000000000000002";
  BOOST_TEST_REQUIRE(contains(run("ls --dir '" + wal + "'").out, "preallocated, not yet written"));
  fs::resize_file(ready, 4096);
  auto r = run("ls --dir '" + wal + "'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(contains(r.out, "cut short: 4096 of 1048576 bytes (it holds no record; a writer writes into it"), r.out);
  BOOST_TEST(!contains(r.out, "restore the complete file"), r.out);
  auto w = run("write --dir '" + wal + "' --records 200 --record-size 8kB" + k);
  BOOST_TEST(w.status == 0, w.err);
  const auto rec = run("recover --dir '" + wal + "'").out;
  BOOST_TEST(contains(rec, "records: 210\n"), rec);
}

// New-user trial 16 (MEDIUM): with segment 1 moved aside as walseg 0.1 did (*.broken), ls
// pointed to README, write logged "foreign file" and refused with "restore it from a backup",
// and recover said only that segment 1 does not exist; a backup restored instead would lose
// what was written since, while one mv brings it back. Each now names the way back.
BOOST_AUTO_TEST_CASE(ASegmentMovedAsideAsBrokenIsNamedWithTheWayBack) {
  const std::string wal = dir + "/wal";
  BOOST_TEST_REQUIRE(run("write --dir '" + wal + "' --records 30 --segment-size 1MB").status == 0);
  const std::string seg = wal + "/000000010000000000000001";
  fs::rename(seg, seg + ".broken");
  auto l = run("ls --dir '" + wal + "'");
  BOOST_TEST(contains(l.out, "bring it back with mv '" + seg + ".broken' '" + seg + "'"), l.out);
  auto r = run("recover --dir '" + wal + "'");
  BOOST_TEST(r.status == 2, r.out << r.err);
  BOOST_TEST(contains(r.out + r.err, "but \"" + seg + ".broken\" does"), r.out << r.err);
  auto w = run("write --dir '" + wal + "' --records 1 --segment-size 1MB");
  BOOST_TEST(w.status == 1, w.err);
  BOOST_TEST(contains(w.err, "mv \"" + seg + ".broken\" \"" + seg + "\""), w.err);
  BOOST_TEST(contains(w.err, "a segment walseg 0.1 moved aside"), w.err);
  BOOST_TEST(!contains(w.err, "foreign file"), w.err);
  fs::rename(seg + ".broken", seg);
  BOOST_TEST(contains(run("recover --dir '" + wal + "'").out, "records: 30\n"));
}

BOOST_AUTO_TEST_SUITE_END()
