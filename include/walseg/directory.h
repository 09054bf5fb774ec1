// Directory: an owned directory descriptor for the operations that make file creation durable:
// listing, no-replace rename, checked replace, unlink and directory fsync.
//
// Names passed to methods are entry names inside the directory, never paths. Every call goes
// through failpoints and io_trace like File, and throws walseg::Error naming the full path.
//
// Not for: reading or writing file contents (File).
// Thread-safety: methods may be called concurrently; the kernel serialises the directory.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "walseg/owned_fd.h"

namespace walseg {

class Directory {
 public:
  Directory() = default;  // moves and closing come from OwnedFd

  /// Opens an existing directory (O_DIRECTORY). With create=true a missing directory (and its
  /// missing parents) is created first with mode 0700 (keep_new_directory_0700), and the parent of each one created is
  /// fsynced, so that the new name survives a power cut. *made (when given) says whether this
  /// call made the directory itself (its mkdir succeeded): only then may a refused command
  /// remove it again. Throws Error("create", "open" or "fsync") naming the directory.
  static Directory open(const std::string& path, bool create = false, bool* made = nullptr);

  int fd() const noexcept { return fd_.fd(); }
  const std::string& path() const noexcept { return fd_.path(); }
  /// The directory `name` inside `parent`, opened through parent's descriptor and never
  /// through a symbolic link (O_NOFOLLOW): what a cleanup may walk into. Throws Error("open")
  /// (ELOOP for a link, ENOTDIR for anything that is not a directory).
  static Directory open_child(const Directory& parent, const std::string& name);

  /// A second descriptor of this same directory (fcntl F_DUPFD_CLOEXEC), for a reader that
  /// must read the directory a writer locked even if its path now names another one. Throws
  /// Error("open").
  Directory duplicate() const;

  /// path() + "/" + name.
  std::string path_of(const std::string& name) const;

  /// unlinkat(AT_REMOVEDIR): removes the empty directory `name` inside this one. Returns false
  /// (and removes nothing) when it is not empty. Throws Error("remove") otherwise.
  bool remove_empty_dir(const std::string& name);

  /// fsync(2) on the directory, so that renames, creations and unlinks in it are durable.
  /// Throws Error("fsync") naming the directory.
  void fsync();

  /// Renames `from` to `to` inside this directory and never replaces an existing `to`:
  /// renameat2(RENAME_NOREPLACE), or link+unlink where the filesystem refuses the flag (as
  /// PostgreSQL's durable_rename_excl did). Throws Error with errno EEXIST when `to` exists.
  /// Not durable by itself: fsync() the directory afterwards.
  void rename_noreplace(const std::string& from, const std::string& to);


  /// renameat2(RENAME_EXCHANGE): atomically swaps the files named `a` and `b`, both of which
  /// must exist. Not durable by itself. Throws Error("rename"): ENOENT when either is missing,
  /// EINVAL where the filesystem cannot exchange (some network and FUSE ones).
  void exchange(const std::string& a, const std::string& b);

  /// Why the file now under `name` must not be replaced, or nullopt if it may be.
  using ReplaceCheck = std::function<std::optional<std::string>(const std::string& name)>;
  struct ReplaceResult {
    bool replaced = false;         ///< `from` is now under `to`
    bool source_replaced = false;  ///< not replaced: `from` no longer named the file walseg wrote
    std::string why;               ///< not replaced otherwise: what `replaceable` said of `to`
    /// replaced, but what came out of `to` was not the file checked (one was moved onto `to`
    /// after the check, or onto `from` after the exchange): it is left under `from`, not removed.
    bool left_at_from = false;
  };
  /// Puts the file `from` (which must still be `mine`, by device and inode) in the place of
  /// `to` only while `to` holds a file `replaceable` accepts, and never destroys another file:
  /// the two are exchanged (RENAME_EXCHANGE); what went in must then be `mine`, else the
  /// exchange is undone (a file moved onto `from` before it went in instead); what came out,
  /// now under `from`, is removed only if it is the very file checked, else left there. So a
  /// file moved onto either name is left under a name, never replaced, except in the
  /// microsecond between the last identity check and an unlink, which POSIX cannot close (no
  /// unlink by inode). A missing `to` is filled by rename_noreplace. Where the filesystem cannot
  /// exchange (EINVAL) it checks, then renameat(2)s: a microsecond window remains there between
  /// the check and the rename. Not durable by itself: fsync() the directory. Throws
  /// Error("rename" or "stat").
  ReplaceResult replace_checked(const std::string& from, const struct stat& mine, const std::string& to,
                                const ReplaceCheck& replaceable);

  /// unlinkat(2). With missing_ok, ENOENT is not an error. Returns true if a file was removed.
  bool unlink(const std::string& name, bool missing_ok = false);

  /// True if an entry named `name` exists (lstat, so symlinks count as entries).
  bool exists(const std::string& name) const;
  /// True if `name` is the file `f` now (fstatat without following links: same device and
  /// inode). False when the name is gone or names another file. Throws Error("stat") for
  /// other failures.
  bool names_file(const std::string& name, const struct stat& f) const;

  struct Entry {
    std::string name;
    bool is_regular;  ///< regular file (symlinks and others are false)
  };
  /// Every entry except "." and "..", sorted by name.
  std::vector<Entry> list() const;

 private:
  static Directory open_making(const std::string& path, bool* made);
  // The "open" failpoint, then opener() (a descriptor, or -1 with errno set), as every open.
  static Directory open_with(const std::string& path, const std::function<int()>& opener);
  /// renameat(2): atomically puts `from` in the place of `to`, replacing a `to` that exists.
  /// Only through replace_checked, where the filesystem cannot exchange; segments are never
  /// replaced (rename_noreplace). Not durable by itself. Throws Error("rename").
  void rename_over(const std::string& from, const std::string& to);
  OwnedFd fd_;
};

/// Gives the directory `name` (relative to the directory open as `at`, or AT_FDCWD for a path)
/// that this process has just made with mkdir(…, 0700) exactly 0700, whatever the umask took
/// from it, as initdb makes pg_wal (break-it round 24 M2: under umask 0277 a WAL directory
/// walseg made came out 0500, and its next step was refused with "Permission denied"). Only a
/// directory owned by this user and never through a symbolic link. Never throws: a failure is
/// left to the open or create that follows, whose error names the path.
void keep_new_directory_0700(int at, const std::string& name) noexcept;

}  // namespace walseg
