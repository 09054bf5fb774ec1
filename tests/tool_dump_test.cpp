// Tests of `walseg dump` (src/bin/cmd_dump.cpp) on WAL that `walseg write` made, run as a user
// would run it (tool_test_util.h): dump exits 2 when it stops on corruption, as recover does;
// --start inside a record or on a page boundary starts at the first record that begins at or
// after it and says so, as pg_waldump does (XLogFindNextRecord). Skipped when the tool has not
// been built.
#define BOOST_TEST_MODULE tool_dump
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "tool_process.h"
#include "tool_test_util.h"

using namespace walseg_test;

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kSegBytes = 1 << 20;
constexpr std::uint64_t kPageBytes = 8192;
const std::string kSettings = "-c walseg.segment_size=1MB -c walseg.prealloc_segments=0";

std::string lsn_text(std::uint64_t lsn) { return fmt::format("{:X}/{:X}", lsn >> 32, lsn & 0xFFFFFFFF); }

// The "lsn: X/Y" of every record line dump printed, in order.
std::vector<std::uint64_t> record_lsns(const std::string& out) {
  std::vector<std::uint64_t> lsns;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find(", lsn: ");
    unsigned hi = 0, lo = 0;
    if (line.rfind("rmgr: ", 0) == 0 && at != std::string::npos &&
        std::sscanf(line.c_str() + at + 7, "%X/%X", &hi, &lo) == 2)
      lsns.push_back(std::uint64_t{hi} << 32 | lo);
  }
  return lsns;
}

struct DumpTest : ToolTest {
  std::string wal = dir + "/wal";
  std::vector<std::uint64_t> lsns;  // of every record written

