#define BOOST_TEST_MODULE dir_lock
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/dir_lock.h: one process (one open lock file) per WAL directory.
// Method: a second opener in a fork()ed child, and a second open in this same process (flock
// locks belong to the open file description, so a second open conflicts even here). Expected
// PIDs come from getpid()/fork(), and the lock file is read with plain read(2).

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "fs_test_util.h"
#include "walseg/dir_lock.h"
#include "walseg/directory.h"
#include "walseg/failpoint.h"
#include "walseg/file.h"
#include "walseg/made_files.h"
#include "walseg/segment_manager.h"

using namespace walseg;
using walseg_test::error_is;

namespace {

SegmentManager::Options quiet_options() {
  SegmentManager::Options o;
  o.config.segment_size_bytes = kMinSegmentSizeBytes;
  o.config.prealloc_segments = 0;
  o.background = false;
  return o;
}

std::uint32_t self() { return static_cast<std::uint32_t>(::getpid()); }

std::string file_text(const std::string& path) {
  auto bytes = walseg_test::read_all(path);
  return std::string(bytes.begin(), bytes.end());
}

// As walseg makes its lock file (0600, this user): the content is what a test varies.
void put_file(const std::string& path, const std::string& content) {
  walseg_test::put_as_walseg_makes_it(path, content);
}

/// A child process with a pipe from it: the child runs `body`, whose return value is written
/// to the pipe, then waits (if hold) until the parent closes its end of the second pipe.
struct Child {
  pid_t pid = -1;
  int from_child = -1;  // read end
  int to_child = -1;    // write end; closing it releases a holding child

  static Child run(const std::function<std::string()>& body, bool hold) {
    int up[2], down[2];
    BOOST_REQUIRE(::pipe(up) == 0);
    BOOST_REQUIRE(::pipe(down) == 0);
    Child c;
    c.pid = ::fork();
    BOOST_REQUIRE(c.pid >= 0);
    if (c.pid == 0) {
      ::close(up[0]);
      ::close(down[1]);
      std::string out;
      try {
        out = body();
      } catch (const std::exception& e) {
        out = std::string("unexpected exception: ") + e.what();
      }
      (void)!::write(up[1], out.data(), out.size());
      ::close(up[1]);
      if (hold) {
        char b;
        while (::read(down[0], &b, 1) > 0) {
        }
      }
      ::_exit(0);  // no destructors of the parent's objects run here
    }
    ::close(up[1]);
    ::close(down[0]);
    c.from_child = up[0];
    c.to_child = down[1];
    return c;
  }

  /// Everything the child wrote (blocks until it closed the pipe).
  std::string read_all() {
    std::string out;
    char buf[512];
    for (ssize_t n; (n = ::read(from_child, buf, sizeof buf)) > 0;) out.append(buf, n);
    return out;
  }

  /// Releases a holding child and returns its exit status.
  int finish() {
    ::close(to_child);
    ::close(from_child);
    int status = 0;
    BOOST_REQUIRE(::waitpid(pid, &status, 0) == pid);
    BOOST_REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
  }
};

/// "errno|message" of the Error `fn` throws, or "no error".
std::string describe_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::to_string(e.errnum()) + "|" + e.what();
  }
  return "no error";
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(dir_lock, walseg_test::FreshDirFixture)

BOOST_AUTO_TEST_CASE(acquire_writes_the_holder_pid_into_walseg_lock) {
  Directory d = Directory::open(dir.path());
  DirLock lock = DirLock::acquire(d);
  BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({self()}));
}

BOOST_AUTO_TEST_CASE(lock_is_released_when_the_holder_is_destroyed) {
  Directory d = Directory::open(dir.path());
  { DirLock first = DirLock::acquire(d); }
  BOOST_CHECK_NO_THROW(DirLock::acquire(d));
}

