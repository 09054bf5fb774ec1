#define BOOST_TEST_MODULE directory
#include <boost/test/unit_test.hpp>

// Tests for include/walseg/directory.h: the durable-rename building blocks. The no-replace
// rename is the heart of the install protocol ("nothing is replaced"), so it is checked against
// existing targets of every kind, with the contents of both files compared byte for byte.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "fs_test_util.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/io_trace.h"

using namespace walseg;
using walseg_test::error_is;
using walseg_test::FreshDirFixture;
using walseg_test::read_all;
using walseg_test::write_bytes;

BOOST_FIXTURE_TEST_SUITE(directory, FreshDirFixture)

BOOST_AUTO_TEST_CASE(open_with_create_makes_missing_parents_with_mode_0700) {
  std::string deep = dir / "a/b/c";
  Directory d = Directory::open(deep, true);
  BOOST_TEST(d.path() == deep);
  BOOST_TEST(d.path_of("x") == deep + "/x");
  for (const std::string& p : {dir / "a", dir / "a/b", deep}) {
    auto st = walseg_test::stat_path(p);
    BOOST_TEST(S_ISDIR(st.st_mode));
    BOOST_TEST((st.st_mode & 0777) == 0700u, p << " has mode " << std::oct << (st.st_mode & 0777));
  }
  Directory again = Directory::open(deep, true);  // existing: fine
  BOOST_TEST(again.fd() >= 0);
}

BOOST_AUTO_TEST_CASE(C13_each_directory_created_is_made_durable_by_an_fsync_of_its_parent) {
  // Bug (found by the power-cut filesystem): mkdir without an fsync of the parent, so a power
  // cut could take a new WAL directory, and every acknowledged record in it, away.
  io_trace::start();
  Directory d = Directory::open(dir / "a/b", true);
  auto ev = io_trace::stop();
  auto index = [&](const std::string& op, const std::string& path) {
    for (std::size_t i = 0; i < ev.size(); ++i)
      if (ev[i].op == op && ev[i].path == path) return static_cast<int>(i);
    return -1;
  };
  const int mkdir_a = index("mkdir", dir / "a"), mkdir_b = index("mkdir", dir / "a/b");
  BOOST_TEST(mkdir_a >= 0);
  BOOST_TEST(mkdir_b > mkdir_a);
  BOOST_TEST(index("dir_fsync", dir.path()) > mkdir_a);  // a's name, in its parent
  BOOST_TEST(index("dir_fsync", dir / "a") > mkdir_b);   // b's name, in a
  io_trace::start();
  Directory again = Directory::open(dir / "a/b", true);  // nothing created: nothing synced
  ev = io_trace::stop();
  for (const auto& e : ev) BOOST_TEST(e.op != "dir_fsync");
}

BOOST_AUTO_TEST_CASE(rename_noreplace_moves_the_file_and_keeps_its_bytes) {
  write_bytes(dir / "from", 0, 5000, 'q');
  Directory d = Directory::open(dir.path());
  d.rename_noreplace("from", "to");
  BOOST_TEST(!walseg_test::path_exists(dir / "from"));
  BOOST_TEST(read_all(dir / "to") == std::vector<char>(5000, 'q'));
  d.fsync();
}

BOOST_AUTO_TEST_CASE(unlink_removes_and_reports_whether_a_file_was_there) {
  write_bytes(dir / "u", 0, 1, 'u');
  Directory d = Directory::open(dir.path());
  BOOST_TEST(d.unlink("u"));
  BOOST_TEST(!walseg_test::path_exists(dir / "u"));
  BOOST_TEST(!d.unlink("u", true));
}

BOOST_AUTO_TEST_CASE(exists_counts_symlinks_even_dangling_ones) {
  Directory d = Directory::open(dir.path());
  BOOST_TEST(!d.exists("link"));
  BOOST_REQUIRE(::symlink("/nonexistent/target", (dir / "link").c_str()) == 0);
  BOOST_TEST(d.exists("link"));
}

