// The directory a writing command works in, made when missing (made_directory.h).
#include "made_directory.h"

#include <filesystem>

#include "walseg/error.h"

namespace walseg::tool {

MadeDirectory::MadeDirectory(const std::string& path) : path_(path), dir_(Directory::open(path, true, &made_)) {
  if (made_ && ::fstat(dir_.fd(), &identity_) != 0) made_ = false;  // unknown identity: never removed
}

MadeDirectory::~MadeDirectory() {
  if (!made_) return;
  try {
    std::filesystem::path p = std::filesystem::path(path_).lexically_normal();
    if (p.filename().empty()) p = p.parent_path();  // "d/"
    const std::string name = p.filename().string();
    if (name.empty() || name == "." || name == "..") return;
    Directory parent = Directory::open(p.has_parent_path() ? p.parent_path().string() : ".");
    // By the parent's descriptor and the identity it had when made: a directory put in its
    // place since is someone's.
    if (parent.names_file(name, identity_)) parent.remove_empty_dir(name);
  } catch (const Error&) {
    // Left in place: an empty directory is no harm, and the command's own error says more.
  }
}

}  // namespace walseg::tool
