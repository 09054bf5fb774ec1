// Directory (include/walseg/directory.h): durable-rename building blocks.
#include "walseg/directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <functional>

#include "inject.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/io_record.h"
#include "walseg/made_files.h"

namespace walseg {

using io_detail::done;
using io_detail::inject;
using io_record::Op;

namespace {
// Identity of the entry `name` in the directory fd (0/0 when it cannot be had): taken for the
// mutation record only, so that a renamed or removed name is tied to the file it named.
std::pair<std::uint64_t, std::uint64_t> identity_of(int dir_fd, const std::string& name) {
  struct stat st{};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {0, 0};
  return {st.st_dev, st.st_ino};
}
}  // namespace

Directory Directory::open(const std::string& path, bool create, bool* made) {
  if (made != nullptr) *made = false;
  if (create) return open_making(path, made);
  return open_with(path, [&] { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
}

Directory Directory::open_with(const std::string& path, const std::function<int()>& opener) {
  int err = inject("open");
  int fd = -1;
  if (err == 0) {
    fd = opener();
    if (fd < 0) err = errno;
  }
  done("open", path, err);
  if (err != 0) throw dir_error(err, "open", path);
  Directory d;
  d.fd_ = OwnedFd(fd, path);
  return d;
}

// Each component through the descriptor of the one before it, the path resolved once: a
// symbolic link in the path re-pointed during the run otherwise sent the new-WAL check, the
// mkdir, the chmod and the open to different directories (break-it round 39 H1: a user's
// directory was given mode 0700, or removed by a failed run as the one walseg had made). Each
// missing component with mode 0700, as the header promises (and as PostgreSQL makes pg_wal);
// std::filesystem::create_directories would use 0777 & ~umask. A new directory's name is an
// entry of its parent like any file's: without an fsync of the parent a power cut can take
// the directory, and every acknowledged record in it, away (PostgreSQL's fsync_parent_path
// after a mkdir).
Directory Directory::open_making(const std::string& path, bool* made) {
  const std::filesystem::path whole(path);
  std::filesystem::path partial = whole.is_absolute() ? std::filesystem::path("/") : std::filesystem::path();
  Directory cur;
  const char* start = whole.is_absolute() ? "/" : ".";
  const int start_fd = ::open(start, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (start_fd < 0) throw dir_error(errno, "open", start);
  cur.fd_ = OwnedFd(start_fd, start);
  for (const auto& part : whole.relative_path()) {
    if (part.empty()) continue;  // "d/": the trailing separator names d again
    partial /= part;
    const std::string name = part.string();
    bool made_here = false;
    int fd = ::openat(cur.fd(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && name != "." && name != "..") {
      const int err = ::mkdirat(cur.fd(), name.c_str(), 0700) == 0 ? 0 : errno;
      if (err != EEXIST && io_record::active()) io_record::record_name_op(Op::kMkdir, partial.string(), "", 0, 0, err);
      if (err != 0 && err != EEXIST) throw dir_error(err, "create", partial.string());
      made_here = err == 0;
      if (made_here) done("mkdir", partial.string(), 0);
      // What was just made is opened without following a link: one put in its place is not it.
      fd = ::openat(cur.fd(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (made_here ? O_NOFOLLOW : 0));
    }
    // Below a file: named as the directory that could not be made (the whole path given).
    if (fd < 0 && errno == ENOTDIR) throw dir_error(ENOTDIR, "create", path);
    if (fd < 0) throw dir_error(errno, "open", partial.string());
    Directory next;
    next.fd_ = OwnedFd(fd, partial.string());
    if (made_here) {
      // Under a umask such as 0277 the mkdir's 0700 comes out narrower: set on the descriptor.
      struct stat st{};
      if (::fstat(next.fd(), &st) == 0 && (st.st_mode & 07777) != 0700 && st.st_uid == ::geteuid())
        (void)::fchmod(next.fd(), 0700);
      // The "open" failpoint between the mkdir and the parent's fsync, where the parent was
      // opened by path before: a crash there is what the power-cut tests make.
      if (const int e = inject("open"); e != 0) throw dir_error(e, "open", cur.path());
      cur.fsync();
    }
    if (made != nullptr) *made = made_here;  // the last component's mkdir is what counts
    cur = std::move(next);
  }
  // Named as given, as every message names it; the open's failpoint as for any directory.
  return open_with(path, [&] { return ::fcntl(cur.fd(), F_DUPFD_CLOEXEC, 0); });
}

Directory Directory::open_child(const Directory& parent, const std::string& name) {
  const std::string path = parent.path_of(name);
  int err = inject("open");
  int fd = -1;
  if (err == 0) {
    fd = ::openat(parent.fd(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) err = errno;
  }
  done("open", path, err);
  if (err != 0) throw dir_error(err, "open", path);
  Directory d;
  d.fd_ = OwnedFd(fd, path);
  return d;
}

Directory Directory::duplicate() const {
  int fd = ::fcntl(fd_.fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw dir_error(errno, "open", path());
  Directory d;
  d.fd_ = OwnedFd(fd, path());
  return d;
}

std::string Directory::path_of(const std::string& name) const { return path() + "/" + name; }

bool Directory::remove_empty_dir(const std::string& name) {
  int err = inject("unlink");
  if (err == 0 && ::unlinkat(fd(), name.c_str(), AT_REMOVEDIR) != 0) err = errno;
  done("rmdir", path_of(name), err);
  if (err == ENOTEMPTY || err == EEXIST) return false;
  if (err != 0) throw dir_error(err, "remove", path_of(name));
  return true;
}

void Directory::fsync() {
  const std::uint64_t before = io_record::active() ? io_record::count() : 0;
  int err = inject("dir_fsync");
  if (err == 0 && ::fsync(fd()) != 0) err = errno;
  done("dir_fsync", path(), err);
  if (io_record::active()) io_record::record_name_op(Op::kDirFsync, path(), "", 0, 0, err, before);
  if (err != 0) throw dir_error(err, "fsync", path());
}

void Directory::rename_noreplace(const std::string& from, const std::string& to) {
  int err = inject("rename");
  const bool rec = io_record::active();
  const auto [dev, ino] = rec ? identity_of(fd(), from) : std::pair<std::uint64_t, std::uint64_t>{0, 0};
  bool fell_back = false;
  if (err == 0 &&
      ::syscall(SYS_renameat2, fd(), from.c_str(), fd(), to.c_str(), RENAME_NOREPLACE) != 0) {
    err = errno;
    // Filesystems without RENAME_NOREPLACE (some network and FUSE ones) say EINVAL; link()
    // refuses an existing target just the same, so link then unlink the old name.
    if (err == EINVAL) {
      fell_back = true;
      err = ::linkat(fd(), from.c_str(), fd(), to.c_str(), 0) != 0 ? errno : 0;
      // Two events: unlike a rename, a crash between them can leave both names.
      if (rec) io_record::record_name_op(Op::kLink, path_of(from), path_of(to), dev, ino, err);
      if (err == 0) {
        err = ::unlinkat(fd(), from.c_str(), 0) != 0 ? errno : 0;
        if (rec) io_record::record_name_op(Op::kUnlink, path_of(from), "", dev, ino, err);
      }
    }
  }
  if (rec && !fell_back) io_record::record_name_op(Op::kRename, path_of(from), path_of(to), dev, ino, err);
  done("rename", path_of(to), err);
  if (err != 0)
    throw make_error(err, "rename", path_of(from),
                     "could not rename file \"" + path_of(from) + "\" to \"" + path_of(to) +
                         "\": " + errno_text(err) + attribute_note(err, {path_of(to), path_of(from), path()}));
}

void Directory::rename_over(const std::string& from, const std::string& to) {
  int err = inject("rename");
  const bool rec = io_record::active();
  const auto [dev, ino] = rec ? identity_of(fd(), from) : std::pair<std::uint64_t, std::uint64_t>{0, 0};
  // The file `to` named, if any, is gone once the rename is made.
  const auto replaced = made_files::active() ? identity_of(fd(), to) : std::pair<std::uint64_t, std::uint64_t>{0, 0};
  const made_files::Mark mark = replaced.second != 0 ? made_files::mark_of(fd(), to) : made_files::Mark{};
  if (err == 0 && ::renameat(fd(), from.c_str(), fd(), to.c_str()) != 0) err = errno;
  if (err == 0 && replaced.second != 0) made_files::note_removed(replaced.first, replaced.second, mark);
  if (rec) io_record::record_name_op(Op::kRename, path_of(from), path_of(to), dev, ino, err);
  done("rename", path_of(to), err);
  if (err != 0)
    throw make_error(err, "rename", path_of(from),
                     "could not rename file \"" + path_of(from) + "\" to \"" + path_of(to) +
                         "\": " + errno_text(err) + attribute_note(err, {path_of(to), path_of(from), path()}));
}

void Directory::exchange(const std::string& a, const std::string& b) {
  int err = inject("rename");
  const bool rec = io_record::active();
  const auto [dev, ino] = rec ? identity_of(fd(), a) : std::pair<std::uint64_t, std::uint64_t>{0, 0};
  if (err == 0 && ::syscall(SYS_renameat2, fd(), a.c_str(), fd(), b.c_str(), RENAME_EXCHANGE) != 0) err = errno;
  if (rec) io_record::record_name_op(Op::kExchange, path_of(a), path_of(b), dev, ino, err);
  done("rename", path_of(b), err);
  if (err != 0)
    throw make_error(err, "rename", path_of(a),
                     "could not exchange files \"" + path_of(a) + "\" and \"" + path_of(b) + "\": " + errno_text(err) +
                         attribute_note(err, {path_of(b), path_of(a), path()}));
}

Directory::ReplaceResult Directory::replace_checked(const std::string& from, const struct stat& mine,
                                                    const std::string& to, const ReplaceCheck& replaceable) {
  ReplaceResult r;
  if (!names_file(from, mine)) {
    r.source_replaced = true;
    return r;
  }
  struct stat before{};
  if (::fstatat(fd(), to.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) throw file_error(errno, "stat", path_of(to));
    rename_noreplace(from, to);  // nothing to replace; EEXIST if a file took the name meanwhile
    r.replaced = true;
    return r;
  }
  if (auto why = replaceable(to)) {
    r.why = *why;
    return r;
  }
  // The file checked is the one under the name after the check too: what comes out of the
  // exchange is then removed only if it is that file.
  if (!names_file(to, before)) {
    r.why = "it was replaced while walseg checked it";
    return r;
  }
  try {
    exchange(from, to);
  } catch (const Error& e) {
    if (e.errnum() != EINVAL) throw;
    // XXX: no exchange on this filesystem, so a file moved onto either name between the checks
    // above and this rename is replaced or renamed into place.
    rename_over(from, to);
    r.replaced = true;
    return r;
  }
  failpoint::hit("replace.after_exchange");
  // What went in must be walseg's file. If it is not, a file was moved onto `from` before the
  // exchange (or onto `to` right after it): the second exchange gives each name back.
  if (!names_file(to, mine)) {
    exchange(from, to);
    r.source_replaced = true;
    return r;
  }
  r.replaced = true;
  // What came out is removed only if it is the file checked. Anything else was moved onto
  // `to` after the check or onto `from` after the exchange, and is someone's: undoing the
  // exchange would put it under `to` (break-it round 7 F2), so it stays under `from`. It is
  // replaced already, so a failure to remove it fails nothing.
  try {
    if (names_file(from, before)) unlink(from, true);
    else r.left_at_from = exists(from);
  } catch (const Error&) {
  }
  return r;
}

bool Directory::unlink(const std::string& name, bool missing_ok) {
  int err = inject("unlink");
  const bool rec = io_record::active();
  const bool track = made_files::active();
  const auto [dev, ino] = rec || track ? identity_of(fd(), name) : std::pair<std::uint64_t, std::uint64_t>{0, 0};
  const made_files::Mark mark = track && ino != 0 ? made_files::mark_of(fd(), name) : made_files::Mark{};
  if (err == 0 && ::unlinkat(fd(), name.c_str(), 0) != 0) err = errno;
  if (err == 0 && track) failpoint::hit("unlink.before_forget");
  if (err == 0 && track && ino != 0) made_files::note_removed(dev, ino, mark);
  done("unlink", path_of(name), err);
  if (rec) io_record::record_name_op(Op::kUnlink, path_of(name), "", dev, ino, err);
  if (err == ENOENT && missing_ok) return false;
  if (err != 0) throw file_error(err, "remove", path_of(name));
  return true;
}

bool Directory::exists(const std::string& name) const {
  struct stat st;
  return ::fstatat(fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool Directory::names_file(const std::string& name, const struct stat& f) const {
  struct stat st;
  if (::fstatat(fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return false;
    throw file_error(errno, "stat", path_of(name));
  }
  return st.st_dev == f.st_dev && st.st_ino == f.st_ino;
}

std::vector<Directory::Entry> Directory::list() const {
  int dfd = ::openat(fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) throw dir_error(errno, "open", path());
  DIR* dir = ::fdopendir(dfd);
  if (dir == nullptr) {
    int e = errno;
    ::close(dfd);
    throw dir_error(e, "open", path());
  }
  std::vector<Entry> out;
  errno = 0;
  while (struct dirent* de = ::readdir(dir)) {
    std::string name = de->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    bool regular = ::fstatat(fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    out.push_back(Entry{std::move(name), regular});
    errno = 0;
  }
  int e = errno;
  ::closedir(dir);
  if (e != 0) throw dir_error(e, "read", path());
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return out;
}

void keep_new_directory_0700(int at, const std::string& name) noexcept {
  struct stat st{};
  if (::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
      (st.st_mode & 07777) == 0700 || st.st_uid != ::geteuid())
    return;
  (void)::fchmodat(at, name.c_str(), 0700, AT_SYMLINK_NOFOLLOW);
}

}  // namespace walseg
