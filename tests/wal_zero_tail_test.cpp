#define BOOST_TEST_MODULE wal_zero_tail
#include <boost/test/unit_test.hpp>

// Case C27 (readers must stop at the logical end, not at the file size): a segment holding
// exactly 100 records followed by the zeros its init method left (every method, and a
// recycled file, whose tail holds its earlier life instead) is read back by every read path
// walseg has (WalReader's sequential read, seek and find_next_record into the tail,
// find_end_of_wal, `walseg dump --start` there, `walseg recover`) as exactly those records and
// then a clean end of WAL at the 100th record's end: never a zero-length record, a parse error
// or corruption. Zeros before walseg.control's durable LSN are corruption naming the file, the
// offset and the LSN; zeros after it are the end.
//
// C27's last bullet (derived files sized to their content) does not apply: walseg has no copy,
// archive or compaction helper that writes segments (switch_timeline's copy is a segment of
// the WAL itself and must be full size, invariant 1).

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "tool_test_util.h"
#include "wal_writer_fixture.h"
#include "walseg/segment_name.h"
#include "walseg/wal.h"

using namespace walseg;
using namespace walseg_test;

namespace {

constexpr int kRecords = 100;
constexpr std::size_t kRecordBytes = 300;  // 100 records end in the segment's 5th page

struct ZeroTailFixture : WalWriterFixture {
  std::vector<Lsn> ends;  // each record's end, as the writer returned it

