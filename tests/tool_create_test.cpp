// Tests of `walseg create` (src/bin/cmd_create.cpp) run as a user would run it
// (tool_test_util.h): segments made in a fresh directory, and a second run whose numbers are
// taken, which must create nothing and name --start. Skipped when the tool has not been built.
#define BOOST_TEST_MODULE tool_create
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "tool_test_util.h"

using namespace walseg_test;

namespace {

const std::string kSmall = "-c walseg.segment_size=1MB -c walseg.min_size=2MB --method zero_write";

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_create, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(FreshDirectory_CountSegments_AreMadeFromStart) {
  auto r = run("create --dir '" + dir + "/wal' --count 2 --start 5 " + kSmall);
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(contains(r.out, "000000010000000000000005"));
  BOOST_TEST(contains(r.out, "000000010000000000000006"));
  BOOST_TEST(fs::file_size(dir + "/wal/000000010000000000000006") == 1024u * 1024u);
}

BOOST_AUTO_TEST_CASE(NumbersTaken_NothingIsCreatedAndTheErrorNamesTheNextFreeStart) {
  // Segments 1-3 and 5 exist; 4-6 are asked for. It used to create 4, then stop at 5 with
  // "file exists": half the run made, and no word of --start.
  BOOST_REQUIRE(run("create --dir '" + dir + "/wal' --count 3 " + kSmall).status == 0);
  BOOST_REQUIRE(run("create --dir '" + dir + "/wal' --count 1 --start 5 " + kSmall).status == 0);
  auto before = entries(dir + "/wal");
  auto r = run("create --dir '" + dir + "/wal' --count 3 --start 4 " + kSmall);
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "segment \"000000010000000000000005\" already exists"), r.err);
  BOOST_TEST(contains(r.err, "use --start 6"), r.err);
  BOOST_TEST(r.out.empty(), r.out);
  BOOST_TEST((entries(dir + "/wal") == before));  // segment 4 was not made
  // Following the hint works.
  auto again = run("create --dir '" + dir + "/wal' --count 1 --start 6 " + kSmall);
  BOOST_TEST(again.status == 0, again.err);
  BOOST_TEST(fs::exists(dir + "/wal/000000010000000000000006"));
}

// Break-it round 38 L3: "use --start 31" beside segment names in hex read as 0x31. The
// suggestion names the segment it means.
BOOST_AUTO_TEST_CASE(TheSuggestedStartNamesItsSegment) {
  BOOST_REQUIRE(run("create --dir '" + dir + "/wal' --count 1 --start 30 " + kSmall).status == 0);
  BOOST_TEST(fs::exists(dir + "/wal/00000001000000000000001E"));
  auto r = run("create --dir '" + dir + "/wal' --count 1 --start 30 " + kSmall);
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "use --start 31"), r.err);
  BOOST_TEST(contains(r.err, "(--start is decimal: 31 is the segment named \"00000001000000000000001F\")"), r.err);
}

// New-user trial: with WAL in segment 1 and segments 2-3 made ahead by the preallocator,
// `create` said "use --start 2 or higher", and --start 2 then failed: "already exists ... use
// --start 4". The first suggestion must be one that works.
BOOST_AUTO_TEST_CASE(NotAheadOfTheWal_TheSuggestedStartIsPastTheSegmentsMadeAhead) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 20 -c walseg.segment_size=1MB -c walseg.min_size=2MB "
                    "-c walseg.prealloc_segments=2").status == 0);
  // The preallocator may or may not have made 2 and 3 before the writer ended: one more
  // segment ahead, after whatever it made, so that the WAL's end is not the answer.
  int next = 2;
  while (fs::exists(wal + "/00000001000000000000000" + std::to_string(next))) ++next;
  BOOST_REQUIRE(run("create --dir '" + wal + "' --count 1 --start " + std::to_string(next) + " " + kSmall).status == 0);
  const std::string want = std::to_string(next + 1);
  auto r = run("create --dir '" + wal + "' --count 2 " + kSmall);
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "use --start " + want + " or higher"), r.err);
  auto again = run("create --dir '" + wal + "' --count 2 --start " + want + " " + kSmall);
  BOOST_TEST(again.status == 0, again.err);
}

BOOST_AUTO_TEST_CASE(OtherTimeline_SameNumbers_AreNotTaken) {
  BOOST_REQUIRE(run("create --dir '" + dir + "/wal' --count 2 " + kSmall).status == 0);
  auto r = run("create --dir '" + dir + "/wal' --count 2 --timeline 2 " + kSmall);
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(fs::exists(dir + "/wal/000000020000000000000001"));
  // New-user trial 6: made without a word, though the WAL passes them by until it switches.
  BOOST_TEST(contains(r.err, "WARNING:  the WAL in \"" + dir + "/wal\" is on timeline 1: segments of timeline 2 are "
                             "used only once it switches to that timeline"),
             r.err);
}

