// Case C33 (shipped or restored segments that are short, all zeros, or named for another
// segment size), through the tool as a user runs it (tool_test_util.h): a WAL of 16 MB
// segments whose only written segment holds a valid first page and zeros after it, beside
// three files planted under the next segment names: a full-size file of written zeros (a
// future segment someone preallocated), a full-size sparse one, and one of 5 MB (a partial
// segment). `walseg ls` shows the zero ones as preallocated and not walseg's, and the short
// one with its actual and expected size; `walseg dump` and `walseg recover` report the valid
// end LSN with no corruption; and no command truncates, moves or rewrites any of the files.
//
// Not applicable: C33's restore test (a zero file under a name recovery needs, with a standby's
// restore_command) concerns PostgreSQL's own recovery, which walseg does not hook; walseg has
// no archive or backup helper that could offer a future segment as written WAL.
#define BOOST_TEST_MODULE tool_segment_files
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tool_test_util.h"

using namespace walseg_test;

namespace {

constexpr std::uint64_t kSeg16 = 16ull << 20;
const std::string kSettings = "-c walseg.segment_size=16MB -c walseg.prealloc_segments=0";

// What a file is, for "nothing was changed": its size and its bytes' hash.
struct Snapshot {
  std::uint64_t size = 0;
  std::size_t hash = 0;
  bool operator==(const Snapshot&) const = default;
};

std::map<std::string, Snapshot> snapshot(const std::string& dir) {
  std::map<std::string, Snapshot> m;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() == "walseg.lock") continue;  // a writer's start puts its PID there
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    m[e.path().filename().string()] = {static_cast<std::uint64_t>(fs::file_size(e.path())),
                                       std::hash<std::string>{}(s.str())};
  }
  return m;
}

// The "what" column of `walseg ls`'s line for `name` (after name, size and allocated; "" if
// there is no such line), so that the size columns cannot satisfy a check of the text.
std::string ls_line(const std::string& out, const std::string& name) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) != 0) continue;
    std::istringstream fields(line);
    std::string n, size, allocated, what;
    fields >> n >> size >> allocated;
    std::getline(fields, what);
    return what;
  }
  return "";
}

struct SegmentFilesTest : ToolTest {
  std::string wal = dir + "/wal";
  const std::string valid = "000000010000000000000001";  // the records, then zeros
  const std::string short5 = "000000010000000000000002";  // 5 MB
  const std::string zeros = "000000010000000000000003";   // 16 MB of written zeros
  const std::string sparse = "000000010000000000000004";  // 16 MB, a hole

