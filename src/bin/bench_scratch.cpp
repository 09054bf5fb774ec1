// walseg bench's scratch directory (bench_scratch.h).
#include "bench_scratch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

#include "walseg/dir_scan.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/made_files.h"

namespace walseg::tool {
namespace {

bool under(const std::string& rel, const std::string& top) {
  return top.empty() || rel == top || rel.rfind(top + "/", 0) == 0;
}

std::string parent_of(const std::string& rel) {
  const std::size_t slash = rel.rfind('/');
  return slash == std::string::npos ? "" : rel.substr(0, slash);
}

std::string base_of(const std::string& rel) {
  const std::size_t slash = rel.rfind('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

}  // namespace

bool is_bench_file_name(const std::string& name) {
  // Temporary files only of this process: bench made everything in its directories itself.
  if (auto t = parse_temp_file_name(name)) return t->pid == static_cast<std::uint32_t>(::getpid());
  return is_walseg_file_name(name);
}

Scratch::Scratch(std::string root, Directory dir, Id id) : root_(std::move(root)), root_dir_(std::move(dir)) {
  dirs_.push_back(MadeDir{"", id});
}

Scratch Scratch::create(const std::string& parent) {
  Directory::open(parent, true);
  // Every file the io layer makes from here on is known by identity, so that only those are
  // removed (made_files.h); a name alone says nothing about who made a file.
  made_files::start();
  // mkdtemp, not a name of our own such as the pid: a directory left by an interrupted run (pids
  // are reused) or made by anyone else is never taken, so nothing in it can be removed.
  std::string path = parent + "/walseg-bench-XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) throw dir_error(errno, "create", path);
  keep_new_directory_0700(AT_FDCWD, path);
  Directory d = Directory::open(path);
  struct stat st{};
  if (::fstat(d.fd(), &st) != 0) throw dir_error(errno, "open", path);
  return Scratch(path, std::move(d), Id{st.st_dev, st.st_ino});
}

const Scratch::MadeDir* Scratch::find(const std::string& rel) const {
  for (const MadeDir& d : dirs_)
    if (d.rel == rel) return &d;
  return nullptr;
}

void Scratch::forget(const std::string& rel) {
  dirs_.erase(std::remove_if(dirs_.begin(), dirs_.end(), [&](const MadeDir& d) { return d.rel == rel; }),
              dirs_.end());
}

void Scratch::note(std::string what) {
  if (std::find(notes_.begin(), notes_.end(), what) == notes_.end()) notes_.push_back(std::move(what));
}

// Each component is made by mkdirat through its verified parent and recorded with the identity
// fstatat gives right after; one that exists must be the directory bench recorded.
Directory Scratch::make_dir(const std::string& rel) {
  for (std::size_t start = 0; start <= rel.size();) {
    const std::size_t slash = std::min(rel.find('/', start), rel.size());
    const std::string prefix = rel.substr(0, slash);
    const std::string path = path_of(prefix);
    start = slash + 1;
    std::string why;
    std::optional<Directory> parent = open_rel(parent_of(prefix), &why);
    if (!parent)
      throw make_error(ENOTDIR, "create", path,
                       fmt::format("could not create directory \"{}\": {}", path,
                                   why.empty() ? "its parent is gone" : why));
    const std::string name = base_of(prefix);
    const bool made = ::mkdirat(parent->fd(), name.c_str(), 0700) == 0;
    if (!made && errno != EEXIST) throw dir_error(errno, "create", path);
    if (made) keep_new_directory_0700(parent->fd(), name);
    struct stat st{};
    if (::fstatat(parent->fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) throw dir_error(errno, "open", path);
    const Id id{st.st_dev, st.st_ino};
    if (made && S_ISDIR(st.st_mode)) {
      dirs_.push_back(MadeDir{prefix, id});
      continue;
    }
    if (const MadeDir* d = find(prefix); d && d->id == id && S_ISDIR(st.st_mode)) continue;
    throw make_error(ENOTDIR, "create", path,
                     fmt::format("could not create directory \"{}\": {} is in its place", path,
                                 S_ISDIR(st.st_mode) ? "a directory walseg bench did not make"
                                                     : "something that is not a directory"));
  }
  std::string why;
  std::optional<Directory> d = open_rel(rel, &why);
  if (!d)
    throw make_error(ENOTDIR, "open", path_of(rel),
                     fmt::format("could not open directory \"{}\": {}", path_of(rel),
                                 why.empty() ? "it is gone" : why));
  return std::move(*d);
}

void Scratch::remove(const std::string& rel) {
  // Deepest first: dirs_ is in the order made, and a directory is made after its parent.
  std::vector<std::string> todo;
  for (const MadeDir& d : dirs_)
    if (under(d.rel, rel)) todo.push_back(d.rel);
  for (std::size_t i = todo.size(); i-- > 0;) {
    if (todo[i].empty()) remove_root();
    else remove_dir(todo[i]);
  }
}

std::optional<Directory> Scratch::open_rel(const std::string& rel, std::string* why) const {
  Directory d = root_dir_.duplicate();
  for (std::size_t start = 0; start < rel.size();) {
    const std::size_t slash = std::min(rel.find('/', start), rel.size());
    const std::string prefix = rel.substr(0, slash);
    try {
      d = Directory::open_child(d, rel.substr(start, slash - start));
    } catch (const Error& e) {
      if (e.errnum() == ENOENT) return std::nullopt;  // gone: nothing of it to remove
      if (e.errnum() != ELOOP && e.errnum() != ENOTDIR) throw;
      if (why) *why = fmt::format("\"{}\" is not a directory walseg bench made (a link or a file is in its place)", path_of(prefix));
      return std::nullopt;
    }
    struct stat st{};
    if (::fstat(d.fd(), &st) != 0) throw dir_error(errno, "open", path_of(prefix));
    const MadeDir* made = find(prefix);
    if (!made || !(made->id == Id{st.st_dev, st.st_ino})) {
      if (why)
        *why = fmt::format("\"{}\" is not the directory walseg bench made there{}", path_of(prefix),
                           made ? " (another directory was put in its place)" : "");
      return std::nullopt;
    }
    start = slash + 1;
  }
  return d;
}

// Removes bench's files in one of its directories, then the directory if nothing is left. A
// file is bench's when the io layer made it in this run (its identity) and its name is one of
// walseg's; a directory is entered only through the chain of directories bench made.
void Scratch::remove_dir(const std::string& rel) {
  std::string why;
  std::optional<Directory> dir = open_rel(rel, &why);
  if (!dir) {
    if (!why.empty()) note(why + ": left as it is, not entered");
    forget(rel);  // gone, or not bench's any more: left() must not walk into it
    return;
  }
  for (const auto& e : dir->list()) {
    struct stat st{};
    if (!e.is_regular || !is_bench_file_name(e.name) ||
        ::fstatat(dir->fd(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        !made_files::made(dir->fd(), e.name, st))
      continue;
    dir->unlink(e.name, true);
  }
  std::optional<Directory> parent = open_rel(parent_of(rel));
  if (parent && parent->remove_empty_dir(base_of(rel))) forget(rel);
}

// The root: its files as any directory's, then the directory itself, by name from its parent,
// only while that name is still the directory mkdtemp made.
void Scratch::remove_root() {
  for (const auto& e : root_dir_.list()) {
    struct stat st{};
    if (!e.is_regular || !is_bench_file_name(e.name) ||
        ::fstatat(root_dir_.fd(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        !made_files::made(root_dir_.fd(), e.name, st))
      continue;
    root_dir_.unlink(e.name, true);
  }
  Directory parent = Directory::open(std::filesystem::path(root_).parent_path().string());
  struct stat there{};
  const std::string base = std::filesystem::path(root_).filename().string();
  if (::fstatat(parent.fd(), base.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0 ||
      !(find("")->id == Id{there.st_dev, there.st_ino})) {
    note(fmt::format("the scratch directory is no longer at \"{}\" (moved away{}); left wherever it is now", root_,
                     ::access(root_.c_str(), F_OK) == 0 ? ", and something else put there" : ""));
    return;
  }
  if (parent.remove_empty_dir(base)) forget("");
}

std::vector<std::string> Scratch::left() const {
  std::vector<std::string> out;
  for (const MadeDir& d : dirs_) {
    std::optional<Directory> dir = open_rel(d.rel);
    if (!dir) continue;
    for (const auto& e : dir->list()) {
      const std::string rel = d.rel.empty() ? e.name : d.rel + "/" + e.name;
      if (!find(rel)) out.push_back(rel);
    }
  }
  std::sort(out.begin(), out.end());
  out.insert(out.end(), notes_.begin(), notes_.end());
  return out;
}

InstallTimes recycle_own(Directory& dir, const std::string& old_name, const std::string& new_name) {
  struct stat st{};
  if (::fstatat(dir.fd(), old_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) throw file_error(errno, "stat", dir.path_of(old_name));
  auto not_ours = [&](const std::string& name, const std::string& what) {
    return make_error(EEXIST, "rename", dir.path_of(name),
                      fmt::format("\"{}\" is not the segment walseg bench made there: another file was moved onto "
                                  "its name; {}",
                                  dir.path_of(name), what));
  };
  if (!S_ISREG(st.st_mode) || !made_files::made(dir.fd(), old_name, st))
    throw not_ours(old_name, "it is left as it is");
  InstallTimes t = recycle_segment(dir, old_name, new_name);
  // A file moved onto the old name between the check and the rename went in instead, or
  // bench's went in and was replaced at once: no name tells which, so nothing more is renamed
  // (as PreparedSegment::install, break-it round 13 F4).
  if (!dir.names_file(new_name, st))
    throw not_ours(new_name, fmt::format("right after bench renamed \"{}\" to it, another file or none was there; "
                                         "it is left as it is",
                                         dir.path_of(old_name)));
  return t;
}

}  // namespace walseg::tool