BOOST_AUTO_TEST_CASE(lock_moved_into_another_object_stays_held) {
  Directory d = Directory::open(dir.path());
  DirLock moved;
  {
    DirLock first = DirLock::acquire(d);
    moved = std::move(first);
  }  // the moved-from object is gone; the lock must still be held by `moved`
  BOOST_CHECK_THROW(DirLock::acquire(d), Error);
}

BOOST_AUTO_TEST_CASE(lock_of_a_crashed_process_is_released_and_its_stale_pid_replaced) {
  // The child takes the lock and _exits without running any destructor, as a kill -9 would.
  Child c = Child::run(
      [&]() -> std::string {
        Directory d = Directory::open(dir.path());
        DirLock lock = DirLock::acquire(d);
        ::_exit(failpoint::kCrashExitStatus);
      },
      false);
  BOOST_TEST(c.finish() == failpoint::kCrashExitStatus);
  BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({static_cast<std::uint32_t>(c.pid)}));
  SegmentManager m(dir.path(), quiet_options());
  BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({self()}));
}

BOOST_AUTO_TEST_CASE(lock_file_is_not_reported_by_the_managers_scan) {
  SegmentManager m(dir.path(), quiet_options());
  BOOST_TEST(m.scan_report().left_alone.empty());
  BOOST_TEST(walseg_test::path_exists(dir / "walseg.lock"));
}

// ---------------------------------------------------------------------------------------------
// Error paths: each checks errno and the message text.
// ---------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(second_acquire_in_the_same_process_is_refused_naming_this_pid) {
  Directory d = Directory::open(dir.path());
  DirLock first = DirLock::acquire(d);
  BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error,
                        error_is(EWOULDBLOCK, {"could not lock directory \"" + dir.path() + "\"",
                                               "it is in use by process " +
                                                   std::to_string(::getpid())}));
}

BOOST_AUTO_TEST_CASE(second_manager_in_the_same_process_is_refused_naming_this_pid) {
  SegmentManager first(dir.path(), quiet_options());
  BOOST_CHECK_EXCEPTION(SegmentManager(dir.path(), quiet_options()), Error,
                        error_is(EWOULDBLOCK, {"could not lock directory \"" + dir.path() + "\"",
                                               "in use by process " + std::to_string(::getpid())}));
  // The refused opener must not have rewritten the holder's PID.
  BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({self()}));
}

BOOST_AUTO_TEST_CASE(second_manager_in_a_forked_child_is_refused_naming_the_parent_pid) {
  SegmentManager first(dir.path(), quiet_options());
  Child c = Child::run(
      [&] { return describe_error([&] { SegmentManager second(dir.path(), quiet_options()); }); },
      false);
  std::string got = c.read_all();
  BOOST_TEST(c.finish() == 0);
  std::string want = std::to_string(EWOULDBLOCK) + "|could not lock directory \"" + dir.path() +
                     "\": it is in use by process " + std::to_string(::getpid()) +
                     "; wait for it to finish or stop it, then run this again";
  BOOST_TEST(got == want);
}

BOOST_AUTO_TEST_CASE(manager_held_by_a_child_refuses_the_parent_naming_the_child_pid_until_it_exits) {
  Child c = Child::run(
      [&]() -> std::string {
        static std::unique_ptr<SegmentManager> held;  // lives until _exit
        held = std::make_unique<SegmentManager>(dir.path(), quiet_options());
        return "locked";
      },
      true);
  // Read exactly the readiness word; the child keeps its end open while it holds the lock.
  char buf[6] = {};
  BOOST_REQUIRE(::read(c.from_child, buf, 6) == 6);
  BOOST_REQUIRE(std::string(buf, 6) == "locked");
  BOOST_CHECK_EXCEPTION(SegmentManager(dir.path(), quiet_options()), Error,
                        error_is(EWOULDBLOCK, {"could not lock directory \"" + dir.path() + "\"",
                                               "in use by process " + std::to_string(c.pid)}));
  BOOST_TEST(c.finish() == 0);
  BOOST_CHECK_NO_THROW(SegmentManager(dir.path(), quiet_options()));
}