  SegmentFilesTest() {
    auto w = run(fmt::format("write --dir '{}' --records 5 --record-size 100 {}", wal, kSettings));
    BOOST_TEST_REQUIRE(w.status == 0, w.err);
    plant(short5, 5ull << 20, true);
    plant(zeros, kSeg16, true);
    plant(sparse, kSeg16, false);
  }
  void plant(const std::string& name, std::uint64_t size, bool written) {
    const std::string p = wal + "/" + name;
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    BOOST_TEST_REQUIRE(fd >= 0, p);
    const std::vector<char> z(1 << 20, 0);
    if (written)
      for (std::uint64_t off = 0; off < size; off += z.size())
        BOOST_TEST_REQUIRE(::pwrite(fd, z.data(), z.size(), static_cast<off_t>(off)) == static_cast<ssize_t>(z.size()));
    BOOST_TEST_REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
    ::close(fd);
  }
  std::string end_lsn() {
    auto d = run("dump --dir '" + wal + "'");
    BOOST_TEST_REQUIRE(d.status == 0, d.err);
    const auto at = d.out.find("end of WAL: ");
    BOOST_TEST_REQUIRE(at != std::string::npos);
    return d.out.substr(at);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_segment_files, SegmentFilesTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(C33_ls_marks_zero_files_preallocated_and_the_short_one_with_actual_and_expected_size) {
  auto r = run("ls --dir '" + wal + "'");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST_MESSAGE(r.out);
  BOOST_TEST(contains(ls_line(r.out, valid), "holds WAL"), ls_line(r.out, valid));
  for (const std::string& z : {zeros, sparse}) {
    const std::string line = ls_line(r.out, z);
    BOOST_TEST(contains(line, "preallocated"), line);
    BOOST_TEST(contains(line, "not walseg's"), line);
    BOOST_TEST(!contains(line, "holds WAL"), line);
  }
  const std::string s = ls_line(r.out, short5);
  BOOST_TEST(contains(s, fmt::format("{} bytes", 5ull << 20)), s);
  BOOST_TEST(contains(s, fmt::format("{} bytes", kSeg16)), s);
  BOOST_TEST(!contains(s, "holds WAL"), s);
}

BOOST_AUTO_TEST_CASE(C33_dump_and_recover_report_the_valid_end_and_no_corruption) {
  auto rec = run("recover --dir '" + wal + "'");
  BOOST_TEST(rec.status == 0, rec.out << rec.err);
  BOOST_TEST(contains(rec.out, "records: 5\n"), rec.out);
  BOOST_TEST(contains(rec.out, "corruption: no"), rec.out);
  auto d = run("dump --dir '" + wal + "'");
  BOOST_TEST(d.status == 0, d.err);
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = d.out.find("rmgr: ", at)) != std::string::npos; ++at) ++lines;
  BOOST_TEST(lines == 5u);
  // Both name the same end: the 5th record's end, inside the first page of segment 1.
  const auto at = rec.out.find("end of WAL: ");
  BOOST_TEST_REQUIRE(at != std::string::npos);
  const std::string lsn = rec.out.substr(at + 12, rec.out.find('\n', at) - at - 12);
  unsigned hi = 1, lo = 0;
  BOOST_TEST_REQUIRE(std::sscanf(lsn.c_str(), "%X/%X", &hi, &lo) == 2);
  BOOST_TEST(hi == 0u);
  BOOST_TEST(lo > kSeg16);
  BOOST_TEST(lo < kSeg16 + 8192);
  BOOST_TEST(contains(d.out, "end of WAL: "), d.out);
  // --start in the zeros of the valid segment and at the start of each planted file: no record,
  // no corruption.
  for (std::uint64_t start : {std::uint64_t{lo} + 64, kSeg16 + 8192, 2 * kSeg16, 3 * kSeg16}) {
    auto s = run(fmt::format("dump --dir '{}' --start 0/{:X}", wal, start));
    BOOST_TEST_CONTEXT("dump --start 0/" << std::hex << start) {
      BOOST_TEST(s.status == 0, s.out << s.err);
      BOOST_TEST(!contains(s.out, "rmgr: "), s.out);
    }
  }
}

BOOST_AUTO_TEST_CASE(C33_no_command_truncates_moves_or_rewrites_a_file) {
  const auto before = snapshot(wal);
  for (const char* cmd : {"ls", "dump", "recover"}) run(std::string(cmd) + " --dir '" + wal + "'");
  run(fmt::format("dump --dir '{}' --start 0/{:X}", wal, 2 * kSeg16));
  const auto after = snapshot(wal);
  BOOST_TEST(before.size() == after.size());
  for (const auto& [name, snap] : before) {
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST_REQUIRE(after.count(name) == 1u);
      BOOST_TEST(after.at(name).size == snap.size);
      BOOST_TEST((after.at(name) == snap));
    }
  }
}

// A segment the WAL's records run through, cut short (1 MB segments, to keep it quick):
// recover stops there as corruption naming the file, and write refuses it with both sizes
// instead of taking it for an append-mode segment (switching to an append-mode method, as the
// old advice said, would write after the cut as if nothing were missing).
BOOST_AUTO_TEST_CASE(C33_a_cut_segment_inside_the_wal_is_corruption_and_write_refuses_it_with_both_sizes) {
  const std::string cut = dir + "/cut";
  const std::string k1MB = " -c walseg.segment_size=1MB -c walseg.prealloc_segments=0";
  BOOST_TEST_REQUIRE(run("write --dir '" + cut + "' --records 300 --record-size 8kB" + k1MB).status == 0);
  const std::string seg2 = cut + "/000000010000000000000002";
  BOOST_TEST_REQUIRE(::truncate(seg2.c_str(), 512 * 1024) == 0);
  const auto before = snapshot(cut);
  auto rec = run("recover --dir '" + cut + "'");
  BOOST_TEST(rec.status == 2, rec.out << rec.err);
  BOOST_TEST(contains(rec.out, "corruption: yes"), rec.out);
  BOOST_TEST(contains(rec.out, seg2), rec.out);
  auto w = run("write --dir '" + cut + "' --records 1" + k1MB);
  BOOST_TEST(w.status != 0);
  BOOST_TEST(contains(w.err, seg2), w.err);
  BOOST_TEST(contains(w.err, "(524288 of 1048576 bytes)"), w.err);
  BOOST_TEST(!contains(w.err, "append mode"), w.err);
  BOOST_TEST((snapshot(cut) == before));
}

BOOST_AUTO_TEST_SUITE_END()
