// How walseg makes its files and tells them from someone's (include/walseg/own_files.h).
#include "walseg/own_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "walseg/error.h"
#include "walseg/file.h"

namespace walseg {

void set_own_file_mode(File& f) {
  // Only when the umask took bits: most runs make no extra syscall.
  if ((f.stat().st_mode & 07777) == kOwnFileMode) return;
  if (::fchmod(f.fd(), kOwnFileMode) != 0) throw file_error(errno, "change permissions of", f.path());
}

std::optional<std::string> not_made_as_walseg_makes_files(const struct stat& st) {
  // Exactly, not "no bits beyond 0600": a user's 0400 file of zeros passed that (round 22).
  const unsigned mode = st.st_mode & 07777;
  if (mode != kOwnFileMode) return fmt::format("with mode {:04o}: walseg makes its files {:04o}", mode, kOwnFileMode);
  if (st.st_uid != ::geteuid())
    return fmt::format("owned by user ID {}, not {}, the user walseg runs as", st.st_uid, ::geteuid());
  return std::nullopt;
}

std::optional<std::string> not_walsegs_to_change(const struct stat& st) {
  if (st.st_uid != ::geteuid())
    return fmt::format("it is owned by user ID {}, not {}, the user walseg runs as, and walseg writes only into "
                       "its own files",
                       st.st_uid, ::geteuid());
  // Root may write whatever the mode says: a file its owner made read-only is kept so on purpose.
  if ((st.st_mode & S_IWUSR) == 0)
    return fmt::format("it is read-only (mode {:04o}), and walseg writes only into files it made, which their "
                       "owner may read and write",
                       st.st_mode & 07777);
  if ((st.st_mode & S_IRUSR) == 0)
    return fmt::format("its owner may not read it (mode {:04o}), and walseg writes only into files it made, which "
                       "their owner may read and write",
                       st.st_mode & 07777);
  return std::nullopt;
}

std::string how_to_give_back(const struct stat& st) {
  // Read as well as write: a 0000 file made 0200 by "chmod u+w" still could not be read
  // (break-it round 26 H1).
  if (st.st_uid != ::geteuid())
    return fmt::format("run walseg as the user that owns it (user ID {}), or give it back to user ID {} with chown "
                       "and chmod u+rw",
                       st.st_uid, ::geteuid());
  return "make it readable and writable by its owner again (chmod u+rw)";
}

}  // namespace walseg
