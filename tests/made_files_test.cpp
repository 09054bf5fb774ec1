#define BOOST_TEST_MODULE made_files
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/made_files.h: what walseg bench's clean-up takes for its own. Break-it
// round 7 F5: a user removed a file bench made and wrote another under the same name, ext4 gave
// it the freed inode number, and bench removed it at the end. The birth time tells them apart.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "fs_test_util.h"
#include "walseg/directory.h"
#include "walseg/file.h"
#include "walseg/made_files.h"

using namespace walseg;

BOOST_FIXTURE_TEST_SUITE(made_files_suite, walseg_test::FreshDirFixture)

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
  // birth time differs (kept at a few milliseconds' resolution, hence the pause).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  walseg_test::write_bytes(dir / "later", 0, 10, 'u');
  struct statx sx{};
  BOOST_REQUIRE(::statx(AT_FDCWD, (dir / "later").c_str(), 0, STATX_BTIME, &sx) == 0);
  if ((sx.stx_mask & STATX_BTIME) != 0) BOOST_TEST(!made_files::made(d.fd(), "later", mine));
  // Removed through Directory: forgotten.
  d.unlink("mine");
  BOOST_TEST(!made_files::made(d.fd(), "later", mine));
}

BOOST_AUTO_TEST_SUITE_END()
