// The settings-file reader: postgresql.conf syntax, with includes, into a list of
// (name, value, file, line) items. It checks syntax and follows includes; it does not know
// which settings exist or what values they take (guc_load.h applies items to a Registry).
//
// Syntax (PostgreSQL's guc-file.l, with the deviations marked *):
//  * One setting per line: `name = value` or `name value`; `#` starts a comment; blank lines
//    are fine. Names are identifiers, optionally qualified once (`walseg.segment_size`).
//  * Values: a single-quoted string, where `''` and `\'` are a quote and `\b \f \n \r \t`
//    and `\ooo` (octal) are escapes and any other `\c` is `c`; or an unquoted identifier or
//    path-like word (letters, digits, `_ - . : /`, starting with a letter); or a number with
//    optional unit letters (`16MB`, `0x10`, `-1`). Anything else is a syntax error, including
//    a value with spaces that is not quoted (`read committed`) and an unterminated string.
//    * A fractional or exponent number may carry unit letters unquoted (`1.5MB`, `1e3kB`);
//      PostgreSQL's lexer wants those quoted. * A value may be a qualified word (`a.b`).
//  * Values are kept exactly as written (no case folding; strings de-escaped only).
//  * `include 'f'`, `include_if_exists 'f'` (a missing file is a note, not an error),
//    `include_dir 'd'` (the files in d named *.conf, not starting with a dot, not
//    directories, in byte order). Relative paths are relative to the including file's
//    directory. Nesting deeper than kMaxIncludeDepth is an error ("maximum nesting depth
//    exceeded"); * so is an include cycle, reported with its chain `a.conf -> b.conf ->
//    a.conf` (PostgreSQL only has the depth bound): a file, or an include_dir directory,
//    reached again while it is still being read. The same file may be included twice when
//    that is not a cycle.
//  * A syntax error skips the rest of its line and parsing continues, so every error of a
//    file is reported; after kMaxSyntaxErrors in one file the file is abandoned, as
//    PostgreSQL does.
//
// Files come through a ConfigSource: DiskSource reads the filesystem through walseg's io
// layer; MemorySource serves files from memory (tests and the fuzzer parse without a disk).
// Thread-safety: the functions are reentrant; a ConfigSource is used by one call at a time.
// Lifetimes: the source must outlive the call; results own their strings.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "walseg/guc_error.h"

namespace walseg::guc {

inline constexpr int kMaxIncludeDepth = 10;   ///< as PostgreSQL's CONF_FILE_MAX_DEPTH
inline constexpr int kMaxSyntaxErrors = 100;  ///< per file, then the file is abandoned

/// One `name = value` line.
struct ConfigItem {
  std::string name;   ///< as written (names compare case-insensitively)
  std::string value;  ///< as written; de-escaped if it was quoted
  std::string file;   ///< path as resolved from the include chain
  int line = 0;
};

/// A file and everything it includes, in reading order (includes expanded in place).
struct ParsedFiles {
  std::string top_file;
  std::vector<ConfigItem> items;    ///< every occurrence; the last one of a name wins
  std::vector<ConfigError> errors;  ///< syntax and include errors (kSyntax, kInclude)
  std::vector<std::string> notes;   ///< e.g. `skipping missing configuration file "x"`
  /// Not errors, but worth a WARNING: a file that starts with a UTF-8 byte-order mark.
  std::vector<std::string> warnings;
  bool ok() const { return errors.empty(); }
};

/// Where file contents and directory listings come from.
class ConfigSource {
 public:
  virtual ~ConfigSource() = default;
  struct Text {
    int err = 0;           ///< errno-style failure, 0 on success
    std::string why;       ///< what err means here, when errno's text would mislead ("" = errno's)
    std::string identity;  ///< equal for two paths naming the same file (cycle detection)
    std::string contents;
  };
  struct Entry {
    std::string name;
    bool is_dir = false;  ///< following symlinks
  };
  struct Listing {
    int err = 0;
    std::vector<Entry> entries;  ///< any order
  };
  virtual Text read(const std::string& path) = 0;
  virtual Listing list(const std::string& dir) = 0;
  /// The identity read() would give, for text that did not come through read().
  virtual std::string identity(const std::string& path) = 0;
};

/// The filesystem, through walseg::File and walseg::Directory. Files above 64 MiB are
/// refused (EFBIG) so that `include '/dev/zero'` ends.
class DiskSource final : public ConfigSource {
 public:
  Text read(const std::string& path) override;
  Listing list(const std::string& dir) override;
  std::string identity(const std::string& path) override;
};

/// Files held in memory, keyed by lexically normalised path; directories are implied by
/// the files under them. Missing files read as ENOENT.
class MemorySource final : public ConfigSource {
 public:
  void add_file(const std::string& path, std::string contents);
  Text read(const std::string& path) override;
  Listing list(const std::string& dir) override;
  std::string identity(const std::string& path) override;

 private:
  std::map<std::string, std::string> files_;
};

/// Reads `path` and its includes from `source` (the two-argument form: from disk).
ParsedFiles parse_config_file(const std::string& path, ConfigSource& source);
ParsedFiles parse_config_file(const std::string& path);

/// Parses `text` as if it were the contents of `path`; includes are resolved relative to
/// `path` through `source`.
ParsedFiles parse_config_text(std::string_view text, const std::string& path,
                              ConfigSource& source);

}  // namespace walseg::guc
