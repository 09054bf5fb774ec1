// walseg bench's scratch directory: a directory of its own made by mkdtemp(3) inside --dir,
// the directories the phases work in, and their removal, which removes only what bench made.
//
// What bench made is the directories made through make_dir, and in them the regular files
// named as walseg names its own files: segment names, "xlogtemp.<this process's pid>[.N]",
// walseg.lock, walseg.auto, walseg.control and walseg.control.tmp (the library makes no file
// under another name). Anything else in
// them (a file or directory a user put there meanwhile, a symlink) is left where it is, and so
// is every directory that still holds something: nothing is ever removed recursively.
// XXX: a file a user puts into a bench directory under one of walseg's own names is taken for
// bench's; the names do not tell them apart, and nothing the user had before the run can be
// in a directory mkdtemp has just made.
//
// Not for: WAL directories a user owns (the segment manager's rules apply there).
// Thread-safety: one thread (bench's main thread). Lifetime: nothing is removed by the
// destructor: removal is an explicit step, so --keep and an error's cleanup are visible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "walseg/directory.h"

namespace walseg::tool {

class Scratch {
 public:
  /// Makes `parent` if missing (with its missing parents, mode 0700; left in place
  /// afterwards) and then parent/walseg-bench-XXXXXX by mkdtemp, which never takes a name that
  /// exists. Throws walseg::Error naming the directory.
  static Scratch create(const std::string& parent);

  /// The scratch directory's path: --dir's value + "/walseg-bench-XXXXXX".
  const std::string& root() const { return root_; }

  /// root()/rel, making it and any missing directory on the way (mode 0700); those are
  /// remembered as bench's. One that exists already is used and not remembered. Returns the
  /// path. Throws walseg::Error (mkdir) naming the directory.
  std::string make_dir(const std::string& rel);

  /// Removes bench's files from its directories at root()/rel and below (rel "" is all),
  /// then each of those directories that is empty, deepest first. A directory that is not
  /// empty stays remembered, for left(). Throws walseg::Error on any failure other than a
  /// directory left non-empty or already gone.
  void remove(const std::string& rel);

  /// After remove(""): what is left in bench's directories that bench did not make, as paths
  /// relative to root() ("notes.txt", "commit/x"); empty when root() itself is gone.
  std::vector<std::string> left() const;

 private:
  Scratch(std::string root, Directory dir) : root_(std::move(root)), root_dir_(std::move(dir)) {}
  std::string path_of(const std::string& rel) const {
    return rel.empty() ? root_ : root_ + "/" + rel;
  }
  bool is_ours(const std::string& rel) const;
  void remove_dir(std::string rel);

  /// The directory at rel, reached from the root's descriptor one component at a time and
  /// never through a link: nullopt when a component is gone or is not a real directory.
  std::optional<Directory> open_rel(const std::string& rel) const;

  std::string root_;
  Directory root_dir_;             ///< the directory mkdtemp made, wherever it is now
  std::vector<std::string> dirs_;  ///< directories bench made, relative to root_, in order made
};

/// Whether `name` is one of the names walseg gives its own files (dir_scan.h's
/// is_walseg_file_name), temporary names only of this process (see above).
bool is_bench_file_name(const std::string& name);

}  // namespace walseg::tool
