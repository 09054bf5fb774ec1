// Text helpers for the guc sources (text_util.h).
#include "text_util.h"

#include <fmt/format.h>

namespace walseg::guc::detail {

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out;
}

}  // namespace walseg::guc::detail