// Round 30 (LOW): "in use by process (unknown)" said nothing to act on.
BOOST_AUTO_TEST_CASE(holder_that_wrote_no_pid_is_reported_with_how_to_find_it) {
  // A holder that has the flock but has not written its PID yet (or a foreign tool).
  int fd = ::open((dir / "walseg.lock").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  BOOST_REQUIRE(fd >= 0);
  BOOST_REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  Directory d = Directory::open(dir.path());
  BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error,
                        error_is(EWOULDBLOCK, {"in use by a process whose PID walseg.lock does not say (`fuser -v '" +
                                                                   dir.path() + "'`"}));
  ::close(fd);
}

BOOST_AUTO_TEST_CASE(removed_lock_file_does_not_let_a_second_writer_in) {
  // The directory's own flock holds the lock: removing walseg.lock (by hand, by a cleanup
  // script) once let a second writer create a new one, lock it and overwrite the first
  // writer's records.
  Directory d = Directory::open(dir.path());
  DirLock first = DirLock::acquire(d);
  BOOST_REQUIRE(::unlink((dir / "walseg.lock").c_str()) == 0);
  BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error,
                        error_is(EWOULDBLOCK, {"could not lock directory \"" + dir.path() + "\"",
                                               "in use by a process whose PID walseg.lock does not say"}));
  BOOST_TEST(!walseg_test::path_exists(dir / "walseg.lock"));  // the refused opener made nothing
  BOOST_CHECK_EXCEPTION(DirLock::acquire_shared(d), Error, error_is(EWOULDBLOCK, {"in use by "}));
}

BOOST_AUTO_TEST_CASE(reader_keeps_a_writer_out_even_without_a_lock_file) {
  Directory d = Directory::open(dir.path());
  DirLock reader = DirLock::acquire_shared(d);
  BOOST_CHECK_NO_THROW(DirLock::acquire_shared(d));  // readers share
  BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error, error_is(EWOULDBLOCK, {"in use by "}));
  BOOST_TEST(!walseg_test::path_exists(dir / "walseg.lock"));
}

BOOST_AUTO_TEST_CASE(lock_file_with_someone_elses_content_is_refused_and_left_unchanged) {
  // walseg writes nothing but a PID line there; anything else is another program's file.
  for (const std::string& content : {std::string("precious\n"), std::string("12 34\n"),
                                    std::string(100, '7')}) {
    put_file(dir / "walseg.lock", content);
    Directory d = Directory::open(dir.path());
    BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error,
                          error_is(EEXIST, {"could not use lock file \"" + dir.path() + "/walseg.lock\"",
                                            "not walseg's", "move it out of the directory"}));
    BOOST_TEST(file_text(dir / "walseg.lock") == content);
  }
}

BOOST_AUTO_TEST_CASE(lock_file_left_empty_or_zeroed_by_a_crash_is_taken_over) {
  // Also what a power cut leaves of a write it cut short: a prefix of the lock format, then
  // possibly zeros (the powerloss suite's states with a size inside a write).
  for (const std::string& content : {std::string(), std::string(7, '\0'), std::string("wals"),
                                     std::string("wal\0\0\0", 6), std::string("walseg.lock\n12"),
                                     std::string("walseg.lock\n\0\0", 14)}) {
    put_file(dir / "walseg.lock", content);
    BOOST_REQUIRE(::chmod((dir / "walseg.lock").c_str(), 0600) == 0);  // as walseg makes it
    Directory d = Directory::open(dir.path());
    DirLock lock = DirLock::acquire(d);
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({self()}));
    BOOST_TEST(lock.earlier_writer_pids().empty());
  }
}