BOOST_AUTO_TEST_CASE(list_is_sorted_skips_dots_and_marks_only_regular_files) {
  write_bytes(dir / "b", 0, 1, 'b');
  write_bytes(dir / "A", 0, 1, 'a');
  BOOST_REQUIRE(::mkdir((dir / "sub").c_str(), 0700) == 0);
  BOOST_REQUIRE(::symlink("b", (dir / "c_link").c_str()) == 0);
  Directory d = Directory::open(dir.path());
  auto entries = d.list();
  std::vector<std::string> names;
  std::vector<bool> regular;
  for (const auto& e : entries) {
    names.push_back(e.name);
    regular.push_back(e.is_regular);
  }
  BOOST_TEST(names == (std::vector<std::string>{"A", "b", "c_link", "sub"}),
             boost::test_tools::per_element());
  BOOST_TEST(regular == (std::vector<bool>{true, true, false, false}),
             boost::test_tools::per_element());
}

// ---- error paths: each checks the errno and the message text ----

BOOST_AUTO_TEST_CASE(rename_noreplace_never_replaces_an_existing_file) {
  write_bytes(dir / "new", 0, 4096, 'N');
  write_bytes(dir / "old", 0, 8192, 'O');
  Directory d = Directory::open(dir.path());
  BOOST_CHECK_EXCEPTION(d.rename_noreplace("new", "old"), Error,
                        error_is(EEXIST, {"could not rename file \"" + dir / "new" + "\" to \"" +
                                          dir / "old" + "\": File exists"}));
  BOOST_TEST(read_all(dir / "new") == std::vector<char>(4096, 'N'));
  BOOST_TEST(read_all(dir / "old") == std::vector<char>(8192, 'O'));
}

BOOST_AUTO_TEST_CASE(rename_noreplace_never_replaces_a_symlink_or_a_directory) {
  write_bytes(dir / "new", 0, 10, 'N');
  BOOST_REQUIRE(::symlink("/nonexistent", (dir / "dangling").c_str()) == 0);
  BOOST_REQUIRE(::mkdir((dir / "subdir").c_str(), 0700) == 0);
  Directory d = Directory::open(dir.path());
  BOOST_CHECK_EXCEPTION(d.rename_noreplace("new", "dangling"), Error, error_is(EEXIST, {}));
  BOOST_CHECK_EXCEPTION(d.rename_noreplace("new", "subdir"), Error, error_is(EEXIST, {}));
  struct stat st{};
  BOOST_TEST(::lstat((dir / "dangling").c_str(), &st) == 0);
  BOOST_TEST(S_ISLNK(st.st_mode));
  BOOST_TEST(read_all(dir / "new").size() == 10u);
}

BOOST_AUTO_TEST_CASE(rename_of_a_missing_source_throws_enoent) {
  Directory d = Directory::open(dir.path());
  BOOST_CHECK_EXCEPTION(d.rename_noreplace("ghost", "x"), Error,
                        error_is(ENOENT, {dir / "ghost", "No such file or directory"}));
  BOOST_TEST(!walseg_test::path_exists(dir / "x"));
}

BOOST_AUTO_TEST_CASE(rename_failpoint_fails_before_touching_the_names) {
  write_bytes(dir / "f", 0, 1, 'f');
  Directory d = Directory::open(dir.path());
  failpoint::arm("rename", {failpoint::Kind::kErrno, EIO, 0, 1, 1});
  BOOST_CHECK_EXCEPTION(d.rename_noreplace("f", "g"), Error,
                        error_is(EIO, {"could not rename file", "Input/output error"}));
  BOOST_TEST(walseg_test::path_exists(dir / "f"));
  BOOST_TEST(!walseg_test::path_exists(dir / "g"));
}

namespace {
std::string text_of(const std::string& p) {
  const std::vector<char> b = read_all(p);
  return std::string(b.begin(), b.end());
}
}  // namespace