// Break-it round 16 L5: on another timeline the "ahead of the WAL" check was skipped, so
// segments no timeline switch could ever reach were made (and --count could fill the disk).
BOOST_AUTO_TEST_CASE(OtherTimeline_BelowTheWalOrOlder_IsRefused) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 300 --record-size 8kB -c walseg.segment_size=1MB -c walseg.min_size=2MB").status == 0);
  const auto before = entries(wal);
  auto below = run("create --dir '" + wal + "' --timeline 2 --start 1 -c walseg.segment_size=1MB -c walseg.min_size=2MB");
  BOOST_TEST(below.status == 1, below.err);
  BOOST_TEST(contains(below.err, "segment 1 of timeline 2 is not ahead of the WAL"), below.err);
  BOOST_TEST((entries(wal) == before));
  BOOST_REQUIRE(run("create --dir '" + dir + "/t3' --timeline 3 --start 1 -c walseg.segment_size=1MB").status == 0);
  auto older = run("create --dir '" + dir + "/t3' --timeline 2 --start 9 -c walseg.segment_size=1MB");
  BOOST_TEST(older.status == 1, older.err);
  BOOST_TEST(contains(older.err, "timeline 2 is older than the WAL's"), older.err);
  auto ahead = run("create --dir '" + wal + "' --timeline 2 --start 9 -c walseg.segment_size=1MB -c walseg.min_size=2MB");
  BOOST_TEST(ahead.status == 0, ahead.err);
}

// The new-user trial: create --method zero_write on a WAL of append-mode segments (made by
// none, never written) removed them all and took the WAL out of append mode, exit 0; create
// only adds segments, so it refuses, and nothing changes.
BOOST_AUTO_TEST_CASE(AFullSizeMethodOnAnAppendModeWal_IsRefusedAndRemovesNothing) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("create --dir '" + wal + "' --method none --count 3 -c walseg.segment_size=1MB").status == 0);
  const auto before = entries(wal);
  const std::string control = [&] {
    std::ostringstream s;
    s << std::ifstream(wal + "/walseg.control", std::ios::binary).rdbuf();
    return s.str();
  }();
  for (const char* method : {"zero_write", "posix_fallocate", "sparse"}) {
    auto r = run("create --dir '" + wal + "' --method " + std::string(method) + " --start 5");
    BOOST_TEST(r.status == 1, method << ": " << r.err);
    BOOST_TEST(contains(r.err, "its WAL is written in append mode"), r.err);
    BOOST_TEST(contains(r.err, "nothing was created or removed"), r.err);
    BOOST_TEST(!contains(r.err, "removed \""), r.err);
  }
  BOOST_TEST((entries(wal) == before));
  std::ostringstream after;
  after << std::ifstream(wal + "/walseg.control", std::ios::binary).rdbuf();
  BOOST_TEST((after.str() == control));
  // The WAL's own mode still works: none adds a segment.
  BOOST_TEST(run("create --dir '" + wal + "' --start 5").status == 0);
}

// New-user trial: `create --dir new --start 0` was refused ("not ahead of the WAL") and left the
// directory "new" it had made. A refused create leaves no directory of its own; one that was
// there already (empty, or a user's) stays.
BOOST_AUTO_TEST_CASE(ARefusedCreateLeavesNoDirectoryItMade) {
  for (const std::string d : {"/new", "/trailing/", "/a/b"}) {
    auto r = run("create --dir '" + dir + d + "' --start 0 " + kSmall);
    BOOST_TEST(r.status == 1, d << ": " << r.err);
    BOOST_TEST(contains(r.err, "is not ahead of the WAL"), r.err);
    BOOST_TEST(!fs::exists(dir + d), d);
  }
  BOOST_TEST(fs::is_directory(dir + "/a"));  // a parent it made may hold someone's files by now
  fs::create_directories(dir + "/mine");
  BOOST_TEST(run("create --dir '" + dir + "/mine' --start 0 " + kSmall).status == 1);
  BOOST_TEST(fs::is_directory(dir + "/mine"));
  BOOST_TEST(fs::is_empty(dir + "/mine"));
}

