// ConfigError formatting (include/walseg/guc_error.h).
#include "walseg/guc_error.h"

#include <fmt/format.h>

namespace walseg::guc {

namespace {
// PostgreSQL puts the location into the message of syntax and unknown-name errors ("syntax
// error in file "F" line N, ..."); for other errors, including a failed include (whose
// message names the included file, not the includer), it is added after the message.
bool location_in_message(ErrorKind kind) {
  return kind == ErrorKind::kSyntax || kind == ErrorKind::kUnknownParameter;
}
}  // namespace

std::string ConfigError::located_message() const {
  std::string out = message;
  if (!file.empty() && !location_in_message(kind))
    out += fmt::format(" (file \"{}\", line {})", file, line);
  return out;
}

std::string ConfigError::to_string() const {
  std::string out = located_message();
  if (!hint.empty()) out += fmt::format("\nHINT:  {}", hint);
  return out;
}

std::string to_string(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += '\n';
    out += e.to_string();
  }
  return out;
}

ConfigException::ConfigException(std::vector<ConfigError> errors)
    : std::runtime_error(guc::to_string(errors)), errors_(std::move(errors)) {}

}  // namespace walseg::guc
