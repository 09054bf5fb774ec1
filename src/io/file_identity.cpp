// FileIdentity (include/walseg/file_identity.h).
#include "walseg/file_identity.h"

namespace walseg {

FileIdentity identity_of_fd(int fd) noexcept {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return {};
  return FileIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                      made_files::mark_of_fd(fd)};
}

FileIdentity identity_of(int dirfd, const char* name, const struct stat& st) noexcept {
  return FileIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                      made_files::mark_of(dirfd, name)};
}

bool same_identity(const FileIdentity& was, const FileIdentity& now) noexcept {
  if (!was.known() || !now.known() || was.dev != now.dev || was.ino != now.ino) return false;
  const bool marked = was.mark.born_ns >= 0 || was.mark.generation >= 0 || now.mark.born_ns >= 0 ||
                      now.mark.generation >= 0;
  return !marked || made_files::same_file(was.mark, now.mark);
}

}  // namespace walseg
