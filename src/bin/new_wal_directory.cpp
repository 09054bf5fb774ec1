// A new WAL only in a new or empty directory (new_wal_directory.h).
#include "new_wal_directory.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "walseg/dir_scan.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/own_files.h"
#include "walseg/wal_control.h"

namespace walseg::tool {

namespace {

// The entries of `d` (named `dir` in messages) that are not walseg's to judge; refused when any.
void refuse_other_files(const Directory& d, const std::string& dir) {
  std::vector<std::string> others;
  try {
    // A filesystem's lost+found is a directory, whose files walseg never touches; a file under
    // that name is someone's data like any other (break-it round 35).
    struct stat lf{};
    const bool lost_found_dir =
        ::fstatat(d.fd(), "lost+found", &lf, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(lf.st_mode);
    // Under a walseg name, only a regular file made as walseg makes its files (mode 0600, this
    // user's) can be an earlier writer's; a 0644 xlogtemp.555 or a directory walseg.auto is
    // someone's, which walseg's opening would leave alone beside the new WAL (break-it round
    // 38 M2).
    auto made_as_walseg_makes_files = [&](const std::string& name) {
      struct stat est{};
      return ::fstatat(d.fd(), name.c_str(), &est, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(est.st_mode) &&
             !not_made_as_walseg_makes_files(est);
    };
    for (const auto& e : d.list())
      if (!(is_walseg_file_name(e.name) && made_as_walseg_makes_files(e.name)) &&
          !(e.name == "lost+found" && lost_found_dir))
        others.push_back(e.name);
  } catch (const Error&) {
    return;  // unreadable: the opening says what is wrong
  }
  if (others.empty()) return;
  std::string named;
  for (std::size_t i = 0; i < others.size() && i < 3; ++i) named += fmt::format("{}\"{}\"", i ? ", " : "", others[i]);
  if (others.size() > 3) named += fmt::format(" and {} more", others.size() - 3);
  throw std::invalid_argument(fmt::format(
      "--dir \"{}\" holds no walseg WAL (no {}) but other files ({}): walseg starts a new WAL only in a new or empty "
      "directory, as initdb does, so that a mistyped --dir does not fill one with segments; give a new directory, "
      "such as \"{}/wal\"",
      dir, kControlFileName, named, dir));
}

}  // namespace

void refuse_new_wal_beside_other_files(const std::string& dir) {
  // The directory the kernel reaches: "E/new/.." is E once new is made (break-it round 36: a
  // WAL was started beside a user's files so).
  std::error_code ec;
  const std::filesystem::path reached = std::filesystem::weakly_canonical(std::filesystem::absolute(dir, ec), ec);
  const std::string at = ec ? dir : reached.string();
  // A walseg name is any WAL directory's to use: a WAL under one inside another WAL blocks it
  // (break-it round 36 L: "--dir W/000000010000000000000004" made W's next segment a directory).
  auto refuse_walseg_name = [&] {
    if (!ec && is_walseg_file_name(reached.filename().string()))
      throw std::invalid_argument(fmt::format(
          "--dir \"{}\" has one of walseg's file names (\"{}\"), which any WAL directory may use for a file of "
          "its own: give the new WAL's directory another name",
          dir, reached.filename().string()));
  };
  // Not there yet: made new, nothing to look at (and no open, which failpoints count).
  struct stat st{};
  if (::stat(at.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return refuse_walseg_name();
  try {
    const Directory d = Directory::open(at);
    if (d.exists(kControlFileName)) return;  // a WAL's: its own rules apply
    refuse_walseg_name();
    refuse_other_files(d, dir);
  } catch (const Error&) {
    return;  // missing (made new) or unreadable: the opening says what is wrong
  }
}

void refuse_new_wal_beside_other_files(const Directory& opened, const std::string& dir) {
  if (opened.exists(kControlFileName)) return;
  refuse_other_files(opened, dir);
}

}  // namespace walseg::tool
