// Construction and wording of walseg::Error (include/walseg/error.h).
#include "walseg/error.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace walseg {

Error::Error(int errnum, std::string op, std::string path, std::string message,
             std::optional<std::uint64_t> offset)
    : std::system_error(errnum, std::generic_category()),
      message_(std::move(message)),
      op_(std::move(op)),
      path_(std::move(path)),
      offset_(offset) {}

std::string errno_text(int errnum) {
  char buf[256];
  // GNU strerror_r returns a pointer that may or may not be buf.
  return std::string(strerror_r(errnum, buf, sizeof buf));
}

namespace {

// EPERM where the mode allows it: an inode attribute (chattr +i or +a) refuses it even to root,
// and "Operation not permitted" alone sent users looking at owners and modes (break-it round
// 37 F6). statx reads the attributes without opening the file. Empty when neither is set.
std::string attribute_hint(std::string_view path) {
  if (path.empty()) return {};
  struct statx sx{};
  const int saved = errno;
  const bool got = ::statx(AT_FDCWD, std::string(path).c_str(), AT_SYMLINK_NOFOLLOW, 0, &sx) == 0;
  errno = saved;
  if (!got) return {};
  auto has = [&](std::uint64_t a) { return (sx.stx_attributes_mask & a) != 0 && (sx.stx_attributes & a) != 0; };
  if (has(STATX_ATTR_IMMUTABLE))
    return " (it is immutable: `lsattr` shows the i attribute, `chattr -i` as root clears it)";
  if (has(STATX_ATTR_APPEND))
    return " (it is append-only: `lsattr` shows the a attribute, `chattr -a` as root clears it)";
  return {};
}

std::string attribute_hint(int errnum, std::string_view path) {
  return errnum == EPERM ? attribute_hint(path) : std::string();
}

}  // namespace

Error file_error(int errnum, std::string_view verb, std::string_view path,
                 std::string_view detail, std::optional<std::uint64_t> offset) {
  std::string msg = fmt::format("could not {} file \"{}\": {}{}{}", verb, path,
                                errno_text(errnum), attribute_hint(errnum, path), detail);
  return Error(errnum, std::string(verb), std::string(path), std::move(msg), offset);
}

Error dir_error(int errnum, std::string_view verb, std::string_view path,
                std::string_view detail) {
  std::string msg = fmt::format("could not {} directory \"{}\": {}{}{}", verb, path,
                                errno_text(errnum), attribute_hint(errnum, path), detail);
  return Error(errnum, std::string(verb), std::string(path), std::move(msg));
}

std::string attribute_note(int errnum, std::initializer_list<std::string_view> paths) {
  if (errnum != EPERM) return {};
  for (std::string_view p : paths) {
    std::string h = attribute_hint(p);
    if (!h.empty()) return fmt::format(" (\"{}\" {}", p, h.substr(5));  // " (it is ..." without " (it "
  }
  return {};
}

Error make_error(int errnum, std::string_view op, std::string_view path, std::string message) {
  return Error(errnum, std::string(op), std::string(path), std::move(message));
}

}  // namespace walseg
