#define BOOST_TEST_MODULE made_files
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/made_files.h: what walseg bench's clean-up takes for its own. Break-it
// round 7 F5: a user removed a file bench made and wrote another under the same name, ext4 gave
// it the freed inode number, and bench removed it at the end. The birth time tells them apart,
// or where the filesystem keeps none the inode generation (round 13 F2: on ext4 with 128-byte
// inodes the identity alone decided). tests/made_files_nobtime_test.sh runs this binary again
// with WALSEG_MADE_FILES_DIR on such a filesystem.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "fs_test_util.h"
#include "walseg/directory.h"
#include "walseg/file.h"
#include "walseg/failpoint.h"
#include "walseg/made_files.h"

using namespace walseg;

namespace {
// Under WALSEG_MADE_FILES_DIR when set (a mount without birth times), else /var/tmp.
struct Fixture {
  Fixture() { failpoint::disarm_all(); }
  ~Fixture() { failpoint::disarm_all(); }
  walseg_test::TempDir dir{::getenv("WALSEG_MADE_FILES_DIR") != nullptr ? ::getenv("WALSEG_MADE_FILES_DIR") : "/var/tmp"};
};
}  // namespace

BOOST_FIXTURE_TEST_SUITE(made_files_suite, Fixture)

BOOST_AUTO_TEST_CASE(a_file_made_exclusively_is_ours_and_another_under_its_identity_is_not) {
  made_files::start();
  Directory d = Directory::open(dir.path());
  File::open_at(d, "mine", O_WRONLY | O_CREAT | O_EXCL, 0600).close();
  const struct stat mine = walseg_test::stat_path(dir / "mine");
  BOOST_TEST(made_files::made(d.fd(), "mine", mine));
  // Not made by walseg (no O_EXCL open through the io layer): not ours.
  walseg_test::write_bytes(dir / "theirs", 0, 10, 'u');
  BOOST_TEST(!made_files::made(d.fd(), "theirs", walseg_test::stat_path(dir / "theirs")));
  // A later file presented under our file's identity, as a reused inode number would be: the
  // birth time differs (kept at a few milliseconds' resolution, hence the pause), or, without
  // one, the generation.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  walseg_test::write_bytes(dir / "later", 0, 10, 'u');
  const made_files::Mark m = made_files::mark_of(d.fd(), "later");
  BOOST_TEST_MESSAGE("birth time " << m.born_ns << ", generation " << m.generation);
  BOOST_TEST(!made_files::made(d.fd(), "later", mine));
  // Removed through Directory: forgotten.
  d.unlink("mine");
  BOOST_TEST(!made_files::made(d.fd(), "later", mine));
}

BOOST_AUTO_TEST_CASE(marks_match_by_birth_time_else_generation_and_never_when_unknown) {
  using made_files::Mark;
  using made_files::same_file;
  BOOST_TEST(same_file(Mark{5, -1}, Mark{5, -1}));
  BOOST_TEST(!same_file(Mark{5, -1}, Mark{6, -1}));
  BOOST_TEST(!same_file(Mark{5, -1}, Mark{-1, 7}));
  BOOST_TEST(same_file(Mark{-1, 7}, Mark{-1, 7}));
  BOOST_TEST(!same_file(Mark{-1, 7}, Mark{-1, 8}));
  BOOST_TEST(!same_file(Mark{}, Mark{}));  // nothing known: no proof, no match
}

// Break-it round 13 F1: Directory::unlink removed the name, then forgot the identity; a file
// another thread made in between under the freed inode number was forgotten instead, and bench
// left its own segment saying it was not bench's.
BOOST_AUTO_TEST_CASE(a_file_made_under_a_freed_inode_number_during_an_unlink_stays_ours) {
  made_files::start();
  Directory d = Directory::open(dir.path());
  File::open_at(d, "old", O_WRONLY | O_CREAT | O_EXCL, 0600).close();
  const ino_t old_ino = walseg_test::stat_path(dir / "old").st_ino;
  failpoint::Spec make;
  make.kind = failpoint::Kind::kCall;
  make.call = [&] { File::open_at(d, "new", O_WRONLY | O_CREAT | O_EXCL, 0600).close(); };
  failpoint::arm("unlink.before_forget", make);
  d.unlink("old");
  failpoint::disarm_all();
  const struct stat st = walseg_test::stat_path(dir / "new");
  if (st.st_ino != old_ino) {
    BOOST_TEST_MESSAGE("skipped: the filesystem did not reuse the inode number");
    return;
  }
  BOOST_TEST(made_files::made(d.fd(), "new", st));
}

// Break-it round 14 F1: after a backend died, its scratch files were told from a user's by
// birth time and content, and a user's zero-filled copy was removed. The journal lists what
// the backend made, so that a later process removes exactly those.
BOOST_AUTO_TEST_CASE(a_journal_lists_the_files_made_in_its_directory_and_only_those) {
  made_files::start();
  Directory d = Directory::open(dir.path());
  File journal = File::open_at(d, "journal", O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0600);
  made_files::journal_in(d.fd(), journal.fd());
  File::open_at(d, "mine", O_WRONLY | O_CREAT | O_EXCL, 0600).close();
  made_files::stop_journal(d.fd());
  File::open_at(d, "after", O_WRONLY | O_CREAT | O_EXCL, 0600).close();  // not journaled
  walseg_test::write_bytes(dir / "theirs", 0, 10, '\0');
  std::ifstream in(dir / "journal");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto entries = made_files::read_journal(text + "made 1 2");  // a torn last line is skipped
  BOOST_TEST(entries.size() == 1u, text);
  for (const char* n : {"mine", "after", "theirs"})
    BOOST_TEST(made_files::journaled(entries, d.fd(), n, walseg_test::stat_path(dir / n)) == (std::string(n) == "mine"),
               n);
}

BOOST_AUTO_TEST_SUITE_END()
