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

std::string printable_cut(std::string_view s) {
  if (s.size() <= kMessageValueBytes) return printable(s);
  std::size_t n = kMessageValueBytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a character
  return fmt::format("{}... ({} bytes)", printable(s.substr(0, n)), s.size());
}

}  // namespace walseg::guc::detail
