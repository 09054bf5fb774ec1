// ConfigError: one problem found in settings (a settings file, a -c option or a SET), as a value.
//
// Settings problems are collected, not thrown one at a time: at start every error of the whole
// file set is reported before walseg refuses to run, and a reload reports each setting it could
// not apply. A ConfigError carries where the value came from (file and line, or nothing for -c
// and SET), the parameter, a primary message worded as PostgreSQL words it, and an optional
// hint. ConfigException wraps a list of them for callers that do want to throw.
//
// Not for: I/O failures of the library (walseg::Error in error.h).
// Thread-safety: plain values; copy freely. Nothing refers to outside storage.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace walseg::guc {

/// What went wrong; decides how a reload treats the error (see guc_load.h) and whether the
/// message already names the file (syntax and unknown-name errors do, as PostgreSQL's).
enum class ErrorKind {
  kSyntax,            ///< the file cannot be tokenised or parsed
  kInclude,           ///< an include could not be followed (missing, cycle, depth, unreadable)
  kUnknownParameter,  ///< a name under the registry's prefix that is not a setting
  kInvalidValue,      ///< the value does not parse for the setting's type or unit
  kOutOfRange,        ///< parsed but outside [min, max]
  kCheckFailed,       ///< parsed and in range but refused by the setting's check hook
  kCannotChange,      ///< the setting's context forbids changing it now
  kCrossCheck,        ///< settings that are fine alone but not together
};

struct ConfigError {
  ErrorKind kind = ErrorKind::kInvalidValue;
  std::string file;       ///< settings file the value came from; empty for -c, SET, defaults
  int line = 0;           ///< 1-based line in `file`; 0 when there is no file
  std::string parameter;  ///< setting name; empty for syntax and include errors
  std::string message;    ///< primary message, PostgreSQL-worded, e.g. `parameter "x" ...`
  std::string hint;       ///< optional, a full sentence, e.g. `Valid units for this ...`
  /// kCrossCheck: every setting the rule reads, `parameter` first (the load leaves the rule out
  /// when one of them was refused, and locates it where the first one that was set came from).
  std::vector<std::string> reads;
  /// The value at fault was given with -c (the tool's command line), not by a file, SET or a
  /// default: check-config's summary then names -c, not the file.
  bool from_command_line = false;

  /// The message, then ` (file "F", line N)` when the location is not already part of the
  /// message: what a host that shows the hint apart (PostgreSQL's errhint) prints.
  std::string located_message() const;

  /// located_message(), then `\nHINT:  <hint>` when there is a hint.
  std::string to_string() const;
};

/// Joins errors with to_string(), one per line (hints on their own line).
std::string to_string(const std::vector<ConfigError>& errors);

/// Thrown by convenience entry points (the tool's load_config); what() lists every error.
class ConfigException : public std::runtime_error {
 public:
  explicit ConfigException(std::vector<ConfigError> errors);
  const std::vector<ConfigError>& errors() const noexcept { return errors_; }

 private:
  std::vector<ConfigError> errors_;
};

}  // namespace walseg::guc
