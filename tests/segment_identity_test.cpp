#define BOOST_TEST_MODULE segment_identity
#include <boost/test/unit_test.hpp>

// A segment name stays walseg's only while the file under it is the one walseg made: not one
// moved onto it, and not one that also has another name (a hard link, `cp -al`), since every
// write into it would change that other name's file too. Checked by the start-up scan
// (foreign_reason, dir_scan.h) and again when the writer opens a segment it was handed
// (WalWriter::open_segment), because a preallocated segment waits minutes before it is used.
// Break-it round 3 found both: a hard link at a segment name made the writer overwrite the
// records of the segment it linked to, and a file moved onto a preallocated segment was
// written over.

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "fs_test_util.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/wal.h"
#include "walseg/wal_reader.h"

using namespace walseg;
using walseg_test::error_is;
using walseg_test::path_exists;
using walseg_test::read_all;

namespace {

constexpr std::uint64_t kSeg = std::uint64_t{1} << 20;
constexpr std::size_t kRecord = 3000;

Config small_config(std::uint32_t prealloc) {
  Config c;
  c.segment_size_bytes = kSeg;
  c.min_size_bytes = 4 * kSeg;
  c.max_size_bytes = 64 * kSeg;
  c.prealloc_segments = prealloc;
  return c;
}

std::string seg_name(SegNo segno) { return segment_file_name(1, segno, kSeg); }

std::uint64_t records_in(const std::string& dir) {
  const WalControl c = read_control(dir).value();
  const RecoveryResult r = find_end_of_wal(dir, reader_options_for(c));
  BOOST_TEST(!r.corruption, r.stop_reason);
  return r.records;
}

// Appends and flushes records of kRecord bytes until a flush fails or `limit` succeeded;
// returns how many were acknowledged and, through *failure, the error if one came.
std::uint64_t commit_until_failure(WalWriter& w, std::uint64_t limit, std::string* failure) {
  std::vector<std::byte> rec(kRecord, std::byte{5});
  std::uint64_t acked = 0;
  try {
    for (; acked < limit; ++acked) w.flush(w.append(rec));
  } catch (const Error& e) {
    *failure = e.what();
  }
  return acked;
}

void wait_for_file(const std::string& path) {
  for (int i = 0; i < 2000 && !path_exists(path); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  BOOST_REQUIRE_MESSAGE(path_exists(path), path << " was never made");
}

struct Fixture : walseg_test::FreshDirFixture {
  walseg_test::TempDir dir;
  walseg_test::LogCapture logs;
  std::string wal() { return dir / "wal"; }
  // 500 commits, into segment 2; the highest segment number then in the directory.
  SegNo write_into_segment_2() {
    {
      auto w = Wal::open(wal(), small_config(0));
      std::string failure;
      BOOST_TEST(commit_until_failure(w->writer(), 500, &failure) == 500u, failure);
    }
    SegNo highest = 0;
    for (const auto& n : walseg_test::list_names(wal()))
      if (auto s = parse_segment_file_name(n, kSeg)) highest = std::max(highest, s->segno);
    return highest;
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(segment_identity, Fixture)

BOOST_AUTO_TEST_CASE(a_hard_link_at_a_segment_name_is_refused_at_open_and_neither_file_changes) {
  const SegNo highest = write_into_segment_2();
  const std::uint64_t before = records_in(wal());
  const std::string linked = wal() + "/" + seg_name(highest + 1);
  BOOST_REQUIRE(::link((wal() + "/" + seg_name(1)).c_str(), linked.c_str()) == 0);
  const std::vector<char> content = read_all(linked);
  BOOST_CHECK_EXCEPTION(Wal::open(wal(), small_config(0)), Error, error_is(EINVAL, {"hard links", "out of the directory"}));
  BOOST_TEST((read_all(linked) == content));
  BOOST_TEST(records_in(wal()) == before);
}

BOOST_AUTO_TEST_CASE(a_file_moved_onto_a_preallocated_segment_is_never_written_and_the_writer_stops) {
  auto w = Wal::open(wal(), small_config(2));
  std::string failure;
  BOOST_REQUIRE(commit_until_failure(w->writer(), 1, &failure) == 1u);
  const std::string next = wal() + "/" + seg_name(2);
  wait_for_file(next);
  const std::string mine = dir / "mine";
  std::vector<char> bytes(kSeg);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 131) ^ (i >> 9));
  {
    FILE* f = std::fopen(mine.c_str(), "wb");
    BOOST_REQUIRE(f != nullptr);
    BOOST_REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
    std::fclose(f);
  }
  std::filesystem::rename(mine, next);
  const std::uint64_t acked = 1 + commit_until_failure(w->writer(), 1000, &failure);
  BOOST_TEST(acked < 1000u, "the writer went on into the replaced segment");
  BOOST_TEST(failure.find("no longer the segment walseg made") != std::string::npos, failure);
  BOOST_TEST((read_all(next) == bytes));
  w.reset();
  std::filesystem::rename(next, mine);  // out of the way, as the message asks
  BOOST_TEST(records_in(wal()) >= acked);
}

BOOST_AUTO_TEST_CASE(a_preallocated_segment_linked_to_another_name_is_never_written_and_the_writer_stops) {
  auto w = Wal::open(wal(), small_config(2));
  std::string failure;
  BOOST_REQUIRE(commit_until_failure(w->writer(), 1, &failure) == 1u);
  const std::string next = wal() + "/" + seg_name(2);
  wait_for_file(next);
  const std::string other = dir / "other-name";
  BOOST_REQUIRE(::link(next.c_str(), other.c_str()) == 0);
  const std::vector<char> content = read_all(other);
  const std::uint64_t acked = 1 + commit_until_failure(w->writer(), 1000, &failure);
  BOOST_TEST(acked < 1000u, "the writer went on into the linked segment");
  BOOST_TEST(failure.find("hard links") != std::string::npos, failure);
  BOOST_TEST((read_all(other) == content));
  w.reset();
  BOOST_TEST(records_in(wal()) >= acked);
}

// Break-it round 37: overlayfs copies a lower layer's segment up when the writer first opens it
// for writing, so the file under the name is another than the one the opening scanned; the
// refusal said "move it out", which took 93 acknowledged records out of the WAL. A file that
// holds this WAL's pages is refused with "do not move it out" (a copy put over the segment
// between the scan and the writer's open stands in for the copy-up here).
BOOST_AUTO_TEST_CASE(a_segment_with_this_wals_pages_under_a_new_identity_is_not_said_to_be_moved_out) {
  const SegNo highest = write_into_segment_2();
  const std::uint64_t before = records_in(wal());
  const std::string last = wal() + "/" + seg_name(highest), copy = dir / "copy";
  failpoint::Spec swap;
  swap.kind = failpoint::Kind::kCall;
  swap.call = [&] {
    std::filesystem::copy_file(last, copy);
    std::filesystem::rename(copy, last);
  };
  failpoint::arm("wal.before_recovery", swap);
  const std::vector<char> content = read_all(last);
  BOOST_CHECK_EXCEPTION(Wal::open(wal(), small_config(0)), Error,
                        error_is(EEXIST, {"holds this WAL's pages, so do not move it out", "start the writer again"}));
  failpoint::disarm_all();
  BOOST_TEST((read_all(last) == content));
  // As the message says: the next opening takes the file as it is.
  auto w = Wal::open(wal(), small_config(0));
  BOOST_TEST(w->recovery().records == before);
}

BOOST_AUTO_TEST_SUITE_END()
