// walseg bench's scratch directory (bench_scratch.h).
#include "bench_scratch.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

bool is_walseg_file_name(const std::string& name) {
  // The smallest segment size accepts the names of every size (its YYYYYYYY range is the
  // widest), and bench uses several sizes in one run.
  if (parse_segment_file_name(name, kMinSegmentSizeBytes)) return true;
  if (auto t = parse_temp_file_name(name)) return t->pid == static_cast<std::uint32_t>(::getpid());
  return is_walseg_bookkeeping_file(name) || name == kControlTempFileName;
}

Scratch Scratch::create(const std::string& parent) {
  Directory::open(parent, true);
  // mkdtemp, not a name of our own such as the pid: a directory left by an interrupted run (pids
  // are reused) or made by anyone else is never taken, so nothing in it can be removed.
  std::string path = parent + "/walseg-bench-XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) throw dir_error(errno, "create", path);
  Scratch s(path);
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

// Removes bench's files in one of its directories, then the directory if nothing is left.
void Scratch::remove_dir(std::string rel) {
  const std::string path = path_of(rel);
  auto forget = [&] { dirs_.erase(std::find(dirs_.begin(), dirs_.end(), rel)); };
  if (!is_real_dir(path)) {
    forget();  // gone, or replaced by something bench did not make
    return;
  }
  Directory dir = Directory::open(path);
  for (const auto& e : dir.list())
    if (e.is_regular && is_walseg_file_name(e.name)) dir.unlink(e.name, true);
  if (::rmdir(path.c_str()) == 0 || errno == ENOENT) {
    forget();
    return;
  }
  if (errno != ENOTEMPTY && errno != EEXIST) throw dir_error(errno, "remove", path);
}

std::vector<std::string> Scratch::left() const {
  std::vector<std::string> out;
  for (const std::string& d : dirs_) {
    if (!is_real_dir(path_of(d))) continue;
    for (const auto& e : Directory::open(path_of(d)).list()) {
      const std::string rel = d.empty() ? e.name : d + "/" + e.name;
      if (std::find(dirs_.begin(), dirs_.end(), rel) == dirs_.end()) out.push_back(rel);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace walseg::tool
