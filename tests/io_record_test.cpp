#define BOOST_TEST_MODULE io_record
#include <boost/test/unit_test.hpp>

// The io layer's mutation record (include/walseg/io_record.h): every File and Directory
// mutation is recorded in order with its path, the file's identity, offset, length, bytes (or
// "zeros"), the descriptor's flags and the result; nothing is recorded when off. The last case
// replays a record through the crash model (tests/crash/crash_model.h): its all-kept state
// after the last event must be the directory as it is on disk.

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "crash/crash_model.h"
#include "fs_test_util.h"
#include "walseg/directory.h"
#include "walseg/file.h"
#include "walseg/io_record.h"

using namespace walseg;
using io_record::Event;
using io_record::Op;

namespace {

struct RecordFixture : walseg_test::FreshDirFixture {
  ~RecordFixture() { io_record::stop(); }
};

std::string ops_of(const std::vector<Event>& ev) {
  std::string s;
  for (const Event& e : ev) s += std::string(io_record::to_string(e.op)) + (e.result_errno ? "!" : "") + " ";
  return s;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(mutation_record, RecordFixture)

BOOST_AUTO_TEST_CASE(EveryMutation_IsRecordedInOrder_WithPathIdentityOffsetAndBytes) {
  const std::string sub = dir / "wal";
  io_record::start();
  Directory d = Directory::open(sub, true);
  File f = File::open(d.path_of("tmp"), O_RDWR | O_CREAT | O_EXCL);
  f.pwrite_all("hello", 5, 10);
  std::vector<char> zeros(8192, 0);
  struct iovec iov[2] = {{zeros.data(), 4096}, {zeros.data(), 4096}};
  f.pwritev_all(iov, 2, 4096);
  f.fdatasync();
  f.ftruncate(100000);
  BOOST_TEST(f.try_fallocate(0, 0, 200000) == 0);
  f.fsync();
  f.close();
  d.rename_noreplace("tmp", "final");
  d.fsync();
  BOOST_TEST(d.unlink("final"));
  std::vector<Event> ev = io_record::stop();
  // The mkdir is followed by the fsync of the parent that makes the new name durable.
  BOOST_TEST(ops_of(ev) ==
             "mkdir dir_fsync open write write fdatasync ftruncate fallocate fsync close rename dir_fsync unlink ");
  BOOST_REQUIRE_EQUAL(ev.size(), 13u);
  BOOST_TEST(ev[0].path == sub);
  BOOST_TEST(ev[1].path == dir.path());
  BOOST_TEST(ev[1].covers_before == 1u);
  ev.erase(ev.begin(), ev.begin() + 1);  // from here on, the indexes of the file's events
  const std::uint64_t ino = ev[1].ino;
  BOOST_TEST(ino != 0u);
  for (std::size_t i = 1; i < ev.size(); ++i)
    if (ev[i].op != Op::kDirFsync) BOOST_TEST(ev[i].ino == ino, "event " << i << " names another file");
  BOOST_TEST(ev[1].flags == (O_RDWR | O_CREAT | O_EXCL));
  BOOST_TEST(ev[2].offset == 10u);
  BOOST_TEST(ev[2].length == 5u);
  BOOST_TEST(std::string(reinterpret_cast<const char*>(ev[2].data.data()), 5) == "hello");
  BOOST_TEST(ev[3].zeros);  // a zero fill is recorded without its bytes
  BOOST_TEST(ev[3].data.empty());
  BOOST_TEST(ev[3].length == 8192u);
  BOOST_TEST(ev[4].covers_before == 5u);  // the events before the fdatasync was called
  BOOST_TEST(ev[5].offset == 100000u);
  BOOST_TEST(ev[6].length == 200000u);
  BOOST_TEST(ev[9].path == d.path_of("tmp"));
  BOOST_TEST(ev[9].path2 == d.path_of("final"));
  BOOST_TEST(ev[10].covers_before == 11u);
}

BOOST_AUTO_TEST_CASE(DescriptorFlags_AreRecordedOnEachWrite) {
  File f = File::open(dir / "f", O_RDWR | O_CREAT | O_DSYNC);
  io_record::start();
  f.pwrite_all("x", 1, 0);
  std::vector<Event> ev = io_record::stop();
  BOOST_REQUIRE_EQUAL(ev.size(), 1u);
  BOOST_TEST((ev[0].flags & O_DSYNC) != 0);
  BOOST_TEST((ev[0].flags & O_DIRECT) == 0);
}

BOOST_AUTO_TEST_CASE(WhenOff_NothingIsRecorded) {
  io_record::start();
  io_record::stop();
  File f = File::open(dir / "f", O_RDWR | O_CREAT);
  f.pwrite_all("x", 1, 0);
  f.fsync();
  BOOST_TEST(!io_record::active());
  BOOST_TEST(io_record::count() == 0u);
  BOOST_TEST(io_record::stop().empty());
}

// ---- error paths ----

BOOST_AUTO_TEST_CASE(InjectedSyncFailure_IsRecordedWithItsErrno) {
  File f = File::open(dir / "f", O_RDWR | O_CREAT);
  failpoint::arm("fdatasync", {failpoint::Kind::kErrno, EIO, 0, 1, 1});
  io_record::start();
  f.pwrite_all("x", 1, 0);
  BOOST_CHECK_THROW(f.fdatasync(), Error);
  std::vector<Event> ev = io_record::stop();
  BOOST_TEST(ops_of(ev) == "write fdatasync! ");
  BOOST_TEST(ev[1].result_errno == EIO);
}

BOOST_AUTO_TEST_CASE(ShortWrite_RecordsEachTransferWithTheBytesItMoved) {
  File f = File::open(dir / "f", O_RDWR | O_CREAT);
  failpoint::arm("pwrite", {failpoint::Kind::kShort, 0, 3, 1, 1});
  io_record::start();
  f.pwrite_all("abcdefgh", 8, 100);
  std::vector<Event> ev = io_record::stop();
  BOOST_REQUIRE_EQUAL(ev.size(), 2u);
  BOOST_TEST(ev[0].offset == 100u);
  BOOST_TEST(ev[0].length == 3u);
  BOOST_TEST(ev[1].offset == 103u);
  BOOST_TEST(std::string(reinterpret_cast<const char*>(ev[1].data.data()), ev[1].data.size()) == "defgh");
}

BOOST_AUTO_TEST_CASE(FailedRename_IsRecordedAndChangesNothingInTheModel) {
  Directory d = Directory::open(dir.path());
  File::open(d.path_of("a"), O_RDWR | O_CREAT).close();
  File::open(d.path_of("b"), O_RDWR | O_CREAT).close();
  io_record::start();
  BOOST_CHECK_THROW(d.rename_noreplace("a", "b"), Error);
  std::vector<Event> ev = io_record::stop();
  BOOST_TEST(ops_of(ev) == "rename! ");
  BOOST_TEST(ev[0].result_errno == EEXIST);
}

// ---- the record replayed ----

BOOST_AUTO_TEST_CASE(AllKeptStateAfterTheLastEvent_IsTheDirectoryOnDisk) {
  Directory d = Directory::open(dir.path());
  io_record::start();
  File f = File::open(d.path_of("t"), O_RDWR | O_CREAT | O_EXCL);
  f.pwrite_all("0123456789", 10, 5000);
  f.fsync();
  f.close();
  d.rename_noreplace("t", "seg");
  File g = File::open(d.path_of("seg"), O_RDWR | O_TRUNC);
  g.pwrite_all("xy", 2, 1);
  File h = File::open(d.path_of("other"), O_RDWR | O_CREAT);
  h.ftruncate(70000);
  d.unlink("other");
  File::open(d.path_of("last"), O_WRONLY | O_CREAT).pwrite_all("z", 1, 0);
  std::vector<Event> ev = io_record::stop();
  walseg_crash::CrashModel m(ev, dir.path());
  m.advance(ev.size());
  BOOST_TEST(m.inconsistencies().empty());
  std::mt19937_64 rng(1);
  walseg_crash::CrashState st = m.build(m.choose(walseg_crash::Mode::kAllKept, rng));
  BOOST_REQUIRE_EQUAL(st.files.size(), 2u);
  for (const auto& sf : st.files) {
    const auto& b = st.images.at(sf.inode).bytes;
    BOOST_TEST(std::string(reinterpret_cast<const char*>(b.data()), b.size()) == slurp(dir / sf.path), sf.path);
  }
}

BOOST_AUTO_TEST_SUITE_END()