// Break-it round 21: a user's empty walseg.lock (`: > walseg.lock`, mode 0644) was taken for
// one a crash left and rewritten. walseg makes its lock file 0600, as its own user.
BOOST_AUTO_TEST_CASE(an_empty_lock_file_not_made_as_walseg_makes_it_is_refused) {
  // Round 22: 0400 and 0000 are inside 0600 but not what walseg makes (as root, the open for
  // writing works whatever the mode).
  for (const mode_t mode : {mode_t{0644}, mode_t{0400}, mode_t{0000}})
  for (const std::string& content : {std::string(), std::string(7, '\0')}) {
    BOOST_TEST_CONTEXT("mode " << std::oct << mode) {
    put_file(dir / "walseg.lock", content);
    BOOST_REQUIRE(::chmod((dir / "walseg.lock").c_str(), mode) == 0);
    Directory d = Directory::open(dir.path());
    BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error,
                          error_is(EEXIST, {"could not use lock file \"" + dir.path() + "/walseg.lock\"", "not walseg's",
                                            "move it out of the directory"}));
    BOOST_TEST(file_text(dir / "walseg.lock") == content);
    struct stat st{};
    BOOST_REQUIRE(::stat((dir / "walseg.lock").c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 07777) == mode);
    BOOST_REQUIRE(::chmod((dir / "walseg.lock").c_str(), 0644) == 0);  // so that put_file can rewrite it
    }
  }
}

// Break-it round 23 H3: the mode and owner rule held only for an empty or zeroed lock file, so
// a user's 0644 walseg.lock holding a PID line was rewritten and its "PID" believed (its
// temporary files then removed as that writer's leftovers). Any content now needs mode 0600
// and walseg's user.
BOOST_AUTO_TEST_CASE(a_lock_file_holding_pids_not_made_as_walseg_makes_it_is_refused) {
  const bool root = ::geteuid() == 0;
  for (const mode_t mode : {mode_t{0644}, mode_t{0400}, mode_t{0640}, mode_t{0600}}) {
    const bool other_owner = mode == 0600;
    if (other_owner && !root) continue;
    BOOST_TEST_CONTEXT("mode " << std::oct << mode << (other_owner ? " another owner" : "")) {
      ::unlink((dir / "walseg.lock").c_str());
      put_file(dir / "walseg.lock", lock_file_text({4242}));
      BOOST_REQUIRE(::chmod((dir / "walseg.lock").c_str(), mode) == 0);
      if (other_owner) BOOST_REQUIRE(::chown((dir / "walseg.lock").c_str(), ::geteuid() + 1, static_cast<gid_t>(-1)) == 0);
      Directory d = Directory::open(dir.path());
      // Another user's first says to run as that user (break-it round 31 L1: it said only "move it out").
      if (other_owner)
        BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error,
                              error_is(EEXIST, {"could not use lock file \"" + dir.path() + "/walseg.lock\": it is owned by "
                                                "user ID " + std::to_string(::geteuid() + 1),
                                                "is that user's, run walseg as that user",
                                                "move it out of the directory"}));
      else
        BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error,
                              error_is(EEXIST, {"could not use lock file \"" + dir.path() + "/walseg.lock\": it is a file ",
                                                "with mode", "not walseg's", "move it out of the directory"}));
      BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({4242}));
      BOOST_TEST(lock_file_pids(d).empty());  // its "PID" names nobody's leftovers
    }
  }
  // The same bytes in a file made as walseg makes it: an earlier writer's.
  ::unlink((dir / "walseg.lock").c_str());
  put_file(dir / "walseg.lock", lock_file_text({4242}));
  BOOST_REQUIRE(::chmod((dir / "walseg.lock").c_str(), 0600) == 0);
  Directory d = Directory::open(dir.path());
  DirLock lock = DirLock::acquire(d);
  BOOST_TEST((lock.earlier_writer_pids() == std::vector<std::uint32_t>{4242}));
}

