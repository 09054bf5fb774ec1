// Construction and wording of walseg::Error (include/walseg/error.h).
#include "walseg/error.h"

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

Error file_error(int errnum, std::string_view verb, std::string_view path,
                 std::string_view detail, std::optional<std::uint64_t> offset) {
  std::string msg = fmt::format("could not {} file \"{}\": {}{}", verb, path,
                                errno_text(errnum), detail);
  return Error(errnum, std::string(verb), std::string(path), std::move(msg), offset);
}

Error dir_error(int errnum, std::string_view verb, std::string_view path,
                std::string_view detail) {
  std::string msg = fmt::format("could not {} directory \"{}\": {}{}", verb, path,
                                errno_text(errnum), detail);
  return Error(errnum, std::string(verb), std::string(path), std::move(msg));
}

Error make_error(int errnum, std::string_view op, std::string_view path, std::string message) {
  return Error(errnum, std::string(op), std::string(path), std::move(message));
}

}  // namespace walseg