  // `walseg write` of n records of `size` bytes, then every record's LSN from a full dump.
  void write_wal(int n, int size) {
    auto w = run(fmt::format("write --dir '{}' --records {} --record-size {} {}", wal, n, size, kSettings));
    BOOST_TEST_REQUIRE(w.status == 0, w.err);
    auto d = run("dump --dir '" + wal + "'");
    BOOST_TEST_REQUIRE(d.status == 0, d.err);
    lsns = record_lsns(d.out);
    BOOST_TEST_REQUIRE(lsns.size() == static_cast<std::size_t>(n));
  }
  // Inverts one byte of the WAL at `lsn` (timeline 1, 1 MB segments).
  void flip(std::uint64_t lsn) {
    const std::uint64_t segno = lsn / kSegBytes;
    const std::string path = fmt::format("{}/{:08X}{:08X}{:08X}", wal, 1, segno / 4096, segno % 4096);
    const int fd = ::open(path.c_str(), O_RDWR);
    BOOST_TEST_REQUIRE(fd >= 0, path);
    unsigned char b = 0;
    BOOST_TEST_REQUIRE(::pread(fd, &b, 1, static_cast<off_t>(lsn % kSegBytes)) == 1);
    b = static_cast<unsigned char>(~b);
    BOOST_TEST_REQUIRE(::pwrite(fd, &b, 1, static_cast<off_t>(lsn % kSegBytes)) == 1);
    ::close(fd);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_dump, DumpTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(HealthyWal_Exits0) {
  write_wal(50, 100);
  auto r = run("dump --dir '" + wal + "'");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(contains(r.out, "end of WAL: invalid record length"), r.out);
  // In PostgreSQL 15's words (pg_waldump 15); "expected at least 24" is PostgreSQL 16's.
  BOOST_TEST(contains(r.out, ": wanted 24, got 0"), r.out);
}

// New-user trial: `recover --timeline 2` on a healthy WAL of timeline 1 said "corruption: yes"
// (segment 000000020000000000000001 missing before the durable point) and exited 2. Then it
// exited 2 as a usage error, which a script cannot tell from corruption: 1, as "no WAL in D".
BOOST_AUTO_TEST_CASE(ATimelineWithoutSegments_IsAnErrorNotCorruption) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 5 " + kSettings).status == 0);
  for (const std::string cmd : {"recover", "dump"}) {
    auto r = run(cmd + " --dir '" + wal + "' --timeline 2");
    BOOST_TEST(r.status == 1, cmd << ": " << r.err);
    BOOST_TEST(contains(r.err, "holds no segment of timeline 2"), cmd << ": " << r.err);
    BOOST_TEST(!contains(r.out, "corruption: yes"), cmd << ": " << r.out);
  }
  BOOST_TEST(run("recover --dir '" + wal + "' --timeline 1").status == 0);
}

BOOST_AUTO_TEST_CASE(CorruptionBeforeValidWal_Exits2AsRecoverDoes) {
  // dump reported "corruption: the record at ... after it is valid" and exited 0.
  write_wal(200, 100);
  std::size_t k = 100;
  while (lsns[k] % kPageBytes > kPageBytes - 128) ++k;  // a record within one page
  flip(lsns[k] + 40);  // inside its payload: its CRC fails, and the record after it is valid
  auto r = run("dump --dir '" + wal + "'");
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(record_lsns(r.out).size() == k);
  BOOST_TEST(contains(r.out, "incorrect resource manager data checksum in record at " + lsn_text(lsns[k])),
             r.out);
  BOOST_TEST(contains(r.out, "; corruption: "), r.out);
  BOOST_TEST(run("recover --dir '" + wal + "'").status == 2);
  // --limit stops before the damage: nothing was found, so nothing is reported.
  auto limited = run("dump --dir '" + wal + "' --limit 10");
  BOOST_TEST(limited.status == 0, limited.err);
}

// Break-it round 18 L5: `dump --start` past a damaged record (valid WAL after it) said "not yet
// written (the WAL ends at ...)" and exited 0, where recover and a plain dump say corruption.
BOOST_AUTO_TEST_CASE(StartPastCorruption_IsCorruptionNotUnwrittenWal) {
  write_wal(200, 100);
  std::size_t k = 100;
  while (lsns[k] % kPageBytes > kPageBytes - 128) ++k;
  flip(lsns[k] + 40);
  auto r = run("dump --dir '" + wal + "' --start " + lsn_text(lsns.back() + 4096));
  BOOST_TEST(r.status == 2, r.out << r.err);
  BOOST_TEST(!contains(r.out, "not yet written"), r.out);
  BOOST_TEST(contains(r.out, "end of WAL: " + lsn_text(lsns[k])), r.out);
  BOOST_TEST(contains(r.out, "; corruption: "), r.out);
}

BOOST_AUTO_TEST_CASE(StartInsideARecord_StartsAtTheNextRecordAndSaysWhere) {
  // It read from the middle of the record as if a record began there and reported
  // "corruption" on a healthy WAL.
  write_wal(60, 100);
  for (const std::uint64_t into : {8u, 24u, 100u}) {
    BOOST_TEST_CONTEXT("bytes into record 20: " << into) {
      const std::uint64_t start = lsns[20] + into;
      auto r = run("dump --dir '" + wal + "' --start " + lsn_text(start));
      BOOST_TEST(r.status == 0, r.err);
      BOOST_TEST(!contains(r.out, "corruption"), r.out);
      const std::string said = fmt::format("first record is after {}, at {}, skipping over {} bytes\n",
                                           lsn_text(start), lsn_text(lsns[21]), lsns[21] - start);
      BOOST_TEST(r.out.rfind(said, 0) == 0u, r.out);
      BOOST_TEST((record_lsns(r.out) == std::vector<std::uint64_t>(lsns.begin() + 21, lsns.end())));
    }
  }
}

BOOST_AUTO_TEST_CASE(StartOnAPageBoundaryInsideARecord_SkipsTheContinuation) {
  write_wal(40, 3000);  // records cross pages
  const std::uint64_t page = lsns[0] - lsns[0] % kPageBytes + 2 * kPageBytes;
  std::size_t first = 0;
  while (lsns[first] < page) ++first;
  auto r = run("dump --dir '" + wal + "' --start " + lsn_text(page));
  BOOST_TEST(r.status == 0, r.err);
  const std::string said = fmt::format("first record is after {}, at {}, ", lsn_text(page), lsn_text(lsns[first]));
  BOOST_TEST(contains(r.out, said), r.out);
  const std::vector<std::uint64_t> want(lsns.begin() + static_cast<long>(first), lsns.end());
  BOOST_TEST((record_lsns(r.out) == want));
}

BOOST_AUTO_TEST_CASE(StartAtARecord_StartsThereWithoutAMessage) {
  write_wal(30, 100);
  auto r = run("dump --dir '" + wal + "' --start " + lsn_text(lsns[7]));
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(!contains(r.out, "first record is after"), r.out);
  BOOST_TEST((record_lsns(r.out) == std::vector<std::uint64_t>(lsns.begin() + 7, lsns.end())));
}

// The new-user trial: `dump --start` past the last record printed only "end of WAL: invalid
// record length at" an LSN before the one asked for. It now says first that nothing begins
// there yet and where the WAL ends; still exit 0, as case C27 wants for the zero tail.
BOOST_AUTO_TEST_CASE(AStartPastTheLastRecordSaysNothingIsWrittenThereYet) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 10 -c walseg.segment_size=1MB").status == 0);
  const std::string end = [&] {
    const std::string out = run("recover --dir '" + wal + "'").out;
    const auto at = out.find("end of WAL: ") + 12;
    return out.substr(at, out.find('\n', at) - at);
  }();
  auto r = run("dump --dir '" + wal + "' --start 0/1F0000");
  BOOST_TEST(r.status == 0, r.err);
  // One end, the same in both lines (the new-user trial: the second named the position asked
  // for, "invalid magic number ... LSN 0/1F0000", as if the WAL ended there).
  BOOST_TEST(contains(r.out, "no record at or after 0/1F0000: not yet written (the WAL ends at " + end +
                                 ")\nend of WAL: " + end + ", before 0/1F0000\n"),
             r.out);
  BOOST_TEST(!contains(r.out, "invalid magic number"), r.out);
}

