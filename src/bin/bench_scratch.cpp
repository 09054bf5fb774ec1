// walseg bench's scratch directory (bench_scratch.h).
#include "bench_scratch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <cerrno>

#include <fmt/format.h>

#include "walseg/auto_method.h"
#include "walseg/dir_lock.h"
#include "walseg/dir_scan.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/segment_name.h"
#include "walseg/wal_control.h"

namespace walseg::tool {
namespace {

// Whether `path` is a directory itself, not a symlink to one: bench never follows a link a
// user may have put in place of one of its directories.
bool is_real_dir(const std::string& path) {
  struct stat st{};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool under(const std::string& rel, const std::string& top) {
  return top.empty() || rel == top || rel.rfind(top + "/", 0) == 0;
}

}  // namespace

bool is_bench_file_name(const std::string& name) {
  // Temporary files only of this process: bench made everything in its directories itself.
  if (auto t = parse_temp_file_name(name)) return t->pid == static_cast<std::uint32_t>(::getpid());
  return is_walseg_file_name(name);
}

Scratch Scratch::create(const std::string& parent) {
  Directory::open(parent, true);
  // mkdtemp, not a name of our own such as the pid: a directory left by an interrupted run (pids
  // are reused) or made by anyone else is never taken, so nothing in it can be removed.
  std::string path = parent + "/walseg-bench-XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) throw dir_error(errno, "create", path);
  Scratch s(path, Directory::open(path));
  s.dirs_.push_back("");
  return s;
}

std::string Scratch::make_dir(const std::string& rel) {
  std::string prefix;
  for (std::size_t start = 0; start <= rel.size();) {
    const std::size_t slash = std::min(rel.find('/', start), rel.size());
    prefix = rel.substr(0, slash);
    const std::string path = path_of(prefix);
    if (::mkdir(path.c_str(), 0700) == 0) {
      dirs_.push_back(prefix);
    } else if (errno != EEXIST) {
      throw dir_error(errno, "create", path);
    } else if (!is_real_dir(path)) {
      throw make_error(ENOTDIR, "create", path,
                       fmt::format("could not create directory \"{}\": a file that is not a "
                                   "directory is in its place",
                                   path));
    }
    start = slash + 1;
  }
  return path_of(rel);
}

void Scratch::remove(const std::string& rel) {
  // Deepest first: dirs_ is in the order made, and a directory is made after its parent.
  for (std::size_t i = dirs_.size(); i-- > 0;)
    if (under(dirs_[i], rel)) remove_dir(dirs_[i]);
}

std::optional<Directory> Scratch::open_rel(const std::string& rel) const {
  Directory d = Directory::open_child(root_dir_, ".");
  for (std::size_t start = 0; start < rel.size();) {
    const std::size_t slash = std::min(rel.find('/', start), rel.size());
    try {
      d = Directory::open_child(d, rel.substr(start, slash - start));
    } catch (const Error& e) {
      if (e.errnum() == ENOENT || e.errnum() == ELOOP || e.errnum() == ENOTDIR) return std::nullopt;
      throw;
    }
    start = slash + 1;
  }
  return d;
}

// Removes bench's files in one of its directories, then the directory if nothing is left. The
// walk goes through descriptors from the root mkdtemp made: a directory replaced by a link
// (or moved) meanwhile is never entered, so nothing outside the scratch can be removed.
void Scratch::remove_dir(std::string rel) {
  auto forget = [&] { dirs_.erase(std::find(dirs_.begin(), dirs_.end(), rel)); };
  std::optional<Directory> dir = open_rel(rel);
  if (!dir) {
    forget();  // gone, or replaced by something bench did not make
    return;
  }
  for (const auto& e : dir->list())
    if (e.is_regular && is_bench_file_name(e.name)) dir->unlink(e.name, true);
  if (rel.empty()) {
    // The root: removed by name from its parent only while that name is still this directory.
    Directory parent = Directory::open(std::filesystem::path(root_).parent_path().string());
    struct stat mine{}, there{};
    const std::string base = std::filesystem::path(root_).filename().string();
    if (::fstat(root_dir_.fd(), &mine) != 0 || ::fstatat(parent.fd(), base.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0 ||
        mine.st_ino != there.st_ino || mine.st_dev != there.st_dev)
      return;  // moved: left where it is, and left() says what is in it
    if (parent.remove_empty_dir(base)) forget();
    return;
  }
  const std::size_t slash = rel.rfind('/');
  std::optional<Directory> parent = open_rel(slash == std::string::npos ? "" : rel.substr(0, slash));
  if (parent && parent->remove_empty_dir(slash == std::string::npos ? rel : rel.substr(slash + 1))) forget();
}

std::vector<std::string> Scratch::left() const {
  std::vector<std::string> out;
  for (const std::string& d : dirs_) {
    std::optional<Directory> dir = open_rel(d);
    if (!dir) continue;
    for (const auto& e : dir->list()) {
      const std::string rel = d.empty() ? e.name : d + "/" + e.name;
      if (std::find(dirs_.begin(), dirs_.end(), rel) == dirs_.end()) out.push_back(rel);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace walseg::tool
