#include "output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "postgresql_dirs.h"
#include "walseg/own_files.h"
#include "walseg/dir_scan.h"
#include "walseg/error.h"
#include "walseg/open_regular.h"
#include "walseg/wal_control.h"

namespace walseg::tool {
namespace {

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

int open_retrying(int dirfd, const char* name, int flags, mode_t mode) {
  int fd;
  do {
    fd = ::openat(dirfd, name, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

}  // namespace

OutputFile OutputFile::open(const std::string& option, const std::string& path, const std::string& wal_dir,
                            int flags, const ExistingCheck& existing) {
  namespace fs = std::filesystem;
  auto refuse = [&](const std::string& why) {
    return std::invalid_argument(fmt::format("{} \"{}\" {}", option, path, why));
  };
  // Not normalized: "L/../x" with L a link is what the kernel (and the shell) resolve it to,
  // not "x" (break-it round 10 F8: a lexical ".." named another file than the user's).
  const fs::path abs = fs::absolute(path);
  const std::string name = abs.filename().string();
  if (name.empty() || name == "." || name == "..") throw refuse("names a directory, not a file");
  if (is_walseg_file_name(name))
    throw refuse("has one of walseg's names, which any WAL directory may use: give another name");
  OutputFile out;
  out.name_ = name;
  const std::string parent = abs.parent_path().string();
  // The directory is opened once and the file found through it: a directory renamed or a link
  // re-pointed later cannot move the file into a WAL directory.
  const int dfd = open_retrying(AT_FDCWD, parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (dfd < 0) {
    if (errno == ENOENT) throw refuse(fmt::format("is in a directory that does not exist (\"{}\")", parent));
    throw std::runtime_error(
        fmt::format("could not open directory \"{}\" for {}: {}", parent, option, errno_text(errno)));
  }
  out.dir_ = OwnedFd(dfd, parent);
  struct stat st{};
  if (::fstatat(dfd, kControlFileName, &st, AT_SYMLINK_NOFOLLOW) == 0)
    throw refuse("is in a WAL directory (it holds walseg.control): put it elsewhere");
  // PostgreSQL's too (break-it round 16 L3: an ack log named X.ready in archive_status).
  if (const auto pg = postgresql_directory_of(parent))
    throw std::invalid_argument(describe(option, path, PostgresqlDirectory{pg->kind, pg->path, true, pg->sign}) +
                                ", whose files are PostgreSQL's to read: put it elsewhere");
  out.refuse_in(wal_dir);
  // Exclusively first, so that a file this run made is known (remove_if_unwritten).
  int fd = open_retrying(dfd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, 0644);
  out.created_ = fd >= 0;
  if (fd < 0 && errno == EEXIST) {
    // An existing name is opened only once it is known to be a regular file (break-it round 18:
    // a device node was opened O_RDWR, its driver's open run, before "is not a regular file").
    const RegularOpen r = open_if_regular(dfd, name.c_str(), O_RDWR | flags);
    if (r.not_regular && S_ISLNK(r.st.st_mode)) throw refuse("is a symbolic link: give the path of the file itself");
    if (r.not_regular) throw refuse("is not a regular file");
    fd = r.fd;
    errno = r.err;
  }
  if (fd < 0) {
    if (errno == ELOOP) throw refuse("is a symbolic link: give the path of the file itself");
    throw std::runtime_error(fmt::format("could not open file \"{}\" for {}: {}", path, option, errno_text(errno)));
  }
  out.file_ = OwnedFd(fd, path);
  if (::fstat(fd, &out.opened_) != 0)
    throw std::runtime_error(fmt::format("could not stat file \"{}\": {}", path, errno_text(errno)));
  // A file this run made stays its user's to read and write whatever the umask: under 0277
  // the ack log came out 0400, and the next run refused to append to it (break-it round 25 L).
  if (out.created_ && (out.opened_.st_mode & 0600) != 0600) {
    if (::fchmod(fd, (out.opened_.st_mode & 07777) | 0600) != 0)
      throw std::runtime_error(fmt::format("could not chmod file \"{}\": {}", path, errno_text(errno)));
    out.opened_.st_mode |= 0600;
  }
  if (!S_ISREG(out.opened_.st_mode)) throw refuse("is not a regular file");
  if (out.opened_.st_nlink == 0) throw refuse("was removed or replaced as it was opened: try again");
  // A second link may be a WAL's file under another name (a hard link of a segment).
  if (out.opened_.st_nlink != 1)
    throw refuse(fmt::format("has {} hard links: walseg writes only a file with no other name",
                             static_cast<unsigned long long>(out.opened_.st_nlink)));
  // An existing file is written only when it is the running user's own and its owner may
  // write it: root wrote into another user's read-only file (break-it round 26 H3), as
  // segments of another user's or read-only ones are not (own_files.h).
  if (!out.created_)
    if (auto why = not_walsegs_to_change(out.opened_))
      throw refuse(fmt::format("is not yours to write: {}", *why));
  if (out.opened_.st_size > 0) {
    if (auto why = existing(fd, out.opened_.st_size)) throw refuse(*why);
  }
  return out;
}

void OutputFile::refuse_in(const std::string& wal_dir) const {
  struct stat here{}, wal{};
  if (!wal_dir.empty() && ::fstat(dir_.fd(), &here) == 0 && ::stat(wal_dir.c_str(), &wal) == 0 && same_file(here, wal))
    throw std::invalid_argument(fmt::format("\"{}\" is in the WAL directory \"{}\", where every name may be one of "
                                            "walseg's: put it elsewhere",
                                            file_.path().empty() ? dir_.path() + "/" + name_ : file_.path(),
                                            wal_dir));
}

void OutputFile::remove_if_unwritten() noexcept {
  struct stat now{}, named{};
  if (!created_ || ::fstat(file_.fd(), &now) != 0 || now.st_size != 0 || now.st_nlink != 1 ||
      ::fstatat(dir_.fd(), name_.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0 || !same_file(now, named))
    return;
  (void)::unlinkat(dir_.fd(), name_.c_str(), 0);
}

void OutputFile::replace_content(const std::string& text) {
  struct stat now{}, named{};
  const bool still = ::fstat(file_.fd(), &now) == 0 && now.st_nlink == 1 &&
                     ::fstatat(dir_.fd(), name_.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 && same_file(now, named);
  if (!still)
    throw std::runtime_error(fmt::format("file \"{}\" was replaced, removed or linked elsewhere during the run: "
                                         "nothing was written to what its name is now",
                                         path()));
  // What was checked at the open is what is replaced: text written into it since (break-it
  // round 10 F4: notes appended during the run were truncated away) is someone's.
  if (now.st_size != opened_.st_size || now.st_mtim.tv_sec != opened_.st_mtim.tv_sec ||
      now.st_mtim.tv_nsec != opened_.st_mtim.tv_nsec)
    throw std::runtime_error(fmt::format("file \"{}\" was written to during the run (it is {} bytes, {} when "
                                         "bench opened it): walseg will not overwrite it; nothing was written",
                                         path(), static_cast<long long>(now.st_size),
                                         static_cast<long long>(opened_.st_size)));
  if (::ftruncate(file_.fd(), 0) != 0)
    throw std::runtime_error(fmt::format("could not truncate file \"{}\": {}", path(), errno_text(errno)));
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::pwrite(file_.fd(), text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(fmt::format("could not write file \"{}\": {}", path(), errno_text(n < 0 ? errno : ENOSPC)));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace walseg::tool