// New-user trial 14: `dump --limit N` printed no last line at all, though README says dump ends
// with `end of WAL:`; a script could not tell a limit from an empty tail.
BOOST_AUTO_TEST_CASE(ALimitSaysItStoppedTheDump) {
  const std::string wal = dir + "/wal";
  BOOST_REQUIRE(run("write --dir '" + wal + "' --records 10 -c walseg.segment_size=1MB").status == 0);
  auto r = run("dump --dir '" + wal + "' --limit 3");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.out.ends_with("stopped after 3 records (--limit 3)\n"), r.out);
  BOOST_TEST(!contains(r.out, "end of WAL"), r.out);
}

// New-user trial: recover on a directory that holds no WAL (a mistyped --dir) printed "end of
// WAL: none ... corruption: no" and exited 0, which a script takes for a recovered WAL.
BOOST_AUTO_TEST_CASE(ADirectoryWithoutAWal_IsAnErrorNotAnEmptyWal) {
  fs::create_directories(dir + "/empty");
  fs::create_directories(dir + "/other");
  std::ofstream(dir + "/other/notes.txt") << "not WAL\n";
  for (const std::string d : {"empty", "other"})
    for (const std::string cmd : {"recover", "dump"}) {
      auto r = run(cmd + " --dir '" + dir + "/" + d + "'");
      BOOST_TEST(r.status == 1, cmd << " " << d << ": " << r.out << r.err);
      BOOST_TEST(contains(r.err, "no WAL in \"" + dir + "/" + d + "\": it has no walseg.control"), cmd << ": " << r.err);
      BOOST_TEST(!contains(r.out, "corruption: no"), cmd << ": " << r.out);
      BOOST_TEST(!contains(r.out, "end of WAL"), cmd << ": " << r.out);
    }
  BOOST_TEST(fs::exists(dir + "/other/notes.txt"));
}

BOOST_AUTO_TEST_SUITE_END()