// walseg's own lock file is 0600 whatever the umask, so that the next opening takes it.
BOOST_AUTO_TEST_CASE(the_lock_file_is_made_0600_under_any_umask) {
  {
    struct UmaskGuard {  // put back even when the acquire throws, for the tests after this one
      mode_t old = ::umask(0277);
      ~UmaskGuard() { ::umask(old); }
    } guard;
    Directory d = Directory::open(dir.path());
    DirLock lock = DirLock::acquire(d);
  }
  struct stat st{};
  BOOST_REQUIRE(::stat((dir / "walseg.lock").c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0600u);
  Directory d = Directory::open(dir.path());
  DirLock again = DirLock::acquire(d);  // refused, were it 0400 as the umask made it
  BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({self()}));
}

// Break-it round 18 F4b: the earlier writers stay listed after the holder until the opener has
// removed their leftovers (forget_earlier_writers), so that a crash in between leaves them
// named; at most kMaxLockFilePids lines, the oldest dropped.
BOOST_AUTO_TEST_CASE(earlier_writers_are_listed_after_the_holder_until_forgotten) {
  const std::uint32_t me = self();
  put_file(dir / "walseg.lock", lock_file_text({123, 77}, {"xlogtemp.77.3"}));
  put_file(dir / "xlogtemp.77.3", "");  // 77 left a temporary file; 123, the last writer, is listed anyway
  {
    Directory d = Directory::open(dir.path());
    DirLock lock = DirLock::acquire(d);
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({me, 123, 77}, {"xlogtemp.77.3"}));
    BOOST_TEST(lock.earlier_writer_pids() == (std::vector<std::uint32_t>{123, 77}), boost::test_tools::per_element());
    BOOST_TEST(lock_file_pids(d) == (std::vector<std::uint32_t>{me, 123, 77}), boost::test_tools::per_element());
    lock.forget_earlier_writers();
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({me}));
  }
  ::unlink((dir / "xlogtemp.77.3").c_str());
  // Break-it round 25 M1: an earlier writer with no listed temporary file left is not listed
  // again, so writers killed one after another no longer push out one whose leftovers remain.
  // A file named for a writer that it never listed keeps nothing (xlogtemp.5).
  put_file(dir / "xlogtemp.3", "");
  put_file(dir / "xlogtemp.5", "");
  put_file(dir / "walseg.lock", lock_file_text({1, 2, 3, 4, 5, 6, 7}, {"xlogtemp.3", "xlogtemp.4"}));
  {
    Directory d = Directory::open(dir.path());
    DirLock lock = DirLock::acquire(d);
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({me, 1, 3}, {"xlogtemp.3"}));
  }
  ::unlink((dir / "xlogtemp.5").c_str());
  // At most kMaxLockFilePids lines: the oldest dropped.
  std::vector<std::uint32_t> full;
  std::vector<std::string> listed;
  for (std::uint32_t p = 1; p <= kMaxLockFilePids; ++p) {
    full.push_back(p);
    listed.push_back("xlogtemp." + std::to_string(p));
    put_file(dir / listed.back(), "");
  }
  put_file(dir / "walseg.lock", lock_file_text(full, listed));
  {
    Directory d = Directory::open(dir.path());
    DirLock lock = DirLock::acquire(d);
    std::vector<std::uint32_t> want{me};
    want.insert(want.end(), full.begin(), full.end() - 1);
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text(want, listed));
  }
  // More lines than walseg writes, an empty line, no end line, or bare PID lines (an older
  // walseg's, or another program's lock file: break-it round 25 H3) is someone's file.
  full.push_back(99);
  for (const std::string& content : {lock_file_text(full), std::string("walseg.lock\n1\n\n2\nend\n"),
                                     std::string("walseg.lock\n1\nxyz\nend\n"), std::string("walseg.lock\n1\nendless"), std::string("4242\n"), std::string("1\n2\n"),
                                     // Break-it round 35 H5: notes after the end line, and PID
                                     // lines fmt never writes.
                                     std::string("walseg.lock\nend\nwalseg.lock\nend\nrunbook: keep\n"),
                                     std::string("walseg.lock\n1\nend\n2\nnotes\nend\n"),
                                     std::string("walseg.lock\n007\nend\n"), std::string("walseg.lock\n0\nend\n")}) {
    BOOST_TEST_CONTEXT(content) {
      put_file(dir / "walseg.lock", content);
      Directory d = Directory::open(dir.path());
      BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error, error_is(EEXIST, {"not walseg's", "move"}));
      BOOST_TEST(file_text(dir / "walseg.lock") == content);
      BOOST_TEST(lock_file_pids(d).empty());
    }
  }
}

