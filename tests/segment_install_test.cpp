#define BOOST_TEST_MODULE segment_install
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/segment_install.h: the durable install protocol (a
// final name only ever names a complete, fsynced file). After every call the directory is listed with readdir(2) and each file is
// stat(2)ed here: a segment name must only ever name a complete, fully sized file, and after a
// failure neither the temporary file nor the final name may remain. Syscall order (C13) is read
// from io_trace. Crash (kill -9) points are in segment_install_crash_test.cpp.

#include <fcntl.h>

#include <cerrno>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fs_test_util.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/fs_info.h"
#include "walseg/io_trace.h"
#include "walseg/segment_install.h"
#include "walseg/segment_name.h"

using namespace walseg;
using walseg_test::allocated_bytes;
using walseg_test::error_is;
using walseg_test::list_names;
using walseg_test::stat_path;

namespace {

constexpr std::uint64_t kSize = 16 * kMiB;
const std::string kSeg = "000000010000000000000001";

AllocOptions options(InitMethod m, bool direct = true) {
  AllocOptions o;
  o.method = m;
  o.direct_io = direct;
  return o;
}

failpoint::Spec fail_with(int err, std::uint64_t nth = 1, std::uint64_t times = 1) {
  return {failpoint::Kind::kErrno, err, 0, nth, times};
}

struct InstallFixture : walseg_test::FreshDirFixture {
  Directory d = Directory::open(dir.path());

  // The segment exists, is exactly `size` bytes and has every block allocated.
  void expect_complete(const std::string& name, std::uint64_t size = kSize) {
    auto st = stat_path(dir / name);
    BOOST_TEST(st.st_size == static_cast<off_t>(size), name);
    BOOST_TEST(allocated_bytes(st) >= size, name);
  }
};

std::size_t index_of(const std::vector<io_trace::Event>& ev, const std::string& op,
                     const std::string& path) {
  for (std::size_t i = 0; i < ev.size(); ++i)
    if (ev[i].op == op && ev[i].path == path) return i;
  return ev.size();
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(install, InstallFixture)

BOOST_AUTO_TEST_CASE(create_installs_a_complete_segment_and_leaves_nothing_else) {
  for (InitMethod m : {InitMethod::kZeroWrite, InitMethod::kPosixFallocate,
                       InitMethod::kGlibcEmulation}) {
    std::string name = segment_file_name(1, 1 + static_cast<SegNo>(m), kSize);
    CreateReport r = create_segment(d, name, kSize, options(m));
    BOOST_TEST(r.name == name);
    BOOST_TEST((r.alloc.used == m));
    BOOST_TEST(r.alloc.size_bytes == kSize);
    BOOST_TEST(r.syscalls >= r.alloc.syscalls + 4);  // open, fsync, rename, dir fsync at least
    BOOST_TEST(r.times.total_us >= r.times.fill_us);
    expect_complete(name);
  }
  auto names = list_names(dir.path());
  BOOST_TEST(names.size() == 3u);
  for (const auto& n : names) BOOST_TEST(walseg_test::looks_like_segment_name(n), n);
}

BOOST_AUTO_TEST_CASE(C13_file_fsync_precedes_rename_and_dir_fsync_follows_it_last) {
  for (InitMethod m : {InitMethod::kZeroWrite, InitMethod::kPosixFallocate}) {
    std::string name = segment_file_name(1, m == InitMethod::kZeroWrite ? 1 : 2, kSize);
    io_trace::start();
    create_segment(d, name, kSize, options(m));
    auto ev = io_trace::stop();
    BOOST_REQUIRE(!ev.empty());
    const std::string temp = ev.front().path;  // the first call opens the temporary file
    BOOST_TEST(ev.front().op == "open");
    BOOST_TEST(parse_temp_file_name(temp.substr(dir.path().size() + 1)).has_value(), temp);
    std::size_t fsync_at = index_of(ev, "fsync", temp);
    std::size_t rename_at = index_of(ev, "rename", dir / name);
    std::size_t dir_fsync_at = index_of(ev, "dir_fsync", dir.path());
    BOOST_REQUIRE(fsync_at < ev.size());
    BOOST_REQUIRE(rename_at < ev.size());
    BOOST_REQUIRE(dir_fsync_at < ev.size());
    BOOST_TEST(fsync_at < rename_at);
    BOOST_TEST(rename_at < dir_fsync_at);
    BOOST_TEST(dir_fsync_at == ev.size() - 1);  // nothing after it: then create returns
    for (std::size_t i = fsync_at; i < ev.size(); ++i) {  // no data written after the fsync
      BOOST_TEST(ev[i].op != "pwrite");
      BOOST_TEST(ev[i].op != "pwritev");
      BOOST_TEST(ev[i].op != "fallocate");
    }
    for (const auto& e : ev) BOOST_TEST(e.result_errno == 0, e.op);
  }
}

BOOST_AUTO_TEST_CASE(C02_fallback_is_logged_once_per_directory_not_per_segment) {
  walseg_test::TempDir other;
  Directory d2 = Directory::open(other.path());
  walseg_test::LogCapture logs;
  failpoint::arm("fallocate", fail_with(EOPNOTSUPP, 1, 0));
  for (SegNo s = 1; s <= 3; ++s) {
    CreateReport r = create_segment(d, segment_file_name(1, s, kSize), kSize,
                                    options(InitMethod::kPosixFallocate));
    BOOST_TEST((r.alloc.used == InitMethod::kZeroWrite));
    expect_complete(r.name);
  }
  create_segment(d2, kSeg, kSize, options(InitMethod::kPosixFallocate));
  create_segment(d2, segment_file_name(1, 2, kSize), kSize, options(InitMethod::kPosixFallocate));
  std::string needle = "init method posix_fallocate is not supported in directory \"" +
                       dir.path() + "\" (fallocate: Operation not supported (" +
                       fs_info(dir.path()).type_name + ")); using zero_write instead";
  BOOST_TEST(logs.count(LogLevel::kLog, needle) == 1u);
  BOOST_TEST(logs.count(LogLevel::kLog, "directory \"" + other.path() + "\"") == 1u);
  BOOST_TEST(logs.count(LogLevel::kLog, "not supported") == 2u);
}

BOOST_AUTO_TEST_CASE(custom_fill_replaces_the_method_and_its_result_is_stat_ed) {
  CreateReport r = create_segment(d, kSeg, kSize, options(InitMethod::kZeroWrite),
                                  [](File& f, std::uint64_t size, AllocReport&) {
                                    BOOST_TEST(f.try_fallocate(0, 0, size) == 0);
                                  });
  BOOST_TEST(r.alloc.size_bytes == kSize);
  BOOST_TEST(r.alloc.allocated_bytes == allocated_bytes(stat_path(dir / kSeg)));
  expect_complete(kSeg);
}

// Break-it round 5 F1b: a file moved onto the temporary name during the fill was renamed to
// the segment's name (and, when the fill failed, removed). Moved there during the fill, it is
// seen before the rename and left under the temporary name.
BOOST_AUTO_TEST_CASE(a_file_moved_onto_the_temporary_name_during_the_fill_is_not_installed) {
  failpoint::Spec move;
  move.kind = failpoint::Kind::kCall;
  std::string temp_name;
  move.call = [&] {
    for (const auto& e : d.list())
      if (e.name.starts_with("xlogtemp.")) temp_name = e.name;
    std::ofstream(dir / "mine") << "a user's file";
    BOOST_REQUIRE(::rename((dir / "mine").c_str(), (dir / temp_name).c_str()) == 0);
  };
  failpoint::arm("create.after_fill", move);
  BOOST_CHECK_EXCEPTION(create_segment(d, kSeg, kSize, options(InitMethod::kZeroWrite)), Error,
                        [](const Error& e) { return e.errnum() == EEXIST; });
  failpoint::disarm_all();
  BOOST_REQUIRE(!temp_name.empty());
  BOOST_TEST(!walseg_test::path_exists(dir / kSeg));
  std::ifstream in(dir / temp_name);
  BOOST_TEST(std::string((std::istreambuf_iterator<char>(in)), {}) == "a user's file");
}

// What the name can no longer tell after the rename: a file moved onto the temporary name in
// the microsecond before it (the "rename" failpoint runs there) went in instead, or walseg's
// went in and was at once replaced by a user's (break-it round 13 F4: "putting it back" moved
// the user's new file to the temporary name, or, with that taken, to a third name, round 7
// F4). Either way nothing more is renamed: what is under the segment's name stays there,
// named in the error, and no other name appears.
BOOST_AUTO_TEST_CASE(a_file_under_the_segment_name_right_after_the_rename_is_left_where_it_is) {
  for (const char* at : {"rename", "create.before_install_check"}) {
    BOOST_TEST_CONTEXT(at) {
      failpoint::Spec move;
      move.kind = failpoint::Kind::kCall;
      move.call = [&] {
        std::string temp_name;
        for (const auto& e : d.list())
          if (e.name.starts_with("xlogtemp.")) temp_name = e.name;
        std::ofstream(dir / "mine") << "a user's file";
        if (std::string(at) == "rename") {  // onto the temporary name, which then goes in
          BOOST_REQUIRE(::rename((dir / "mine").c_str(), (dir / temp_name).c_str()) == 0);
        } else {  // walseg's segment is in; the user replaces it at once
          BOOST_REQUIRE(::rename((dir / "mine").c_str(), (dir / kSeg).c_str()) == 0);
        }
      };
      failpoint::arm(at, move);
      try {
        create_segment(d, kSeg, kSize, options(InitMethod::kZeroWrite));
        BOOST_FAIL("installed over a file it did not make");
      } catch (const Error& e) {
        BOOST_TEST(e.errnum() == EEXIST);
        BOOST_TEST(std::string(e.what()).find("walseg leaves what is there as it is") != std::string::npos, e.what());
      }
      failpoint::disarm_all();
      std::ifstream in(dir / kSeg);
      BOOST_TEST(std::string((std::istreambuf_iterator<char>(in)), {}) == "a user's file");
      BOOST_TEST(list_names(dir.path()) == std::vector<std::string>{kSeg}, boost::test_tools::per_element());
      BOOST_REQUIRE(::unlink((dir / kSeg).c_str()) == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(recycle_renames_then_fsyncs_the_directory) {
  create_segment(d, kSeg, kSize, options(InitMethod::kPosixFallocate));
  std::string future = segment_file_name(1, 9, kSize);
  io_trace::start();
  recycle_segment(d, kSeg, future);
  auto ev = io_trace::stop();
  BOOST_REQUIRE(ev.size() == 2u);
  BOOST_TEST(ev[0].op == "rename");
  BOOST_TEST(ev[0].path == dir / future);
  BOOST_TEST(ev[1].op == "dir_fsync");
  BOOST_TEST(list_names(dir.path()) == std::vector<std::string>{future},
             boost::test_tools::per_element());
  expect_complete(future);
}

// ---- error paths: each checks the errno and the message text ----

BOOST_AUTO_TEST_CASE(C02_size_zero_or_unaligned_is_rejected_before_any_syscall) {
  for (std::uint64_t size : {std::uint64_t{0}, std::uint64_t{4097}}) {
    std::uint64_t before = io_trace::thread_syscalls();
    BOOST_CHECK_EXCEPTION(
        create_segment(d, kSeg, size, options(InitMethod::kPosixFallocate)), Error,
        error_is(EINVAL, {fmt::format("invalid size {} bytes", size)}));
    BOOST_TEST(io_trace::thread_syscalls() == before, "size " << size);
    BOOST_TEST(list_names(dir.path()).empty());
  }
}

BOOST_AUTO_TEST_CASE(existing_final_name_is_refused_with_eexist_and_left_untouched) {
  walseg_test::write_bytes(dir / kSeg, 0, 3 * kMiB, 'S');  // a short file with a segment name
  BOOST_CHECK_EXCEPTION(create_segment(d, kSeg, kSize, options(InitMethod::kZeroWrite)), Error,
                        error_is(EEXIST, {dir / kSeg}));
  BOOST_TEST(walseg_test::read_all(dir / kSeg) == std::vector<char>(3 * kMiB, 'S'));
  BOOST_TEST(list_names(dir.path()) == std::vector<std::string>{kSeg},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(final_name_appearing_during_the_fill_is_not_replaced) {
  // A racing creator takes the name while we fill: the no-replace rename must refuse.
  auto racer = [this](File& f, std::uint64_t size, AllocReport&) {
    BOOST_TEST(f.try_fallocate(0, 0, size) == 0);
    walseg_test::write_bytes(dir / kSeg, 0, 4096, 'R');
  };
  BOOST_CHECK_EXCEPTION(create_segment(d, kSeg, kSize, options(InitMethod::kZeroWrite), racer),
                        Error, error_is(EEXIST, {"could not rename file", dir / kSeg}));
  BOOST_TEST(walseg_test::read_all(dir / kSeg) == std::vector<char>(4096, 'R'));
  BOOST_TEST(list_names(dir.path()) == std::vector<std::string>{kSeg},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(failure_at_every_step_leaves_neither_final_name_nor_temp_file) {
  struct Step {
    InitMethod method;
    const char* failpoint;
    failpoint::Spec spec;
    const char* words;  // what the message must say about the step
  };
  const Step steps[] = {
      {InitMethod::kZeroWrite, "open", fail_with(EACCES), "could not open file"},
      {InitMethod::kZeroWrite, "open", fail_with(EIO, 2), "could not open file"},  // O_DIRECT fd
      {InitMethod::kZeroWrite, "pwritev", fail_with(EIO), "could not write to file"},
      {InitMethod::kZeroWrite, "pwritev", {failpoint::Kind::kShort, 0, 0, 1, 1},
       "could not write to file"},  // a write that makes no progress: disk full
      {InitMethod::kZeroWrite, "close", fail_with(EIO), "could not close file"},
      {InitMethod::kZeroWrite, "fstat", fail_with(EIO), "could not stat file"},
      {InitMethod::kZeroWrite, "fsync", fail_with(EIO), "could not fsync file"},
      {InitMethod::kZeroWrite, "close", fail_with(EIO, 2), "could not close file"},
      {InitMethod::kZeroWrite, "rename", fail_with(EIO), "could not rename file"},
      {InitMethod::kZeroWrite, "dir_fsync", fail_with(EIO), "could not fsync directory"},
      {InitMethod::kPosixFallocate, "fallocate", fail_with(ENOSPC), "could not allocate"},
      {InitMethod::kPosixFallocate, "fsync", fail_with(EIO), "could not fsync file"},
      {InitMethod::kPosixFallocate, "rename", fail_with(EXDEV), "could not rename file"},
      {InitMethod::kPosixFallocate, "dir_fsync", fail_with(EIO), "could not fsync directory"},
      {InitMethod::kGlibcEmulation, "pwrite", fail_with(EIO, 100), "could not write to file"},
      {InitMethod::kGlibcEmulation, "open", fail_with(EACCES, 2),
       "could not open file"},
      {InitMethod::kSparse, "pwrite", fail_with(EDQUOT), "could not write to file"},
      {InitMethod::kFallocateKeepSize, "fallocate", fail_with(EIO), "could not allocate"},
  };
  for (const auto& s : steps) {
    BOOST_TEST_CONTEXT(to_string(s.method) << " with " << s.failpoint << " failing") {
      failpoint::disarm_all();
      failpoint::arm(s.failpoint, s.spec);
      int want = s.spec.kind == failpoint::Kind::kShort ? ENOSPC : s.spec.errnum;
      BOOST_CHECK_EXCEPTION(
          create_segment(d, kSeg, kSize, options(s.method)), Error,
          error_is(want, {s.words, errno_text(want),
                          fmt::format("(creating segment \"{}\" of {} bytes by {})", dir / kSeg,
                                      kSize, to_string(s.method))}));
      BOOST_TEST(failpoint::calls(s.failpoint) >= s.spec.nth);  // the step was really reached
      BOOST_TEST(list_names(dir.path()).empty());
    }
  }
  failpoint::disarm_all();
  create_segment(d, kSeg, kSize, options(InitMethod::kZeroWrite));  // and a retry succeeds
  expect_complete(kSeg);
}

BOOST_AUTO_TEST_CASE(fallback_step_failure_also_cleans_up) {
  failpoint::arm("fallocate", fail_with(EOPNOTSUPP));
  failpoint::arm("ftruncate", fail_with(EIO));
  BOOST_CHECK_EXCEPTION(create_segment(d, kSeg, kSize, options(InitMethod::kPosixFallocate)),
                        Error, error_is(EIO, {"could not truncate file", dir / kSeg}));
  BOOST_TEST(list_names(dir.path()).empty());
}

BOOST_AUTO_TEST_CASE(C13_failing_dir_fsync_fails_create_and_leaves_no_final_name) {
  failpoint::arm("dir_fsync", fail_with(EIO));
  BOOST_CHECK_EXCEPTION(
      create_segment(d, kSeg, kSize, options(InitMethod::kPosixFallocate)), Error,
      error_is(EIO, {"could not fsync directory \"" + dir.path() + "\": Input/output error",
                     dir / kSeg}));
  BOOST_TEST(list_names(dir.path()).empty());
}

BOOST_AUTO_TEST_CASE(C13_failing_dir_fsync_fails_recycle_naming_the_directory) {
  create_segment(d, kSeg, kSize, options(InitMethod::kPosixFallocate));
  failpoint::arm("dir_fsync", fail_with(EIO));
  BOOST_CHECK_EXCEPTION(recycle_segment(d, kSeg, segment_file_name(1, 2, kSize)), Error,
                        error_is(EIO, {"could not fsync directory \"" + dir.path() + "\""}));
}

BOOST_AUTO_TEST_CASE(recycle_never_replaces_an_existing_future_segment) {
  create_segment(d, kSeg, kSize, options(InitMethod::kPosixFallocate));
  std::string future = segment_file_name(1, 2, kSize);
  walseg_test::write_bytes(dir / future, 0, 4096, 'F');
  BOOST_CHECK_EXCEPTION(recycle_segment(d, kSeg, future), Error,
                        error_is(EEXIST, {"File exists"}));
  BOOST_TEST(walseg_test::read_all(dir / future) == std::vector<char>(4096, 'F'));
  expect_complete(kSeg);
}

BOOST_AUTO_TEST_CASE(C10_enospc_partway_through_the_fill_reports_progress_and_removes_temp) {
  // 32 MiB = two 16 MiB pwritev calls; the second hits ENOSPC after 16 MiB are on disk.
  // (The failpoint registry scripts one behaviour per name, so a short write followed by ENOSPC
  // inside one call is exercised for real in fs_cases_test.sh on a full loop-mounted ext4.)
  const std::uint64_t size = 32 * kMiB;
  failpoint::arm("pwritev", fail_with(ENOSPC, 2));
  BOOST_CHECK_EXCEPTION(
      create_segment(d, kSeg, size, options(InitMethod::kZeroWrite, false)), Error,
      error_is(ENOSPC, {"could not write to file \"" + dir.path() + "/xlogtemp.",
                        "No space left on device; wrote 0 of 16777216 bytes at offset 16777216",
                        fmt::format("of {} bytes by zero_write", size), dir / kSeg}));
  BOOST_TEST(list_names(dir.path()).empty());
  failpoint::disarm_all();
  create_segment(d, kSeg, size, options(InitMethod::kZeroWrite, false));
  expect_complete(kSeg, size);
}

BOOST_AUTO_TEST_CASE(C11_fsync_einval_aborts_creation_removes_temp_and_names_path_and_fsync) {
  failpoint::arm("fsync", fail_with(EINVAL));
  try {
    create_segment(d, kSeg, kSize, options(InitMethod::kPosixFallocate));
    BOOST_FAIL("create_segment survived a failed fsync");
  } catch (const Error& e) {
    BOOST_TEST_MESSAGE(e.what());
    BOOST_TEST(e.errnum() == EINVAL);
    BOOST_TEST(e.op() == "fsync");
    BOOST_TEST(parse_temp_file_name(e.path().substr(dir.path().size() + 1)).has_value(),
               e.path());
    BOOST_TEST(std::string(e.what()).find("could not fsync file \"" + e.path() +
                                          "\": Invalid argument") != std::string::npos);
  }
  BOOST_TEST(list_names(dir.path()).empty());
  failpoint::disarm_all();
  create_segment(d, kSeg, kSize, options(InitMethod::kPosixFallocate));  // a "first start" again
  expect_complete(kSeg);
}

BOOST_AUTO_TEST_CASE(custom_fill_throwing_a_non_walseg_exception_still_removes_the_temp) {
  auto bad = [](File&, std::uint64_t, AllocReport&) { throw std::runtime_error("cancelled"); };
  BOOST_CHECK_THROW(create_segment(d, kSeg, kSize, options(InitMethod::kZeroWrite), bad),
                    std::runtime_error);
  BOOST_TEST(list_names(dir.path()).empty());
}

// ---- Two phases: prepare, then install (the PostgreSQL extension holds its lock between) ----

BOOST_AUTO_TEST_CASE(a_prepared_segment_nobody_installs_is_removed_when_dropped) {
  const std::string name = segment_file_name(1, 7, kSize);
  {
    PreparedSegment p = PreparedSegment::prepare(d, name, kSize, options(InitMethod::kZeroWrite));
    BOOST_TEST(list_names(dir.path()) == std::vector<std::string>{p.temp_name()});
    BOOST_TEST(static_cast<std::uint64_t>(stat_path(dir / p.temp_name()).st_size) == kSize);
    PreparedSegment moved = std::move(p);  // ownership moves with it, once
  }
  BOOST_TEST(list_names(dir.path()).empty());
}

BOOST_AUTO_TEST_CASE(a_name_taken_between_prepare_and_install_is_not_replaced_and_the_temp_goes) {
  const std::string name = segment_file_name(1, 7, kSize);
  {
    PreparedSegment p = PreparedSegment::prepare(d, name, kSize, options(InitMethod::kPosixFallocate));
    walseg_test::write_bytes(dir / name, 0, 10, 'o');  // someone else made it meanwhile
    BOOST_CHECK_EXCEPTION(p.install(), Error, error_is(EEXIST, {dir / name}));
  }
  BOOST_TEST(list_names(dir.path()) == std::vector<std::string>{name});
  BOOST_TEST(walseg_test::read_all(dir / name) == std::vector<char>(10, 'o'));
}

BOOST_AUTO_TEST_CASE(C13_failed_directory_fsync_removes_or_keeps_the_new_name_as_asked) {
  for (DirFsyncFailure rule : {DirFsyncFailure::kRemoveNewName, DirFsyncFailure::kKeepNewName}) {
    walseg_test::TempDir t;
    Directory td = Directory::open(t.path());
    const std::string name = segment_file_name(1, 3, kSize);
    PreparedSegment p = PreparedSegment::prepare(td, name, kSize, options(InitMethod::kZeroWrite));
    failpoint::arm("dir_fsync", {failpoint::Kind::kErrno, EIO, 0, 1, 1});
    BOOST_CHECK_EXCEPTION(p.install(rule), Error,
                          error_is(EIO, {"could not fsync directory", "Input/output error", t / name}));
    failpoint::disarm_all();
    const std::vector<std::string> want =
        rule == DirFsyncFailure::kKeepNewName ? std::vector<std::string>{name} : std::vector<std::string>{};
    BOOST_TEST(list_names(t.path()) == want, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_SUITE_END()