  ZeroTailFixture() { cfg.prealloc_segments = 0; }
  // Writes n more records into the WAL (opening it), flushed, then closes it.
  void write_records(int n, std::uint64_t first_seq = 0) {
    auto wal = Wal::open(dir.path(), cfg);
    for (int i = 0; i < n; ++i) ends.push_back(wal->writer().append(seq_payload(first_seq + i, kRecordBytes)));
    wal->writer().flush(ends.back());
  }
  WalReaderOptions options() const { return reader_options_for(*read_control(dir.path())); }
  std::string segment_path(Lsn lsn) const { return dir / segment_file_name(1, lsn / kSegBytes, kSegBytes); }
  void zero_at(Lsn lsn, std::size_t len) {
    const int fd = ::open(segment_path(lsn).c_str(), O_WRONLY);
    BOOST_REQUIRE(fd >= 0);
    const std::vector<char> z(len, 0);
    BOOST_REQUIRE(::pwrite(fd, z.data(), len, static_cast<off_t>(lsn % kSegBytes)) == static_cast<ssize_t>(len));
    ::close(fd);
  }
};

// Reads from wherever r stands: the sequence numbers read, checking each record is intact.
std::vector<std::uint64_t> read_seqs(WalReader& r) {
  std::vector<std::uint64_t> seqs;
  WalRecord rec;
  while (r.next(&rec)) {
    BOOST_TEST(rec.payload.size() == kRecordBytes, "record of " << rec.payload.size() << " bytes at " << format_lsn(rec.lsn));
    auto s = seq_of(rec.payload);
    BOOST_REQUIRE_MESSAGE(s, "damaged record at " << format_lsn(rec.lsn));
    seqs.push_back(*s);
  }
  return seqs;
}

std::string text_of(const WalStop& s) { return describe(s); }

void check_clean_end(const WalStop& stop, Lsn end) {
  BOOST_TEST_MESSAGE("stopped: " << describe(stop));
  BOOST_TEST(!stop.corruption, describe(stop));
  BOOST_TEST(stop.end_lsn == end);
}

// Every library read path over a segment whose records end at `end`, zeros or stale bytes after.
void check_library_paths(const std::string& dir, const WalReaderOptions& o, Lsn first, Lsn end, int n) {
  WalReader r = WalReader::open(dir, o);
  // `first` may be a page boundary: the first record begins after its header.
  const auto found = r.find_next_record(first);
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(*found - first < 64u);
  BOOST_TEST(read_seqs(r).size() == static_cast<std::size_t>(n));
  check_clean_end(r.stop(), end);
  // Positions inside the tail: the insert position, a byte further, the next page, the
  // segment's last page: "not yet written", never a record.
  for (Lsn at : {end, end + 1, end + 8, end + 100 + 8192, (end / kSegBytes + 1) * kSegBytes - 8192}) {
    BOOST_TEST_CONTEXT("find_next_record(" << format_lsn(at) << ")") {
      BOOST_TEST(!r.find_next_record(at).has_value());
      BOOST_TEST(read_seqs(r).empty());
      BOOST_TEST(!r.stop().corruption, describe(r.stop()));
      BOOST_TEST(r.stop().end_lsn >= end);
    }
  }
  for (Lsn at : {end, end - end % 8192 + 8192}) {
    BOOST_TEST_CONTEXT("seek(" << format_lsn(at) << ")") {
      r.seek(at);
      BOOST_TEST(read_seqs(r).empty());
      BOOST_TEST(!r.stop().corruption, describe(r.stop()));
    }
  }
  const RecoveryResult res = find_end_of_wal(dir, o);
  BOOST_TEST(res.end_lsn == end);
  BOOST_TEST(!res.corruption, res.stop_reason);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(wal_zero_tail, ZeroTailFixture)

BOOST_AUTO_TEST_CASE(C27_every_init_method_100_records_then_a_clean_end_on_every_read_path) {
  for (InitMethod m : {InitMethod::kZeroWrite, InitMethod::kPosixFallocate, InitMethod::kGlibcEmulation,
                       InitMethod::kSparse, InitMethod::kFallocateKeepSize, InitMethod::kNone}) {
    BOOST_TEST_CONTEXT("init_method " << to_string(m)) {
      ZeroTailFixture f;
      f.cfg.init_method = m;
      f.write_records(kRecords);
      const WalReaderOptions o = f.options();
      check_library_paths(f.dir.path(), o, *o.start_lsn, f.ends.back(), kRecords);
    }
  }
}

BOOST_AUTO_TEST_CASE(C27_a_recycled_segment_with_100_new_records_ends_cleanly_before_its_old_life) {
  // Three segments full, retired and recycled forward; the writer then enters a recycled file
  // whose tail holds pages of its earlier life (walseg does not zero recycled files: its page
  // addresses tell them apart, invariant 5).
  std::uint64_t seq = 0;
  {
    auto wal = Wal::open(dir.path(), cfg);
    WalWriter& w = wal->writer();
    while (w.insert_lsn() < 4 * kSegBytes) ends.push_back(w.append(seq_payload(seq++, kRecordBytes)));
    w.flush(ends.back());
    w.truncate_before(w.flushed_lsn());
    BOOST_REQUIRE(wal->manager().stats().recycled >= 1u);
    while (w.insert_lsn() < 5 * kSegBytes) ends.push_back(w.append(seq_payload(seq++, kRecordBytes)));
    w.flush(ends.back());
  }
  const Lsn seg5 = 5 * kSegBytes;
  // The segment the next records go to is a recycled file: its old life reads as stale.
  {
    WalReader probe = WalReader::open(dir.path(), options());
    probe.seek(seg5 + 8192 * 64);
    BOOST_TEST(read_seqs(probe).empty());
  }
  auto wal = Wal::open(dir.path(), cfg);
  const std::size_t before = ends.size();
  for (int i = 0; i < kRecords; ++i) ends.push_back(wal->writer().append(seq_payload(seq++, kRecordBytes)));
  wal->writer().flush(ends.back());
  wal.reset();
  // Records of segment 5: those that begin in it (the first may continue from segment 4).
  WalReader r = WalReader::open(dir.path(), options());
  const auto first = r.find_next_record(seg5);
  BOOST_REQUIRE(first);
  const std::size_t in_seg5 = read_seqs(r).size();
  check_clean_end(r.stop(), ends.back());
  BOOST_TEST(in_seg5 >= static_cast<std::size_t>(kRecords));
  BOOST_TEST(in_seg5 <= ends.size() - before + 400);
  check_library_paths(dir.path(), options(), *first, ends.back(), static_cast<int>(in_seg5));
}

BOOST_AUTO_TEST_CASE(C27_a_reader_at_the_end_returns_later_records_only_after_an_explicit_seek) {
  auto wal = Wal::open(dir.path(), cfg);
  for (int i = 0; i < kRecords; ++i) ends.push_back(wal->writer().append(seq_payload(i, kRecordBytes)));
  wal->writer().flush(ends.back());
  WalReaderOptions o = reader_options_for(wal->manager().control());
  WalReader r = WalReader::open(dir.path(), o);
  BOOST_TEST(read_seqs(r).size() == static_cast<std::size_t>(kRecords));
  check_clean_end(r.stop(), ends.back());
  const Lsn stopped_at = r.stop().end_lsn;
  for (int i = 0; i < 10; ++i) ends.push_back(wal->writer().append(seq_payload(kRecords + i, kRecordBytes)));
  wal->writer().flush(ends.back());
  // Documented in wal_reader.h: once stopped, next() keeps returning false. Its end is the one
  // it found, not the file's or the writer's.
  BOOST_TEST(read_seqs(r).empty());
  BOOST_TEST(r.stop().end_lsn == stopped_at);
  // The refresh is explicit: a seek to where it stopped reads the 10 new records.
  r.seek(stopped_at);
  const auto later = read_seqs(r);
  BOOST_REQUIRE_EQUAL(later.size(), 10u);
  BOOST_TEST(later.front() == static_cast<std::uint64_t>(kRecords));
  check_clean_end(r.stop(), ends.back());
}

BOOST_AUTO_TEST_CASE(C27_zeros_before_the_durable_lsn_are_corruption_naming_path_offset_and_lsn) {
  write_records(kRecords);
  {
    auto wal = Wal::open(dir.path(), cfg);
    wal->checkpoint();  // durable_lsn = the 100th record's end
  }
  BOOST_REQUIRE_EQUAL(read_control(dir.path())->durable_lsn, ends.back());
  const Lsn page = (ends[kRecords / 2] / 8192) * 8192;  // a page in the middle of the records
  BOOST_REQUIRE(page > *options().start_lsn);
  zero_at(page, 8192);
  WalReader r = WalReader::open(dir.path(), options());
  const auto seqs = read_seqs(r);
  BOOST_TEST(seqs.size() < static_cast<std::size_t>(kRecords));
  const WalStop& s = r.stop();
  BOOST_TEST_MESSAGE("stopped: " << describe(s));
  BOOST_TEST(s.corruption);
  BOOST_TEST(s.path == segment_path(page));
  BOOST_TEST(s.offset / 8192 == page % kSegBytes / 8192, "offset " << s.offset);
  // The LSN named is the first record not returned: it begins right after the last one read
  // and reaches into the zeroed page (it may begin on the page before).
  BOOST_REQUIRE(!seqs.empty());
  BOOST_TEST(s.end_lsn == ends[seqs.size() - 1]);
  BOOST_TEST(s.failed_lsn >= s.end_lsn);
  BOOST_TEST(s.failed_lsn < page + 8192);
  // The message names the LSN expected where the zeros are (the page's).
  BOOST_TEST(contains(text_of(s), "LSN " + format_lsn(page)), text_of(s));
  const std::string text = describe(s);
  BOOST_TEST(contains(text, segment_path(page)), text);
  BOOST_TEST(contains(text, fmt::format("offset {}", s.offset)), text);
  BOOST_TEST(find_end_of_wal(dir.path(), options()).corruption);
}

BOOST_AUTO_TEST_CASE(C27_zeros_after_the_durable_lsn_are_the_end_of_wal) {
  write_records(kRecords);
  {
    auto wal = Wal::open(dir.path(), cfg);
    wal->checkpoint();
  }
  const Lsn durable = read_control(dir.path())->durable_lsn;
  BOOST_REQUIRE_EQUAL(durable, ends.back());
  // 10 records after the durable point, then lost (as a power cut may lose them).
  write_records(10, kRecords);
  BOOST_REQUIRE(read_control(dir.path())->durable_lsn == durable);
  zero_at(durable, static_cast<std::size_t>(ends.back() - durable));
  WalReader r = WalReader::open(dir.path(), options());
  BOOST_TEST(read_seqs(r).size() == static_cast<std::size_t>(kRecords));
  check_clean_end(r.stop(), durable);
}

BOOST_AUTO_TEST_SUITE_END()

// The tool's read paths on the same WAL: the user's view.
struct ZeroTailToolFixture : ZeroTailFixture, ToolTest {};

BOOST_FIXTURE_TEST_SUITE(wal_zero_tail_tool, ZeroTailToolFixture, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(C27_dump_and_recover_print_100_records_then_end_of_wal_and_exit_0) {
  write_records(kRecords);
  const std::string d = "--dir '" + ZeroTailFixture::dir.path() + "'";
  auto rec = run("recover " + d);
  BOOST_TEST(rec.status == 0, rec.err);
  BOOST_TEST(contains(rec.out, fmt::format("records: {}\n", kRecords)), rec.out);
  BOOST_TEST(contains(rec.out, "end of WAL: " + format_lsn(ends.back()) + "\n"), rec.out);
  BOOST_TEST(contains(rec.out, "corruption: no"), rec.out);
  auto all = run("dump " + d);
  BOOST_TEST(all.status == 0, all.err);
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = all.out.find("rmgr: ", at)) != std::string::npos; ++at) ++lines;
  BOOST_TEST(lines == static_cast<std::size_t>(kRecords));
  for (Lsn at : {ends.back(), ends.back() + 8, ends.back() - ends.back() % 8192 + 8192}) {
    BOOST_TEST_CONTEXT("dump --start " << format_lsn(at)) {
      auto r = run("dump " + d + " --start " + format_lsn(at));
      BOOST_TEST(r.status == 0, r.err);
      BOOST_TEST(!contains(r.out, "rmgr: "), r.out);
      BOOST_TEST(contains(r.out, "end of WAL: "), r.out);
      BOOST_TEST(r.err.empty(), r.err);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
