#define BOOST_TEST_MODULE wal_writer_segment_gone
#include <boost/test/unit_test.hpp>

// A segment removed or replaced under the writer (break-it round 5 F8): past half of segment
// N the writer opens N+1 early; an `rm` or `mv` onto N+1's name then left the writer writing
// and fdatasyncing into a file no longer in the directory, acknowledging every commit, and
// exiting 0: 813 to 23467 acknowledged records missing afterwards. Now no commit written into
// a segment that lost its name is acknowledged, whether it was opened early or is the one
// being written, and a file moved onto the name is left as it is.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "walseg/segment_name.h"
#include "wal_writer_fixture.h"

using namespace walseg;
using namespace walseg_test;

namespace {

std::string name_of(SegNo segno) { return segment_file_name(1, segno, kSegBytes); }

/// True if this process has `path` open (the writer's descriptors are its own).
bool open_here(const std::string& path) {
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(e.path(), ec) == path) return true;
  }
  return false;
}

/// Commits 1000-byte records until the insert position is past `lsn`.
void commit_past(WalWriter& w, Appended& a, Lsn lsn) {
  while (w.insert_lsn() <= lsn) w.flush(a.add(w, 1000));
}

/// Commits until one throws or `limit` is passed; returns the acknowledged end LSNs' last and
/// whether a commit threw.
bool commits_fail_before(WalWriter& w, Appended& a, Lsn limit, Lsn* last_acked) {
  while (w.insert_lsn() < limit) {
    const Lsn end = a.add(w, 1000);
    try {
      w.flush(end);
    } catch (const Error& e) {
      BOOST_TEST_MESSAGE(e.what());
      BOOST_TEST(w.flushed_lsn() < end);
      return true;
    }
    *last_acked = end;
  }
  return false;
}

/// Every commit acknowledged (up to last_acked) reads back.
void check_acknowledged_read_back(const std::string& dir, const Config& cfg, const Appended& a, Lsn last_acked) {
  WalContents got = read_wal(dir, cfg);
  BOOST_REQUIRE(!got.records.empty());
  BOOST_TEST(got.records.back().end_lsn >= last_acked, "acknowledged up to " << format_lsn(last_acked)
                                                                              << ", WAL ends at "
                                                                              << format_lsn(got.records.back().end_lsn));
  for (std::size_t i = 0; i < got.records.size() && i < a.payloads.size(); ++i)
    BOOST_TEST(same_bytes(got.records[i].payload, a.payloads[i]));
}

void replace_or_remove_next_segment(bool replace, IoMethod io) {
  WalWriterFixture f;
  f.cfg.io_method = io;
  f.cfg.prealloc_segments = 2;
  auto wal = Wal::open(f.dir.path(), f.cfg);
  WalWriter& w = wal->writer();
  Appended a;
  BOOST_REQUIRE(wal->manager().wait_ready(2, std::chrono::seconds(30)) >= 2);
  // Past half of segment 1: segment 2 is open already (the writer's early open).
  commit_past(w, a, lsn_of_segment(1, kSegBytes * 3 / 4, kSegBytes));
  const std::string path = f.dir / name_of(2);
  BOOST_REQUIRE_MESSAGE(open_here(path), "the writer did not open " << path << " early");
  if (replace) {
    std::ofstream(f.dir / "mine.tmp") << "a user's file";
    BOOST_REQUIRE(std::rename((f.dir / "mine.tmp").c_str(), path.c_str()) == 0);
  } else {
    BOOST_REQUIRE(std::remove(path.c_str()) == 0);
  }
  Lsn last_acked = a.ends.back();
  BOOST_TEST(commits_fail_before(w, a, lsn_of_segment(3, 0, kSegBytes), &last_acked),
             "every commit into segment 2 was acknowledged");
  BOOST_TEST(last_acked <= lsn_of_segment(2, 0, kSegBytes));
  if (replace) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    BOOST_TEST(text.str() == "a user's file");
  }
  check_acknowledged_read_back(f.dir.path(), f.cfg, a, last_acked);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_next_segment_removed_after_its_early_open_fails_the_commits_into_it_pwrite) {
  replace_or_remove_next_segment(false, IoMethod::kPwrite);
}

BOOST_AUTO_TEST_CASE(a_next_segment_replaced_after_its_early_open_fails_the_commits_into_it_pwrite) {
  replace_or_remove_next_segment(true, IoMethod::kPwrite);
}

BOOST_AUTO_TEST_CASE(a_next_segment_replaced_after_its_early_open_fails_the_commits_into_it_io_uring) {
  replace_or_remove_next_segment(true, IoMethod::kIoUring);
}

