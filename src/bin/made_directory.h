// The directory a writing command (write, create) works in, made when missing. A command that
// is refused after making it leaves no empty directory behind (the new-user trial: `create
// --dir new --start 0` was refused and left "new"), and removes nothing it did not make.
#pragma once

#include <string>
#include <sys/stat.h>

#include "walseg/directory.h"

namespace walseg::tool {

class MadeDirectory {
 public:
  /// Directory::open(path, true): made, with its missing parents, when missing. Throws what
  /// that throws.
  explicit MadeDirectory(const std::string& path);
  /// Unless kept: the directory this object made, if it is still that directory (device and
  /// inode) and empty, is removed again; the parents it made stay (a user may have made
  /// something in them since). Never throws.
  ~MadeDirectory();
  MadeDirectory(const MadeDirectory&) = delete;
  MadeDirectory& operator=(const MadeDirectory&) = delete;

  /// A descriptor of the directory, for Wal::open or SegmentManager. Throws Error("open").
  Directory open() const { return dir_.duplicate(); }
  /// The directory as opened, for checks of what it holds (new_wal_directory.h).
  const Directory& directory() const noexcept { return dir_; }
  /// The command got as far as using it: it stays, empty or not.
  void keep() noexcept { made_ = false; }

 private:
  std::string path_;
  bool made_ = false;  // before dir_: its initializer sets it
  Directory dir_;
  struct stat identity_{};
};

}  // namespace walseg::tool