// Break-it round 33: walseg.lock kept a writer's PID after it closed cleanly, so the next
// opening took any file under its temporary names for its crash's leftover. A clean close
// keeps only the temporary names whose files remain, and names only the writers those can be
// the leftovers of: itself while a name it listed still holds a file (its own
// walseg.control.tmp or xlogtemp file, left by a failed unlink), an earlier writer while a
// listed name of its PID does. A file nobody listed keeps no PID: the list, not the name, says
// what a writer made.
BOOST_AUTO_TEST_CASE(a_clean_close_names_only_writers_whose_leftovers_remain) {
  const std::uint32_t me = self();
  put_file(dir / "walseg.lock", lock_file_text({123, 77}, {"xlogtemp.77.3"}));
  put_file(dir / "xlogtemp.77.3", "");
  put_file(dir / "xlogtemp.123.1", "");  // named for the last writer, never listed
  Directory d = Directory::open(dir.path());
  const std::string mine = "xlogtemp." + std::to_string(me) + ".0";
  {
    // One named for this process that it did not make (someone's, during the run or before
    // it: PIDs are reused) does not keep its PID (break-it round 34 H1).
    DirLock lock = DirLock::acquire(d);
    put_file(dir / mine, "");
    lock.mark_clean_close();
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({77}, {"xlogtemp.77.3"}));
  }
  ::unlink((dir / mine).c_str());
  for (const std::string& left : {mine, std::string("walseg.control.tmp")}) {
    BOOST_TEST_CONTEXT(left) {
      DirLock lock = DirLock::acquire(d);
      DirLock::will_create(d, left);
      File::open_at(d, left, O_WRONLY | O_CREAT | O_EXCL, 0600);  // made, and its unlink failed
      lock.mark_clean_close();
      BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({me, 77}, {"xlogtemp.77.3", left}));
    }
    ::unlink((dir / left).c_str());
  }
  ::unlink((dir / "xlogtemp.77.3").c_str());
  {
    DirLock lock = DirLock::acquire(d);
    BOOST_TEST(lock_file_pids(d) == (std::vector<std::uint32_t>{me}), boost::test_tools::per_element());
    lock.mark_clean_close();
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({}));
    BOOST_TEST(lock_file_pids(d).empty());
  }
  // A lock file naming no writer is walseg's: the next writer takes it and names itself.
  DirLock lock = DirLock::acquire(d);
  BOOST_TEST(lock.earlier_writer_pids().empty());
  BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({me}));
}