// The segment being written, removed: the next commit is not acknowledged.
BOOST_FIXTURE_TEST_CASE(the_current_segment_removed_fails_the_next_commit, WalWriterFixture) {
  auto wal = Wal::open(dir.path(), cfg);
  WalWriter& w = wal->writer();
  Appended a;
  commit_past(w, a, lsn_of_segment(1, 4096, kSegBytes));
  BOOST_REQUIRE(std::remove((dir / name_of(1)).c_str()) == 0);
  BOOST_CHECK_EXCEPTION(w.flush(a.add(w, 1000)), Error, [](const Error& e) {
    return std::string(e.what()).find("no commit after the removal was acknowledged") != std::string::npos;
  });
  BOOST_CHECK_THROW(w.flush(a.add(w, 10)), Error);  // final, as every write error
}

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Segment 3 is ready, and opened early by the writer or not yet; `change` alters what is under
/// its name; then the writer commits into segment 3. No commit into it may be acknowledged, and
/// the file under the name must be left exactly as `change` left it.
void change_a_ready_segment(WalWriterFixture& f, const std::function<void(const std::string&)>& change,
                            bool opened_early = false) {
  f.cfg.prealloc_segments = 2;
  auto wal = Wal::open(f.dir.path(), f.cfg);
  WalWriter& w = wal->writer();
  Appended a;
  BOOST_REQUIRE(wal->manager().wait_ready(2, std::chrono::seconds(30)) >= 2);
  commit_past(w, a, lsn_of_segment(2, opened_early ? kSegBytes * 3 / 4 : 4096, kSegBytes));
  const std::string path = f.dir / name_of(3);
  BOOST_REQUIRE(std::filesystem::exists(path));
  BOOST_REQUIRE(open_here(path) == opened_early);
  change(path);
  const std::string changed = file_bytes(path);
  Lsn last_acked = a.ends.back();
  BOOST_TEST(commits_fail_before(w, a, lsn_of_segment(4, 0, kSegBytes), &last_acked),
             "every commit into segment 3 was acknowledged");
  BOOST_TEST(last_acked <= lsn_of_segment(3, 0, kSegBytes));
  BOOST_TEST((file_bytes(path) == changed), "the writer wrote into the file under segment 3's name");
  check_acknowledged_read_back(f.dir.path(), f.cfg, a, last_acked);
}

}  // namespace

// Break-it round 30 H2: a copy of a preallocated segment (its ready stamp and zeros), changed
// past its first page and moved onto the segment's name while the writer ran, carries the
// stamp the writer checked, and was written into. The writer now writes only into the file
// the manager made (its device, inode and birth), whatever it holds.
BOOST_FIXTURE_TEST_CASE(a_copy_moved_onto_a_ready_segment_is_not_written_into, WalWriterFixture) {
  change_a_ready_segment(*this, [&](const std::string& path) {
    const std::string copy = dir / "copy.tmp";
    std::string b = file_bytes(path);
    BOOST_REQUIRE(b.size() == kSegBytes);
    const std::string mine = "a user's bytes, past the first page";
    b.replace(300000, mine.size(), mine);
    std::ofstream(copy, std::ios::binary) << b;
    BOOST_REQUIRE(std::rename(copy.c_str(), path.c_str()) == 0);
  });
}

// Break-it round 30 H1: bytes appended to a segment made for appends (its ready stamp alone)
// were overwritten by the writer. Nothing but the stamp is in such a segment until walseg
// writes its first page over it, so bytes after the stamp are someone's.
BOOST_FIXTURE_TEST_CASE(bytes_appended_to_a_ready_append_mode_segment_are_not_written_over, WalWriterFixture) {
  cfg.init_method = InitMethod::kNone;
  change_a_ready_segment(*this, [&](const std::string& path) {
    BOOST_REQUIRE(std::filesystem::file_size(path) < 4096);
    std::ofstream(path, std::ios::binary | std::ios::app) << "a user's line\n";
  });
}

// Break-it round 31 M1: the same bytes, written after the writer opened the segment early
// (past half of the one before), were written over: moving into an early-opened segment
// checked only that its name still named the file.
BOOST_FIXTURE_TEST_CASE(bytes_written_into_a_ready_segment_after_its_early_open_are_not_written_over,
                        WalWriterFixture) {
  for (const InitMethod m : {InitMethod::kNone, InitMethod::kZeroWrite}) {
    BOOST_TEST_CONTEXT(to_string(m)) {
      WalWriterFixture f;
      f.cfg.init_method = m;
      change_a_ready_segment(
          f,
          [&](const std::string& path) {
            std::fstream(path, std::ios::binary | std::ios::in | std::ios::out).seekp(100) << "a user's line\n";
          },
          true);
    }
  }
}
