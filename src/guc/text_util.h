// Small text helpers shared by the guc sources (not installed): ASCII case folding, because
// GUC names and enum values compare case-insensitively in PostgreSQL while values stay as
// written, and token quoting for messages.
#pragma once

#include <string>
#include <string_view>

namespace walseg::guc::detail {

inline char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

inline bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

/// `s` with control characters shown as \xNN, so a message about a broken file cannot
/// itself break the terminal or the log line it is printed on.
std::string printable(std::string_view s);

/// Values and names longer than this many bytes are cut in messages (printable_cut).
inline constexpr std::size_t kMessageValueBytes = 64;

/// printable(s), cut after kMessageValueBytes bytes (at a UTF-8 character's start) with
/// "... (N bytes)" after it, so that a 300-byte value does not fill the terminal.
std::string printable_cut(std::string_view s);

}  // namespace walseg::guc::detail