// Break-it round 21: a file put at a future segment name while `write` ran stopped the writer
// ("could not create segment ...: file exists"), and recover then said only "invalid magic
// number 696D in WAL segment ..., corruption: no": the cause, someone's file, was unsaid.
BOOST_FIXTURE_TEST_SUITE(tool_recover_foreign_segment, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(AStopAtSomeonesFileUnderTheNextSegmentNameSaysWhoseItIs) {
  const std::string wal = dir + "/wal";
  ToolProcess p({"write", "--dir", wal, "--seconds", "60", "--record-size", "2000", "-c", "walseg.segment_size=1MB"},
                dir + "/out", dir + "/err");
  // Once three segments exist, someone's file goes at the first free name after them.
  std::string planted;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  while (planted.empty() && std::chrono::steady_clock::now() < deadline) {
    std::uint64_t highest = 0;
    int segments = 0;
    if (fs::exists(wal))
      for (const auto& e : fs::directory_iterator(wal)) {
        const std::string n = e.path().filename();
        if (n.size() == 24 && n.find_first_not_of("0123456789ABCDEF") == std::string::npos) {
          ++segments;
          highest = std::max<std::uint64_t>(highest, std::stoull(n.substr(16), nullptr, 16));
        }
      }
    if (segments >= 3)
      for (std::uint64_t n = highest + 1; planted.empty() && n < highest + 64; ++n) {
        const std::string name = fmt::format("00000001{:08X}{:08X}", 0, n);
        const int fd = ::open((wal + "/" + name).c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0) continue;
        BOOST_REQUIRE(::write(fd, "mine\n", 5) == 5);
        ::close(fd);
        planted = name;
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  BOOST_REQUIRE(!planted.empty());
  const int raw = p.wait(60);
  BOOST_TEST((raw >= 0 && WIFEXITED(raw) && WEXITSTATUS(raw) == 1));
  std::ostringstream kept;
  kept << std::ifstream(wal + "/" + planted).rdbuf();
  BOOST_TEST(kept.str() == "mine\n");
  auto r = run("recover --dir '" + wal + "'");
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST(contains(r.out, "invalid magic number 696D in WAL segment " + planted), r.out);
  BOOST_TEST(contains(r.out, "note: segment \"" + planted + "\" is not walseg's: it has a segment's name but walseg did "
                             "not make it for this WAL"),
             r.out);
  BOOST_TEST(contains(r.out, "move it out of the directory to let writing go on"), r.out);
}

// Break-it round 23 M5: the note advised "move it out ... to let writing go on" also where WAL
// goes on after someone's file (corruption: write refuses either way), and said nothing for a
// symbolic link at the name.
BOOST_AUTO_TEST_CASE(BreakIt23_M5_TheNoteSaysDamageWhereWalGoesOnAndNamesALink) {
  const std::string wal = dir + "/wal";
  BOOST_TEST_REQUIRE(run("write --dir '" + wal + "' --records 400 --record-size 8kB -c walseg.segment_size=1MB").status == 0);
  const std::string second = "000000010000000000000002";
  BOOST_TEST_REQUIRE(fs::exists(wal + "/000000010000000000000003"));
  fs::rename(wal + "/" + second, dir + "/moved");
  { std::ofstream(wal + "/" + second) << "mine\n"; }
  auto r = run("recover --dir '" + wal + "'");
  BOOST_TEST(r.status == 2, r.out << r.err);
  BOOST_TEST(contains(r.out, "corruption: yes"), r.out);
  BOOST_TEST(contains(r.out, "note: segment \"" + second + "\" is not walseg's"), r.out);
  BOOST_TEST(contains(r.out, "this is damage, not the end of the WAL"), r.out);
  BOOST_TEST(!contains(r.out, "to let writing go on"), r.out);
  fs::remove(wal + "/" + second);
  fs::create_symlink(dir + "/moved", wal + "/" + second);
  r = run("recover --dir '" + wal + "'");
  // A link to this WAL's own segment (round 25 H2): never "move it out", which would take its
  // records away.
  BOOST_TEST(contains(r.out, "note: segment \"" + second + "\" holds this WAL (its first page says so)"), r.out);
  BOOST_TEST(contains(r.out, "it is a symbolic link, not a regular file"), r.out);
  BOOST_TEST(contains(r.out, "put the segment file itself back under this name in place of the link"), r.out);
  BOOST_TEST(!contains(r.out, "move it out of the directory to let writing go on"), r.out);
}

BOOST_AUTO_TEST_SUITE_END()
