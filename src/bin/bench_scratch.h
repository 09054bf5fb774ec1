// walseg bench's scratch directory: a directory of its own made by mkdtemp(3) inside --dir,
// the directories the phases work in, and their removal, which removes only what bench made.
//
// What bench made is what it recorded as it made it: each directory made through make_dir,
// by its identity (st_dev, st_ino) taken when it was made, and each file the io layer made
// with O_CREAT | O_EXCL while bench ran (made_files.h), named as walseg names its own files
// (segment names, "xlogtemp.<this process's pid>[.N]", walseg.lock, walseg.auto,
// walseg.control and walseg.control.tmp). The walk to a directory goes through descriptors
// from the one mkdtemp made and checks every step's identity, so a directory that someone
// swapped for another one (a rename into its place, between two steps of the walk or two
// phases) or for a link is never entered, and nothing in it is removed. Anything else (a file
// or directory a user put there, a file under one of walseg's names that bench did not make)
// is left where it is, and so is every directory that still holds something: nothing is ever
// removed recursively; left() says what was left and why.
// XXX: a file swapped in under a name between the check of its identity and the unlink of the
// name would be removed; POSIX has no unlink-if-this-inode.
//
// Not for: WAL directories a user owns (the segment manager's rules apply there).
// Thread-safety: one thread (bench's main thread). Lifetime: nothing is removed by the
// destructor: removal is an explicit step, so --keep and an error's cleanup are visible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "walseg/directory.h"
#include "walseg/segment_install.h"

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
  /// remembered as bench's with their identity. One that exists already is used only if
  /// bench made it; anything else in its place (a directory bench did not make, a link, a
  /// file) makes it throw walseg::Error naming it, as does a failed mkdir. Returns the
  /// directory, opened as open_rel opens it: the caller works in it through that descriptor,
  /// never by its path again (break-it round 10 F1: a link swapped in for a row directory
  /// between the check and a re-open by path had bench retire another WAL's segments).
  Directory make_dir(const std::string& rel);

  /// Removes bench's files from its directories at root()/rel and below (rel "" is all),
  /// then each of those directories that is empty, deepest first. A directory that is not
  /// empty stays remembered, for left(); one that is not the directory bench made is not
  /// entered, and is noted for left(). Throws walseg::Error on any failure other than a
  /// directory left non-empty, swapped or already gone.
  void remove(const std::string& rel);

  /// Whether remove("") removed the scratch directory itself.
  bool removed() const { return find("") == nullptr; }

  /// After remove(""): what was left in or of bench's directories and why, one item each,
  /// as paths relative to root() ("notes.txt (not made by walseg bench)", "commit (...)");
  /// empty when everything bench made is gone.
  std::vector<std::string> left() const;

 private:
  struct Id {
    std::uint64_t dev = 0, ino = 0;
    bool operator==(const Id&) const = default;
  };
  struct MadeDir {
    std::string rel;  ///< relative to root_; "" is the root
    Id id;            ///< when bench made it
  };
  Scratch(std::string root, Directory dir, Id id);
  std::string path_of(const std::string& rel) const {
    return rel.empty() ? root_ : root_ + "/" + rel;
  }
  const MadeDir* find(const std::string& rel) const;
  void forget(const std::string& rel);
  void note(std::string what);
  void remove_dir(const std::string& rel);
  void remove_root();

  /// The directory at rel, reached from the root's descriptor one component at a time, never
  /// through a link, each component checked to be the directory bench made under that name:
  /// nullopt when one is gone (*why left empty) or is not bench's (*why says which and how).
  std::optional<Directory> open_rel(const std::string& rel, std::string* why = nullptr) const;

  std::string root_;
  Directory root_dir_;          ///< the directory mkdtemp made, wherever it is now
  std::vector<MadeDir> dirs_;   ///< directories bench made and has not removed, in order made
  std::vector<std::string> notes_;  ///< what remove() left and why, for left()
};

/// Whether `name` is one of the names walseg gives its own files (dir_scan.h's
/// is_walseg_file_name), temporary names only of this process (see above).
bool is_bench_file_name(const std::string& name);

/// recycle_segment (segment_install.h) of a segment bench made, for its recycle rows: only
/// while `old_name` is that file (made_files), checked right before the rename, and put back
/// if what went under `new_name` was another file moved onto the old name in that microsecond.
/// Break-it round 11 F4: the rename came seconds after the segment was made, and a user's
/// file moved onto its name in between was renamed. Throws walseg::Error (EEXIST, naming the
/// file) when it is not bench's, or as recycle_segment.
InstallTimes recycle_own(Directory& dir, const std::string& old_name, const std::string& new_name);

}  // namespace walseg::tool
