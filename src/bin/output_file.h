// A file the tool writes for the user (`bench --json`, `write --ack-log`), opened once and
// kept: never one of a WAL's files, whatever happens to its name during the run.
//
// Both were opened by name, checked, and then opened or reopened by name again, so a symbolic
// link or a rename between the two put the tool's output into a segment or walseg.control
// (break-it round 9: a segment truncated into JSON, 500 acknowledged records lost; an ack log
// appended to another WAL's control file). Now the file is opened once through its directory
// with O_NOFOLLOW, every check is made on what was opened, and writes go to that descriptor.
// Thread-safety: none; one owner.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <optional>
#include <string>

#include "walseg/owned_fd.h"

namespace walseg::tool {

class OutputFile {
 public:
  /// Why an existing, non-empty file may not be written by this option (nullopt: it may):
  /// given the open descriptor and its size in bytes.
  using ExistingCheck = std::function<std::optional<std::string>(int fd, off_t size)>;

  /// Opens `path` for `option` (named in messages), creating it (mode 0644) if missing, and
  /// refuses (std::invalid_argument: a usage error, nothing written) when
  ///   - its directory is missing, holds walseg.control, or is `wal_dir` by device and inode;
  ///   - its name is one of walseg's (a segment, walseg.*);
  ///   - it is a symbolic link, not a regular file, or has another hard link;
  ///   - it exists, is not empty, and `existing` says why not.
  /// flags: O_APPEND or 0, added to O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC.
  /// Throws std::runtime_error naming the path, the operation and errno's text when the open
  /// itself fails.
  static OutputFile open(const std::string& option, const std::string& path, const std::string& wal_dir,
                         int flags, const ExistingCheck& existing);

  int fd() const noexcept { return file_.fd(); }
  const std::string& path() const noexcept { return file_.path(); }

  /// Refuses (std::runtime_error) when the directory opened is now `wal_dir` (by device and
  /// inode): the check for a WAL directory made after the file was opened.
  void refuse_in(const std::string& wal_dir) const;

  /// Replaces the whole content with `text` (ftruncate, then writes from offset 0), only while
  /// the path still names this very file with no other link and its size and mtime are still
  /// those it had when opened; else std::runtime_error saying what changed during the run and
  /// that nothing was written.
  void replace_content(const std::string& text);

  /// Removes the file when this open made it and it is still empty and under its name, with
  /// no other link: what a run that ends before writing it (a signal, an error) made (the
  /// new-user trial: an interrupted bench left an empty --json file). Never throws.
  void remove_if_unwritten() noexcept;

 private:
  bool created_ = false;
  OwnedFd dir_;
  OwnedFd file_;
  std::string name_;
  struct stat opened_{};
};

}  // namespace walseg::tool
