// Internal to src/io: applies an armed failpoint to one syscall about to be made.
#pragma once

#include <cstddef>
#include <string_view>

#include "walseg/failpoint.h"
#include "walseg/io_trace.h"

namespace walseg::io_detail {

/// Returns the errno the call must fail with (0: make the real call). For a `short:N`
/// failpoint, lowers *len to N so the real call transfers fewer bytes than asked.
inline int inject(std::string_view name, std::size_t* len = nullptr) {
  auto spec = failpoint::hit(name);
  if (!spec) return 0;
  if (spec->kind == failpoint::Kind::kShort) {
    if (len != nullptr && *len > spec->short_bytes) *len = spec->short_bytes;
    return 0;
  }
  return spec->errnum;
}

/// Counts and traces one completed (or failed) syscall.
inline void done(std::string_view name, std::string_view path, int err) {
  io_trace::count_syscalls();
  io_trace::record(name, path, err);
}

}  // namespace walseg::io_detail
