#define BOOST_TEST_MODULE wal_open
#include <boost/test/unit_test.hpp>

// Tests for what Wal::open (include/walseg/wal.h) does to a WAL before its writer acknowledges
// anything: the WAL recovery read after a crash is rewritten, synced and recorded as durable;
// recovery reads the directory the lock was taken on; the writer epoch never wraps; and the
// files in the way of its bookkeeping (walseg.control.tmp, a hard-linked temp file) and a
// directory whose own name is not yet durable. Break-it round 2 found each; power-cut proofs
// of the first are in tests/lazyfs/storage_faults_test.sh.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <vector>

#include "fs_test_util.h"
#include "wal_files_test_util.h"
#include "walseg/failpoint.h"
#include "walseg/io_record.h"
#include "walseg/io_trace.h"
#include "walseg/segment_manager.h"
#include "walseg/segment_name.h"
#include "walseg/wal.h"
#include "walseg/wal_control.h"

using namespace walseg;
using walseg_test::error_is;
using walseg_test::path_exists;

namespace {

constexpr std::uint64_t kSeg = std::uint64_t{1} << 20;

Config small_config() { return walseg_test::small_wal_config(kSeg, 1); }

// Appends n records of 6000 bytes with `cfg`, flushes and checkpoints (a clean end), and,
// before the writer goes, waits for `ready` segments to be ready ahead; returns the end of WAL.
Lsn write_checkpointed(const std::string& dir, const Config& cfg, int n, std::size_t ready = 0) {
  auto wal = Wal::open(dir, cfg);
  std::vector<std::byte> rec(6000, std::byte{7});
  Lsn end = 0;
  for (int i = 0; i < n; ++i) end = wal->writer().append(rec);
  wal->writer().flush(end);
  wal->checkpoint();
  if (ready > 0) BOOST_REQUIRE(wal->manager().wait_ready(ready, std::chrono::seconds(10)) == ready);
  return end;
}

// Appends n records of `size` bytes and flushes; no checkpoint, as a writer killed after its
// last flush leaves the control file. Returns the end of WAL.
Lsn write_records(const std::string& dir, int n, std::size_t size = 3000) {
  auto wal = Wal::open(dir, small_config());
  std::vector<std::byte> rec(size, std::byte{7});
  Lsn end = 0;
  for (int i = 0; i < n; ++i) end = wal->writer().append(rec);
  wal->writer().flush(end);
  return wal->writer().flushed_lsn();
}

struct Fixture : walseg_test::FreshDirFixture {
  walseg_test::TempDir dir;
  walseg_test::LogCapture logs;
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(wal_open, Fixture)

BOOST_AUTO_TEST_CASE(wal_past_the_durable_point_is_rewritten_synced_and_recorded_as_durable) {
  const std::string d = dir / "wal";
  const Lsn end = write_records(d, 500);  // crosses into segment 2
  const WalControl before = read_control(d).value();
  BOOST_REQUIRE(before.durable_lsn < end);  // the last writer never said its records were durable
  io_record::start();
  auto wal = Wal::open(d, small_config());
  const std::vector<io_record::Event> ev = io_record::stop();
  // Every byte of [durable point, end) is written again, then its segment fdatasynced, so that
  // pages a failed fdatasync left clean (never on disk) are dirty again and reach the disk.
  const Lsn from = std::max(before.durable_lsn, before.oldest_lsn);
  std::vector<bool> covered(end - from, false);
  std::uint64_t synced_after_write = 0;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const auto seg = parse_segment_file_name(std::filesystem::path(ev[i].path).filename().string(), kSeg);
    if (ev[i].op != io_record::Op::kWrite || !seg) continue;
    const Lsn at = lsn_of_segment(seg->segno, ev[i].offset, kSeg);
    for (Lsn l = std::max(at, from); l < std::min(at + ev[i].length, end); ++l) covered[l - from] = true;
    for (std::size_t j = i + 1; j < ev.size(); ++j)
      if (ev[j].op == io_record::Op::kFdatasync && ev[j].path == ev[i].path) {
        ++synced_after_write;
        break;
      }
  }
  BOOST_TEST(std::count(covered.begin(), covered.end(), false) == 0);
  BOOST_TEST(synced_after_write > 0u);
  // The control file says so: the next open has nothing to rewrite.
  BOOST_TEST(read_control(d).value().durable_lsn == end);
  BOOST_TEST(logs.count(LogLevel::kLog, "never known to be synced: by a run that crashed, or that could not update it") == 1u);
  BOOST_TEST(wal->recovery().end_lsn == end);
}

BOOST_AUTO_TEST_CASE(a_wal_checkpointed_at_its_end_is_not_rewritten) {
  const std::string d = dir / "wal";
  {
    auto wal = Wal::open(d, small_config());
    wal->writer().flush(wal->writer().append(std::vector<std::byte>(100, std::byte{1})));
    wal->checkpoint();
  }
  io_record::start();
  auto wal = Wal::open(d, small_config());
  for (const auto& e : io_record::stop())
    if (e.op == io_record::Op::kWrite)
      BOOST_TEST(!parse_segment_file_name(std::filesystem::path(e.path).filename().string(), kSeg).has_value(),
                 "a segment was written at open: " << e.path);
}

BOOST_AUTO_TEST_CASE(recovery_reads_the_locked_directory_even_if_another_takes_its_name) {
  // The lock, control file and writes went through the directory's descriptor, but recovery
  // opened the path again: a directory renamed into its place between the two made the writer
  // resume in the locked one at the other's end, over acknowledged records.
  const std::string a = dir / "A", real = dir / "A.real", other = dir / "B";
  const Lsn end_a = write_records(a, 600);
  write_records(other, 5);
  const std::vector<char> other_seg = walseg_test::read_all(other + "/" + segment_file_name(1, 1, kSeg));
  failpoint::Spec swap;
  swap.kind = failpoint::Kind::kCall;
  swap.call = [&] {
    BOOST_REQUIRE(::rename(a.c_str(), real.c_str()) == 0);
    BOOST_REQUIRE(::rename(other.c_str(), a.c_str()) == 0);
  };
  failpoint::arm("wal.before_recovery", swap);
  {
    auto wal = Wal::open(a, small_config());
    failpoint::disarm_all();
    BOOST_TEST(wal->recovery().records == 600u);
    BOOST_TEST(wal->recovery().end_lsn == end_a);
    wal->writer().flush(wal->writer().append(std::vector<std::byte>(100, std::byte{2})));
  }
  const RecoveryResult r = find_end_of_wal(real, reader_options_for(read_control(real).value()));
  BOOST_TEST(r.records == 601u);
  BOOST_TEST(!r.corruption);
  BOOST_TEST((walseg_test::read_all(a + "/" + segment_file_name(1, 1, kSeg)) == other_seg));
}

BOOST_AUTO_TEST_CASE(a_writer_epoch_at_its_limit_is_refused_not_wrapped) {
  const std::string d = dir / "wal";
  write_records(d, 10);
  WalControl c = read_control(d).value();
  c.epoch = 0xFFFFFFFFu;
  walseg_test::put_control(d, c);
  BOOST_CHECK_EXCEPTION(Wal::open(d, small_config()), Error,
                        error_is(EOVERFLOW, {"writer epoch is 4294967295", "restore it from a backup"}));
  BOOST_TEST((read_control(d).value() == c));
}

BOOST_AUTO_TEST_CASE(a_control_temp_name_that_is_not_a_plain_file_of_walseg_is_left_alone) {
  const std::string d = dir / "wal";
  write_records(d, 3);
  walseg_test::as_if_the_last_writer_crashed(d);  // else no file there is a leftover, whatever it is
  const std::string tmp = d + "/" + kControlTempFileName, target = dir / "precious";
  walseg_test::write_bytes(target, 0, 6, 'p');
  auto plant = [&](int kind) {
    if (kind == 0) BOOST_REQUIRE(::symlink(target.c_str(), tmp.c_str()) == 0);
    if (kind == 1) BOOST_REQUIRE(::mkdir(tmp.c_str(), 0700) == 0);
    if (kind == 2) BOOST_REQUIRE(::mkfifo(tmp.c_str(), 0600) == 0);
    if (kind == 3) BOOST_REQUIRE(::link(target.c_str(), tmp.c_str()) == 0);
  };
  for (int kind = 0; kind < 4; ++kind) {
    BOOST_TEST_CONTEXT("kind " << kind) {
      plant(kind);
      const WalControl c = read_control(d).value();
      BOOST_CHECK_EXCEPTION(Wal::open(d, small_config()), Error,
                            error_is(EEXIST, {tmp, "is not a leftover of walseg's", "Move it out"}));
      struct stat st{};
      BOOST_TEST(::lstat(tmp.c_str(), &st) == 0);  // still there
      BOOST_TEST((read_control(d).value() == c));
      BOOST_TEST(walseg_test::read_all(target).size() == 6u);
      std::filesystem::remove(tmp);
    }
  }
  BOOST_CHECK_NO_THROW(Wal::open(d, small_config()));
}

BOOST_AUTO_TEST_CASE(a_temp_file_with_other_hard_links_is_not_removed) {
  const std::string d = dir / "wal";
  write_records(d, 3);
  const std::string mine = dir / "mine", temp = d + "/xlogtemp.999";
  walseg_test::write_bytes(mine, 0, 10, 'm');
  BOOST_REQUIRE(::link(mine.c_str(), temp.c_str()) == 0);
  BOOST_CHECK_NO_THROW(Wal::open(d, small_config()));
  BOOST_TEST(path_exists(temp));
  BOOST_TEST(walseg_test::stat_path(mine).st_nlink == 2u);
}

BOOST_AUTO_TEST_CASE(a_directory_made_by_the_user_gets_its_name_synced_with_the_control_file) {
  const std::string d = dir / "wal";
  BOOST_REQUIRE(::mkdir(d.c_str(), 0700) == 0);  // never synced into its parent
  io_trace::start();
  { auto wal = Wal::open(d, small_config()); }
  bool parent_synced = false;
  for (const auto& e : io_trace::stop())
    if (e.op == "dir_fsync" && e.result_errno == 0 && (e.path == d + "/.." || e.path == dir.path()))
      parent_synced = true;
  BOOST_TEST(parent_synced);
}

BOOST_AUTO_TEST_CASE(every_ancestor_of_a_new_wal_directory_is_synced_before_its_control_file) {
  // mkdir -p made x and y too: x's entry in dir is no more durable than wal's in y, and a
  // power cut that takes x takes the WAL. Synced before the control file is made, so that a
  // directory with a control file always has a durable path.
  const std::string d = dir / "x/y/wal";
  std::filesystem::create_directories(d);
  io_trace::start();
  { auto wal = Wal::open(d, small_config()); }
  const auto ev = io_trace::stop();
  std::size_t control_at = ev.size();
  for (std::size_t i = 0; i < ev.size() && control_at == ev.size(); ++i)
    if (ev[i].path == d + "/" + kControlTempFileName) control_at = i;
  BOOST_REQUIRE(control_at < ev.size());
  for (const std::string& up : {d + "/..", d + "/../..", d + "/../../.."}) {
    BOOST_TEST_CONTEXT(up) {
      bool synced_first = false;
      for (std::size_t i = 0; i < control_at; ++i)
        if (ev[i].op == "dir_fsync" && ev[i].path == up && ev[i].result_errno == 0) synced_first = true;
      BOOST_TEST(synced_first);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_writer_refused_for_a_missing_segment_makes_no_file_and_leaves_the_control_file) {
  // A WAL with a hole (segment 3 moved away) before its durable point is refused. Its
  // preallocator must not have run meanwhile: it made the missing segment, filling the hole,
  // and the next writer went on over the acknowledged records after it. A run with another
  // init method must not have switched the control file's append mode either, nor removed
  // anything (not even a leftover temporary file). The failpoint gives an early preallocator time to show itself.
  const std::string d = dir / "wal";
  Config first = small_config();
  first.init_method = InitMethod::kSparse;
  first.prealloc_segments = 8;
  BOOST_REQUIRE(write_checkpointed(d, first, 1000) > lsn_of_segment(5, 0, kSeg));
  const std::string hole = segment_file_name(1, 3, kSeg);
  std::filesystem::rename(d + "/" + hole, dir / hole);
  walseg_test::write_bytes(d + "/xlogtemp.777", 0, 10, '\0');  // a leftover of walseg's (zeros): still kept
  const auto names = walseg_test::list_names(d);
  const auto control = walseg_test::read_all(d + "/" + kControlFileName);
  Config none = first;
  none.init_method = InitMethod::kNone;
  for (const Config& c : {first, none}) {
    BOOST_TEST_CONTEXT(to_string(c.init_method)) {
      failpoint::arm("wal.before_recovery",
                     {failpoint::Kind::kCall, 0, 0, 1, 1, [] { ::usleep(300 * 1000); }});
      BOOST_CHECK_EXCEPTION(Wal::open(d, c), Error, error_is(ENOTRECOVERABLE, {"cannot write to the WAL"}));
      BOOST_TEST(walseg_test::list_names(d) == names, boost::test_tools::per_element());
      BOOST_TEST((walseg_test::read_all(d + "/" + kControlFileName) == control));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_refused_writer_keeps_the_never_written_short_segments_of_an_append_mode_run) {
  // Segments an append-mode run made ahead and never wrote are removed by a full-size run,
  // but only once it accepted the WAL: this one refuses the append-mode WAL itself.
  const std::string d = dir / "wal";
  Config appending = small_config();
  appending.init_method = InitMethod::kNone;
  appending.prealloc_segments = 3;
  write_checkpointed(d, appending, 400, 3);
  const auto names = walseg_test::list_names(d);
  Config full = small_config();
  full.init_method = InitMethod::kZeroWrite;
  BOOST_CHECK_EXCEPTION(Wal::open(d, full), Error, error_is(EINVAL, {"holds WAL written in append mode"}));
  BOOST_TEST(walseg_test::list_names(d) == names, boost::test_tools::per_element());
}

// Break-it round 8 F3 and F4: recovery runs between the survey and the removals it allowed,
// long enough for a user to put a file where a leftover temporary file or a never-written
// append-mode segment was (ext4 even gives it the freed inode number, so the identity check
// passed). Here the files are rewritten in place, same inode, while recovery starts: both
// are someone's now and stay.
BOOST_AUTO_TEST_CASE(a_leftover_or_unwritten_segment_rewritten_during_recovery_is_not_removed) {
  const std::string d = dir / "wal";
  Config none = small_config();
  none.init_method = InitMethod::kNone;
  {
    SegmentManager::Options mo;
    mo.config = none;
    mo.background = false;
    SegmentManager m(d, mo);
    m.next_segment(1);
    m.next_segment(2);
  }
  walseg_test::write_bytes(d + "/xlogtemp.77", 0, 8192, '\0');  // a leftover of walseg's (zeros)
  const std::string seg2 = segment_file_name(1, 2, kSeg);
  const std::string theirs = "USER PRECIOUS DATA\n";
  failpoint::arm("wal.before_recovery", {failpoint::Kind::kCall, 0, 0, 1, 1, [&] {
                                           for (const std::string& n : {std::string("xlogtemp.77"), seg2}) {
                                             const int fd = ::open((d + "/" + n).c_str(), O_WRONLY);
                                             BOOST_REQUIRE(fd >= 0);
                                             BOOST_REQUIRE(::pwrite(fd, theirs.data(), theirs.size(), 0) ==
                                                           static_cast<ssize_t>(theirs.size()));
                                             ::close(fd);
                                           }
                                         }});
  try {
    Wal::open(d, small_config());  // full-size: would remove both
  } catch (const Error&) {
    // refusing is fine; removing is not
  }
  failpoint::disarm_all();
  for (const std::string& n : {std::string("xlogtemp.77"), seg2}) {
    BOOST_TEST_REQUIRE(path_exists(d + "/" + n), n);
    const std::vector<char> b = walseg_test::read_all(d + "/" + n);
    BOOST_TEST(std::string(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(theirs.size())) == theirs, n);
  }
}

BOOST_AUTO_TEST_CASE(files_with_walseg_temp_names_in_a_directory_walseg_never_used_are_left_alone) {
  // walseg makes walseg.control before any temporary file, so an xlogtemp.* found where it
  // has just made the control file is someone's; a walseg.control.tmp that does not look
  // like a control file is someone's too, and the opening refuses rather than replace it.
  const std::string d = dir / "fresh";
  BOOST_REQUIRE(::mkdir(d.c_str(), 0700) == 0);
  walseg_test::write_bytes(d + "/xlogtemp.4242", 0, 2, 'u');
  BOOST_CHECK_NO_THROW(Wal::open(d, small_config()));
  BOOST_TEST(walseg_test::read_all(d + "/xlogtemp.4242").size() == 2u);

  const std::string d2 = dir / "fresh2";
  BOOST_REQUIRE(::mkdir(d2.c_str(), 0700) == 0);
  walseg_test::write_bytes(d2 + "/" + kControlTempFileName, 0, 2, 'u');
  BOOST_CHECK_EXCEPTION(Wal::open(d2, small_config()), Error,
                        error_is(EEXIST, {d2 + "/" + kControlTempFileName, "so no walseg crash left it there",
                                          "it is not walseg's"}));
  BOOST_TEST(walseg_test::read_all(d2 + "/" + kControlTempFileName).size() == 2u);
  BOOST_TEST(!path_exists(d2 + "/" + kControlFileName));
}

BOOST_AUTO_TEST_SUITE_END()
