// walseg::Error: the one exception type the library throws from public calls.
//
// It is a std::system_error (so code() carries errno) that also remembers the operation
// ("fsync", "rename", ...), the path, and an offset or size where one applies. what() is
// worded the way PostgreSQL words file errors:
//     could not fsync file "pg_wal/000000010000000000000001": Input/output error
// Errors that are not about one syscall (bad arguments, a wrong-size file) use make_error with
// errno 0 and a full message.
//
// Not for: configuration parse errors, which carry file and line (see guc headers).
// Thread-safety: immutable after construction; safe to copy between threads.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <system_error>

namespace walseg {

class Error : public std::system_error {
 public:
  /// errnum: errno value (0 when the error has no errno); op: the verb of the failed step;
  /// path: file or directory involved (may be empty); message: the complete text for what().
  Error(int errnum, std::string op, std::string path, std::string message,
        std::optional<std::uint64_t> offset = std::nullopt);

  int errnum() const noexcept { return code().value(); }
  const std::string& op() const noexcept { return op_; }
  const std::string& path() const noexcept { return path_; }
  /// Byte offset or size the operation was working on, when it applies.
  std::optional<std::uint64_t> offset() const noexcept { return offset_; }
  /// The message exactly as built (std::system_error would append errno's text again).
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
  std::string op_;
  std::string path_;
  std::optional<std::uint64_t> offset_;
};

/// Builds the PostgreSQL-worded error for a failed syscall:
///   could not <verb> file "<path>": <strerror(errnum)>[<detail>]
/// verb: "open", "write", "fsync", ... ; detail: optional extra text appended after errno's text
/// (for example "; wrote 143360 of 16777216 bytes"). errnum must be the saved errno.
Error file_error(int errnum, std::string_view verb, std::string_view path,
                 std::string_view detail = {}, std::optional<std::uint64_t> offset = std::nullopt);

/// Same for a directory: could not <verb> directory "<path>": <reason>
Error dir_error(int errnum, std::string_view verb, std::string_view path,
                std::string_view detail = {});

/// For errnum EPERM: " (it is immutable: ...)" or " (it is append-only: ...)" with lsattr and
/// chattr, naming the first of `paths` (files, then their directory) that has that inode
/// attribute, which refuses a change even to root (break-it round 37 F6); empty otherwise.
/// file_error and dir_error append it themselves. Reads attributes with statx, opening
/// nothing. Never throws (beyond std::bad_alloc).
std::string attribute_note(int errnum, std::initializer_list<std::string_view> paths);

/// An error that is not one syscall's: the message is used as is; errnum may be 0.
Error make_error(int errnum, std::string_view op, std::string_view path, std::string message);

/// strerror_r wrapper returning glibc's text ("No space left on device").
std::string errno_text(int errnum);

}  // namespace walseg
