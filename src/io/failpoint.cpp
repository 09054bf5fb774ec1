// Failpoint registry (include/walseg/failpoint.h).
#include "walseg/failpoint.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "walseg/error.h"

namespace walseg::failpoint {
namespace {

struct Armed {
  Spec spec;
  std::uint64_t calls = 0;
};

std::mutex mu;
std::map<std::string, Armed, std::less<>> armed;  // guarded by mu
std::atomic<bool> any_armed{false};

// The errno names a test or an operator is likely to inject.
struct ErrnoName {
  const char* name;
  int value;
};
constexpr ErrnoName kErrnoNames[] = {
    {"EIO", EIO},       {"ENOSPC", ENOSPC},   {"EINTR", EINTR},   {"EINVAL", EINVAL},
    {"EOPNOTSUPP", EOPNOTSUPP}, {"ENOSYS", ENOSYS}, {"EBADF", EBADF}, {"EFBIG", EFBIG},
    {"ENOMEM", ENOMEM}, {"EAGAIN", EAGAIN},   {"EACCES", EACCES}, {"EPERM", EPERM},
    {"EEXIST", EEXIST}, {"ENOENT", ENOENT},   {"EDQUOT", EDQUOT}, {"EROFS", EROFS},
    {"ECANCELED", ECANCELED}, {"EXDEV", EXDEV}, {"EMFILE", EMFILE}, {"ENFILE", ENFILE},
};

Error bad_spec(std::string_view entry, std::string_view why) {
  return make_error(EINVAL, "parse failpoint", "",
                    fmt::format("invalid failpoint specification \"{}\": {}", entry, why));
}

std::uint64_t parse_count(std::string_view entry, std::string_view digits) {
  if (digits.empty()) throw bad_spec(entry, "missing number");
  std::uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') throw bad_spec(entry, "not a number");
    auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) throw bad_spec(entry, "number out of range");
    v = v * 10 + d;
  }
  return v;
}

Spec parse_spec(std::string_view entry, std::string_view text) {
  Spec spec;
  auto star = text.find('*');
  if (star != std::string_view::npos) {
    spec.times = parse_count(entry, text.substr(star + 1));
    text = text.substr(0, star);
  }
  auto at = text.find('@');
  if (at != std::string_view::npos) {
    spec.nth = parse_count(entry, text.substr(at + 1));
    if (spec.nth == 0) throw bad_spec(entry, "@N counts from 1");
    text = text.substr(0, at);
  }
  if (text == "crash") {
    spec.kind = Kind::kCrash;
  } else if (text.starts_with("short:")) {
    spec.kind = Kind::kShort;
    spec.short_bytes = parse_count(entry, text.substr(6));
  } else {
    spec.kind = Kind::kErrno;
    for (const auto& e : kErrnoNames)
      if (text == e.name) spec.errnum = e.value;
    if (spec.errnum == 0) throw bad_spec(entry, "unknown errno name");
  }
  return spec;
}

}  // namespace

void arm(std::string_view name, const Spec& spec) {
  std::lock_guard lk(mu);
  armed[std::string(name)] = Armed{spec, 0};
  any_armed.store(true, std::memory_order_relaxed);
}

void disarm(std::string_view name) {
  std::lock_guard lk(mu);
  if (auto it = armed.find(name); it != armed.end()) armed.erase(it);
  any_armed.store(!armed.empty(), std::memory_order_relaxed);
}

void disarm_all() {
  std::lock_guard lk(mu);
  armed.clear();
  any_armed.store(false, std::memory_order_relaxed);
}

void arm_from_string(std::string_view text) {
  while (!text.empty()) {
    auto semi = text.find(';');
    std::string_view entry = text.substr(0, semi);
    text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
    if (entry.empty()) continue;
    auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) throw bad_spec(entry, "expected name=SPEC");
    arm(entry.substr(0, eq), parse_spec(entry, entry.substr(eq + 1)));
  }
}

void arm_from_environment() {
  if (const char* env = std::getenv("WALSEG_FAILPOINTS")) arm_from_string(env);
}

namespace {
thread_local std::string_view t_prefix;
}

Prefix::Prefix(std::string_view prefix) noexcept : saved_(t_prefix) { t_prefix = prefix; }
Prefix::~Prefix() { t_prefix = saved_; }

std::optional<Spec> hit(std::string_view name) {
  if (!any_armed.load(std::memory_order_relaxed)) return std::nullopt;
  std::optional<Spec> result;
  {
    std::lock_guard lk(mu);
    auto it = t_prefix.empty() ? armed.find(name) : armed.find(std::string(t_prefix) + std::string(name));
    if (it == armed.end()) return std::nullopt;
    Armed& a = it->second;
    std::uint64_t n = ++a.calls;
    bool in_range = n >= a.spec.nth && (a.spec.times == 0 || n < a.spec.nth + a.spec.times);
    if (in_range) result = a.spec;
  }
  if (result && result->kind == Kind::kCrash) _exit(kCrashExitStatus);
  if (result && result->kind == Kind::kCall) {
    if (result->call) result->call();
    return std::nullopt;
  }
  return result;
}

std::uint64_t calls(std::string_view name) {
  std::lock_guard lk(mu);
  auto it = armed.find(name);
  return it == armed.end() ? 0 : it->second.calls;
}

}  // namespace walseg::failpoint