// New-user trial 3: a create that failed at run time (a full disk) on a new directory left a
// walseg.control behind, a WAL without a segment whose segment size then held for every later
// run. A new WAL whose first segment could not be made is taken back; one with a segment, or
// an earlier WAL, stays as it was.
BOOST_AUTO_TEST_CASE(ACreateThatFailsAtItsFirstSegment_LeavesNoNewWal) {
  const std::string k1MB = "-c walseg.segment_size=1MB -c walseg.min_size=2MB";
  auto names = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& n : v) s += n + " ";
    return s;
  };
  ::setenv("WALSEG_FAILPOINTS", "fallocate=ENOSPC*0", 1);
  auto n = run("create --dir '" + dir + "/new' --method posix_fallocate " + k1MB);
  fs::create_directories(dir + "/mine");
  auto m = run("create --dir '" + dir + "/mine' --method posix_fallocate " + k1MB);
  ::unsetenv("WALSEG_FAILPOINTS");
  BOOST_TEST(n.status == 1, n.err);
  BOOST_TEST(contains(n.err, "No space left on device"), n.err);
  BOOST_TEST(contains(n.err, "removed walseg.control from \"" + dir + "/new\" again"), n.err);
  BOOST_TEST(!fs::exists(dir + "/new"), names(entries(dir + "/new")));
  BOOST_TEST(m.status == 1, m.err);
  BOOST_TEST(fs::is_empty(dir + "/mine"), names(entries(dir + "/mine")));
  // auto's probe failing (break-it round 20 L1): its file whose fill failed was left in the new
  // directory, without walseg.lock, where no later writer takes it for a leftover.
  ::setenv("WALSEG_FAILPOINTS", "fallocate=ENOSPC*0", 1);
  auto a = run("create --dir '" + dir + "/auto' --method auto " + k1MB);
  ::unsetenv("WALSEG_FAILPOINTS");
  BOOST_TEST(a.status == 1, a.err);
  BOOST_TEST(!fs::exists(dir + "/auto"), names(entries(dir + "/auto")));
  // The second segment failing: the first one is made, so the WAL stays.
  ::setenv("WALSEG_FAILPOINTS", "fallocate=ENOSPC@2*0", 1);
  auto two = run("create --dir '" + dir + "/two' --method posix_fallocate --count 2 " + k1MB);
  ::unsetenv("WALSEG_FAILPOINTS");
  BOOST_TEST(two.status == 1, two.err);
  BOOST_TEST(fs::exists(dir + "/two/walseg.control"));
  BOOST_TEST(fs::exists(dir + "/two/000000010000000000000001"));
  // An existing WAL keeps its control file when create fails.
  BOOST_TEST_REQUIRE(run("write --dir '" + dir + "/wal' --records 3 " + k1MB).status == 0);
  const auto before = entries(dir + "/wal");
  ::setenv("WALSEG_FAILPOINTS", "fallocate=ENOSPC*0", 1);
  auto w = run("create --dir '" + dir + "/wal' --method posix_fallocate --start 9 " + k1MB);
  ::unsetenv("WALSEG_FAILPOINTS");
  BOOST_TEST(w.status == 1, w.err);
  BOOST_TEST(entries(dir + "/wal") == before, names(entries(dir + "/wal")));
  BOOST_TEST(run("recover --dir '" + dir + "/wal'").status == 0);
}

// Break-it round 19: after the last segment number, the refusal said "use --start
// 17592186044416", a number that is itself refused.
BOOST_AUTO_TEST_CASE(AtTheLastSegmentNumber_TheRefusalSuggestsNoNumberPastIt) {
  const std::string k1MB = "-c walseg.segment_size=1MB -c walseg.min_size=2MB";
  BOOST_TEST_REQUIRE(run("write --dir '" + dir + "/wal' --records 3 " + k1MB).status == 0);
  BOOST_TEST_REQUIRE(run("create --dir '" + dir + "/wal' --start 17592186044415 " + k1MB).status == 0);
  auto r = run("create --dir '" + dir + "/wal' --start 17592186044415 " + k1MB);
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(!contains(r.err, "--start 17592186044416"), r.err);
  BOOST_TEST(contains(r.err, "no later segment number exists with 1MB segments (the last is 17592186044415): use a later --timeline"), r.err);
  // Break-it round 28 L1: the numbers between the WAL and the last one are still free, and a
  // refused --start 1 said to use a later timeline instead of naming them.
  auto low = run("create --dir '" + dir + "/wal' --start 1 --count 2 " + k1MB);
  BOOST_TEST(low.status == 1, low.err);
  std::smatch m;
  BOOST_TEST_REQUIRE(std::regex_search(low.err, m, std::regex("use --start ([0-9]+) or higher")), low.err);
  BOOST_TEST(std::stoull(m[1]) < 10u, low.err);
  auto followed = run("create --dir '" + dir + "/wal' --start " + m[1].str() + " --count 2 " + k1MB);
  BOOST_TEST(followed.status == 0, followed.err);
}

BOOST_AUTO_TEST_SUITE_END()