// Break-it round 25 M2: the lock file was truncated and then written, so a kill between the two
// left it empty, and the earlier writers it listed (whose leftovers remained) were forgotten.
// walseg now writes the new list over the old one and then cuts it: what a crash between the
// two leaves (the new list, then the old one's tail) is still read as the new list.
BOOST_AUTO_TEST_CASE(a_lock_file_cut_short_of_its_truncate_still_names_its_list) {
  const std::uint32_t me = self();
  const std::string torn = lock_file_text({me}) + lock_file_text({me, 5, 6}).substr(lock_file_text({me}).size());
  put_file(dir / "walseg.lock", torn);
  put_file(dir / "xlogtemp.6", "");
  Directory d = Directory::open(dir.path());
  BOOST_TEST(lock_file_pids(d) == (std::vector<std::uint32_t>{me}), boost::test_tools::per_element());
  // Whatever a shorter list leaves of a longer one's tail is still read as the shorter list
  // (break-it round 35 H5 made the tail's form strict).
  for (const std::vector<std::uint32_t>& shorter :
       {std::vector<std::uint32_t>{}, {7}, {123456}, {4000000000u}, {1, 2, 3, 4, 5}}) {
    const std::string text = lock_file_text(shorter);
    const std::string longer = lock_file_text({4000000000u, 1234567, 5, 6, 98765, 43});
    put_file(dir / "walseg.lock", text + longer.substr(text.size()));
    BOOST_TEST_CONTEXT(text + longer.substr(text.size())) {
      BOOST_TEST(lock_file_pids(d) == shorter, boost::test_tools::per_element());
    }
  }
  // A crash between truncate and write, as the old code did it, leaves it empty: taken over.
  put_file(dir / "walseg.lock", lock_file_text({me, 5, 6}));
  failpoint::arm("pwrite", {failpoint::Kind::kErrno, EIO, 0, 1, 1});
  BOOST_CHECK_THROW(DirLock::acquire(d), Error);
  failpoint::disarm("pwrite");
  // The write failed: the old list is still whole, and still names 6's leftovers.
  BOOST_TEST(lock_file_pids(d) == (std::vector<std::uint32_t>{me, 5, 6}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(lock_file_that_cannot_be_opened_reports_the_open_error_with_its_path) {
  Directory d = Directory::open(dir.path());
  failpoint::arm("open", {failpoint::Kind::kErrno, EACCES, 0, 1, 1});
  BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error,
                        error_is(EACCES, {"could not open file \"" + dir.path() + "/walseg.lock\"",
                                          "Permission denied"}));
}

BOOST_AUTO_TEST_CASE(a_lock_file_removed_before_the_flock_is_locked_again_under_its_name) {
  // A refused open removes the lock file it made (remove_if_made). An opener that had opened
  // that file just before would lock it once unlinked, and a third, making a new one under the
  // name, would lock that: two writers. A lock counts only on the file the name names.
  Directory d = Directory::open(dir.path());
  failpoint::Spec removed;
  removed.kind = failpoint::Kind::kCall;
  removed.call = [&] {
    failpoint::disarm("dir_lock.before_flock");
    BOOST_REQUIRE(::unlink((dir / "walseg.lock").c_str()) == 0);
  };
  failpoint::arm("dir_lock.before_flock", removed);
  DirLock lock = DirLock::acquire(d);
  const int other = ::open((dir / "walseg.lock").c_str(), O_RDONLY);
  BOOST_REQUIRE(other >= 0);
  BOOST_TEST(::flock(other, LOCK_SH | LOCK_NB) != 0);  // the file under the name is the one locked
  ::close(other);
}

// Break-it round 10 F3: a refused open removed whatever was under walseg.lock by name, and a
// refusal can come after a long recovery, in which a user's file may be moved onto the name.
BOOST_AUTO_TEST_CASE(a_refused_open_removes_only_the_lock_file_it_made) {
  const std::string mine = dir.path() + "/../mylock." + std::to_string(::getpid());
  std::ofstream(mine) << "mine\n";
  SegmentManager::Options o = quiet_options();
  o.before_changes = [&](SegmentManager&) {
    BOOST_REQUIRE(::rename(mine.c_str(), (dir.path() + "/walseg.lock").c_str()) == 0);
    throw Error(EINVAL, "test", dir.path(), "refused after the lock file was made");
  };
  BOOST_CHECK_THROW(SegmentManager(dir.path(), o), Error);
  std::ifstream in(dir.path() + "/walseg.lock");
  std::string text;
  std::getline(in, text);
  BOOST_TEST(text == "mine");  // the user's file, left where it was moved
}

// Break-it round 35 H2: a zero-filled xlogtemp.<PID>.0 put there before a writer with that PID
// started was left alone by it, and removed as its crash's leftover by the next writer after it
// was killed. The opening now refuses such a file, changing nothing; one an earlier writer with
// the same PID may have left (PIDs are reused) is still that writer's leftover.
BOOST_AUTO_TEST_CASE(a_temporary_file_named_for_this_process_before_it_started_is_refused) {
  const std::uint32_t me = self();
  const std::string theirs = "xlogtemp." + std::to_string(me) + ".0";
  put_file(dir / theirs, std::string(8192, '\0'));
  ::chmod((dir / theirs).c_str(), 0600);
  put_file(dir / "walseg.lock", lock_file_text({77}));
  Directory d = Directory::open(dir.path());
  BOOST_CHECK_EXCEPTION(DirLock::acquire(d), Error,
                        error_is(EEXIST, {"\"" + dir.path() + "/" + theirs + "\" is named as walseg names",
                                          "PID " + std::to_string(me), "move it out"}));
  BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({77}));
  BOOST_TEST(file_text(dir / theirs) == std::string(8192, '\0'));
  // In a directory without a lock file, none is left behind.
  ::unlink((dir / "walseg.lock").c_str());
  BOOST_CHECK_THROW(DirLock::acquire(d), Error);
  BOOST_TEST(!walseg_test::path_exists(dir / "walseg.lock"));
  // An earlier writer with this PID: its leftover, as before.
  put_file(dir / "walseg.lock", lock_file_text({me, 77}));
  DirLock lock = DirLock::acquire(d);
  BOOST_TEST(lock.earlier_writer_pids() == (std::vector<std::uint32_t>{me, 77}), boost::test_tools::per_element());
}

// Break-it round 35 H3: a temporary name's file is a crash's leftover only if walseg.lock lists
// it: will_create lists it before the file exists, gone takes it out, a directory no DirLock of
// this process holds lists nothing, and a refused opening keeps listed (with its PID) what it
// made and could not remove (round 34 M2: auto's probe files were orphaned).
BOOST_AUTO_TEST_CASE(temporary_names_are_listed_before_their_files_exist) {
  const std::uint32_t me = self();
  const std::string mine = "xlogtemp." + std::to_string(me) + ".3";
  Directory d = Directory::open(dir.path());
  DirLock::will_create(d, mine);  // no lock held: nothing
  BOOST_TEST(!walseg_test::path_exists(dir / "walseg.lock"));
  put_file(dir / "walseg.lock", lock_file_text({77}));
  {
    DirLock lock = DirLock::acquire(d);
    DirLock::will_create(d, mine);
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({me, 77}, {mine}));
    BOOST_TEST(lock_file_temps(d) == std::vector<std::string>{mine}, boost::test_tools::per_element());
    DirLock::will_create(d, "walseg.control.tmp");
    DirLock::gone(d, mine);
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({me, 77}, {"walseg.control.tmp"}));
    DirLock::gone(d, "walseg.control.tmp");
    // Refused after making a file it could not remove: the file stays listed, with this PID.
    DirLock::will_create(d, mine);
    put_file(dir / mine, std::string(100, '\0'));
    lock.remove_if_made(d);
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({me, 77}, {mine}));
  }
  // The next opening keeps it listed while the file is there, and drops it once it is gone.
  {
    DirLock lock = DirLock::acquire(d);
    BOOST_TEST(lock.earlier_listed_temps() == std::vector<std::string>{mine}, boost::test_tools::per_element());
    BOOST_TEST(lock_file_temps(d) == std::vector<std::string>{mine}, boost::test_tools::per_element());
    ::unlink((dir / mine).c_str());
    lock.forget_earlier_writers();
    BOOST_TEST(file_text(dir / "walseg.lock") == lock_file_text({me}));
  }
  // A temp line naming anything but a temporary name is someone's text.
  put_file(dir / "walseg.lock", "walseg.lock\n1\ntemp notes.txt\nend\n");
  BOOST_CHECK_THROW(DirLock::acquire(d), Error);
}

BOOST_AUTO_TEST_SUITE_END()