BOOST_AUTO_TEST_CASE(replace_checked_replaces_an_accepted_file_and_removes_the_old_one) {
  Directory d = Directory::open(dir.path());
  write_bytes(dir / "new", 0, 3, 'n');
  write_bytes(dir / "old", 0, 5, 'o');
  const struct stat mine = walseg_test::stat_path(dir / "new");
  std::vector<std::string> checked;
  auto r = d.replace_checked("new", mine, "old", [&](const std::string& name) {
    checked.push_back(name);
    return std::optional<std::string>();
  });
  BOOST_TEST(r.replaced);
  BOOST_TEST(!r.left_at_from);
  BOOST_TEST(text_of(dir / "old") == "nnn");
  BOOST_TEST(!d.exists("new"));
  // The target, once, before the exchange; what comes out is known by its identity.
  BOOST_TEST(checked == (std::vector<std::string>{"old"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(replace_checked_refuses_a_file_the_check_rejects_and_changes_nothing) {
  Directory d = Directory::open(dir.path());
  write_bytes(dir / "new", 0, 3, 'n');
  write_bytes(dir / "old", 0, 5, 'o');
  const struct stat mine = walseg_test::stat_path(dir / "new");
  auto r = d.replace_checked("new", mine, "old", [](const std::string&) { return std::optional<std::string>("no"); });
  BOOST_TEST(!r.replaced);
  BOOST_TEST(!r.source_replaced);
  BOOST_TEST(r.why == "no");
  BOOST_TEST(text_of(dir / "old") == "ooooo");
  BOOST_TEST(text_of(dir / "new") == "nnn");
}

BOOST_AUTO_TEST_CASE(replace_checked_fills_a_missing_target_and_refuses_a_replaced_source) {
  Directory d = Directory::open(dir.path());
  write_bytes(dir / "new", 0, 3, 'n');
  const struct stat mine = walseg_test::stat_path(dir / "new");
  auto accept = [](const std::string&) { return std::optional<std::string>(); };
  BOOST_TEST(d.replace_checked("new", mine, "old", accept).replaced);
  BOOST_TEST(text_of(dir / "old") == "nnn");
  write_bytes(dir / "new", 0, 2, 'u');  // another file under the source's name
  auto r = d.replace_checked("new", mine, "old", accept);
  BOOST_TEST(!r.replaced);
  BOOST_TEST(r.source_replaced);
  BOOST_TEST(text_of(dir / "old") == "nnn");
  BOOST_TEST(text_of(dir / "new") == "uu");
}

BOOST_AUTO_TEST_CASE(unlink_of_a_missing_file_without_missing_ok_throws_enoent) {
  Directory d = Directory::open(dir.path());
  BOOST_CHECK_EXCEPTION(d.unlink("none"), Error,
                        error_is(ENOENT, {"could not remove file \"" + dir / "none" + "\""}));
}

BOOST_AUTO_TEST_CASE(open_of_a_missing_directory_throws_enoent_naming_it) {
  BOOST_CHECK_EXCEPTION(Directory::open(dir / "missing"), Error,
                        error_is(ENOENT, {"could not open directory \"" + dir / "missing" +
                                          "\": No such file or directory"}));
}

BOOST_AUTO_TEST_CASE(open_of_a_regular_file_as_directory_throws_enotdir) {
  write_bytes(dir / "plain", 0, 1, 'p');
  BOOST_CHECK_EXCEPTION(Directory::open(dir / "plain"), Error,
                        error_is(ENOTDIR, {dir / "plain", "Not a directory"}));
}

BOOST_AUTO_TEST_CASE(create_below_a_regular_file_throws_enotdir_naming_the_component) {
  write_bytes(dir / "plain", 0, 1, 'p');
  BOOST_CHECK_EXCEPTION(Directory::open(dir / "plain/sub", true), Error,
                        error_is(ENOTDIR, {"could not create directory \"" + dir / "plain/sub" +
                                           "\": Not a directory"}));
}

BOOST_AUTO_TEST_CASE(directory_fsync_failure_names_the_directory) {
  Directory d = Directory::open(dir.path());
  failpoint::arm("dir_fsync", {failpoint::Kind::kErrno, EIO, 0, 1, 1});
  io_trace::start();
  BOOST_CHECK_EXCEPTION(d.fsync(), Error,
                        error_is(EIO, {"could not fsync directory \"" + dir.path() +
                                       "\": Input/output error"}));
  auto ev = io_trace::stop();
  BOOST_REQUIRE(ev.size() == 1u);
  BOOST_TEST(ev[0].op == "dir_fsync");
  BOOST_TEST(ev[0].path == dir.path());
  BOOST_TEST(ev[0].result_errno == EIO);
}

BOOST_AUTO_TEST_SUITE_END()
