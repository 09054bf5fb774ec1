// The settings half of the boundary (bridge.h): the library's settings table handed to
// PostgreSQL as plain values, its checks, and the library's log messages queued for elog.
// Nothing here includes a PostgreSQL header; every entry point is noexcept and catches all.
#include "bridge.h"
#include "bridge_internal.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "walseg/failpoint.h"
#include "walseg/guc_definitions.h"
#include "walseg/guc_load.h"
#include "walseg/io_priority.h"
#include "walseg/log.h"

namespace {

using walseg::bridge::copy_text;
using walseg::bridge::guarded;
using walseg::guc::SettingDef;

// PostgreSQL keeps the name and description pointers it is given for the life of the process,
// and string_views need not be NUL-terminated, so each string is copied once into storage
// that is never freed or moved (a deque keeps its elements in place as it grows).
const char* stable_copy(std::string_view s) {
  static std::mutex mu;
  static std::deque<std::string> storage;
  std::lock_guard lk(mu);
  return storage.emplace_back(s).c_str();
}

struct Strings {
  const char* name;
  const char* description;
  const char* postgres_note;
  const char* default_text;
  const char* string_default;
  std::vector<const char*> options;
};

// SHOW's form of an entry's default ("2", "zero_write", "16MB").
std::string default_text(const SettingDef& def) {
  walseg::guc::Registry registry = walseg::guc::make_walseg_registry();
  return registry.show(def.name)->value;
}

// One Strings per table entry, built on first use.
const std::vector<Strings>& strings() {
  static const std::vector<Strings> all = [] {
    std::vector<Strings> v;
    for (const SettingDef& def : walseg::guc::walseg_settings()) {
      Strings s{stable_copy(def.name), stable_copy(def.description),
                stable_copy(def.postgres_note), stable_copy(default_text(def)), nullptr, {}};
      if (auto* str = std::get_if<walseg::guc::StringSpec>(&def.spec))
        s.string_default = stable_copy(str->default_value);
      if (auto* e = std::get_if<walseg::guc::EnumSpec>(&def.spec))
        for (const auto& o : e->options) s.options.push_back(stable_copy(o.name));
      v.push_back(std::move(s));
    }
    return v;
  }();
  return all;
}

const SettingDef* def_at(int index) {
  auto defs = walseg::guc::walseg_settings();
  if (index < 0 || static_cast<std::size_t>(index) >= defs.size()) return nullptr;
  return &defs[static_cast<std::size_t>(index)];
}

WalsegGucUnit to_c(walseg::guc::Unit u) {
  using walseg::guc::Unit;
  switch (u) {
    case Unit::kNone: return WALSEG_UNIT_NONE;
    case Unit::kBytes: return WALSEG_UNIT_BYTES;
    case Unit::kKilobytes: return WALSEG_UNIT_KB;
    case Unit::kMegabytes: return WALSEG_UNIT_MB;
    case Unit::kMilliseconds: return WALSEG_UNIT_MS;
    case Unit::kSeconds: return WALSEG_UNIT_S;
    case Unit::kMinutes: return WALSEG_UNIT_MIN;
  }
  return WALSEG_UNIT_NONE;
}

WalsegGucContext to_c(walseg::guc::Context c) {
  using walseg::guc::Context;
  switch (c) {
    case Context::kPostmaster: return WALSEG_CTX_POSTMASTER;
    case Context::kSighup: return WALSEG_CTX_SIGHUP;
    case Context::kUser: return WALSEG_CTX_USER;
  }
  return WALSEG_CTX_POSTMASTER;
}

// Fills the C description from one entry; one overload per kind of spec.
struct Describe {
  WalsegGucDesc* out;
  void operator()(const walseg::guc::BoolSpec& s) const {
    out->type = WALSEG_GUC_BOOL;
    out->bool_default = s.default_value;
  }
  void operator()(const walseg::guc::IntSpec& s) const {
    out->type = WALSEG_GUC_INT;
    out->int_default = s.default_value;
    out->int_min = s.min;
    out->int_max = s.max;
    out->unit = to_c(s.unit);
    out->has_check = s.check != nullptr;
  }
  void operator()(const walseg::guc::RealSpec& s) const {
    out->type = WALSEG_GUC_REAL;
    out->real_default = s.default_value;
    out->real_min = s.min;
    out->real_max = s.max;
    out->unit = to_c(s.unit);
  }
  void operator()(const walseg::guc::StringSpec& s) const {
    out->type = WALSEG_GUC_STRING;
    out->has_check = s.check != nullptr;
  }
  void operator()(const walseg::guc::EnumSpec& s) const {
    out->type = WALSEG_GUC_ENUM;
    out->enum_default = s.default_value;
    out->enum_count = static_cast<int>(s.options.size());
  }
};

std::mutex log_mu;
std::deque<std::pair<WalsegLogLevel, std::string>> log_queue;
constexpr std::size_t kMaxQueuedLogs = 64;  // older ones are dropped if nobody drains

}  // namespace

extern "C" {

int walseg_guc_count(void) noexcept {
  return static_cast<int>(walseg::guc::walseg_settings().size());
}

int walseg_guc_index(WalsegSettingId id) noexcept {
  namespace names = walseg::guc::names;
  std::string_view name;
  switch (id) {
    case WALSEG_SETTING_INIT_METHOD: name = names::kInitMethod; break;
    case WALSEG_SETTING_FALLOCATE_FALLBACK: name = names::kFallocateFallback; break;
    case WALSEG_SETTING_PREALLOC_SEGMENTS: name = names::kPreallocSegments; break;
    case WALSEG_SETTING_FILL_IO_CLASS: name = names::kFillIoClass; break;
  }
  auto defs = walseg::guc::walseg_settings();
  for (std::size_t i = 0; i < defs.size(); ++i)
    if (defs[i].name == name) return static_cast<int>(i);
  return -1;
}

bool walseg_guc_describe(int index, WalsegGucDesc* out) noexcept {
  try {
    const SettingDef* def = def_at(index);
    if (!def) return false;
    *out = WalsegGucDesc{};
    const Strings& s = strings()[static_cast<std::size_t>(index)];
    out->name = s.name;
    out->description = s.description;
    out->in_postgres = def->hosts == walseg::guc::Hosts::kToolAndPostgres;
    out->postgres_note = s.postgres_note;
    out->default_text = s.default_text;
    out->string_default = s.string_default;
    out->context = to_c(def->context);
    std::visit(Describe{out}, def->spec);
    return true;
  } catch (...) {
    return false;
  }
}

const char* walseg_guc_enum_option(int index, int option, int* value) noexcept {
  try {
    const SettingDef* def = def_at(index);
    auto* e = def ? std::get_if<walseg::guc::EnumSpec>(&def->spec) : nullptr;
    if (!e || option < 0 || static_cast<std::size_t>(option) >= e->options.size()) return nullptr;
    *value = e->options[static_cast<std::size_t>(option)].value;
    return strings()[static_cast<std::size_t>(index)].options[static_cast<std::size_t>(option)];
  } catch (...) {
    return nullptr;
  }
}

bool walseg_guc_check_int(int index, int64_t value, char* reason, size_t len) noexcept {
  return guarded(reason, len, [&]() -> bool {
    const SettingDef* def = def_at(index);
    auto* spec = def ? std::get_if<walseg::guc::IntSpec>(&def->spec) : nullptr;
    if (!spec || !spec->check) return true;
    const char* why = spec->check(value);
    if (why) copy_text(reason, len, why);
    return why == nullptr;
  });
}

bool walseg_guc_check_string(int index, const char* value, char* reason, size_t len) noexcept {
  return guarded(reason, len, [&]() -> bool {
    const SettingDef* def = def_at(index);
    auto* spec = def ? std::get_if<walseg::guc::StringSpec>(&def->spec) : nullptr;
    if (!spec || !spec->check) return true;
    const char* why = spec->check(value ? value : "");
    if (why) copy_text(reason, len, why);
    return why == nullptr;
  });
}

int walseg_guc_cross_check(const char* const* names, const char* const* values, int n, char* out,
                           size_t len, char* hints, size_t hints_len) noexcept {
  try {
    // The tool's own start rules (guc_load.h), derived defaults included, so that the two
    // never disagree about the same values.
    walseg::guc::Registry registry = walseg::guc::make_walseg_registry();
    std::vector<std::pair<std::string, std::string>> pairs;
    for (int i = 0; i < n; ++i) pairs.emplace_back(names[i], values[i]);
    const std::vector<walseg::guc::ConfigError> errors = walseg::guc::check_start_values(registry, pairs);
    // The hints go apart, into PostgreSQL's HINT field: a "HINT:" line inside DETAIL text
    // reads as a field of its own and is not one (log parsers, csvlog).
    std::string text;
    std::string hint_text;
    for (const auto& e : errors) {
      text += (text.empty() ? "" : "\n") + e.located_message();
      if (!e.hint.empty() && hint_text.find(e.hint) == std::string::npos)
        hint_text += (hint_text.empty() ? "" : "\n") + e.hint;
    }
    copy_text(out, len, text);
    copy_text(hints, hints_len, hint_text);
    return static_cast<int>(errors.size());
  } catch (const std::exception& e) {
    copy_text(out, len, e.what());
    copy_text(hints, hints_len, "");
    return 1;
  } catch (...) {
    copy_text(out, len, "unknown error in cross check");
    copy_text(hints, hints_len, "");
    return 1;
  }
}

void walseg_bridge_capture_log(void) noexcept {
  try {
    walseg::set_log_sink([](walseg::LogLevel level, const std::string& message) {
      WalsegLogLevel l = level == walseg::LogLevel::kDebug2 ? WALSEG_LOG_DEBUG2
                         : level == walseg::LogLevel::kLog  ? WALSEG_LOG_LOG
                                                            : WALSEG_LOG_WARNING;
      std::lock_guard lk(log_mu);
      if (log_queue.size() >= kMaxQueuedLogs) log_queue.pop_front();
      log_queue.emplace_back(l, message);
    });
  } catch (...) {
    // Without the sink the library prints to stderr, which PostgreSQL also logs.
  }
}

bool walseg_bridge_next_log(WalsegLogLevel* level, char* buf, size_t len) noexcept {
  try {
    std::lock_guard lk(log_mu);
    if (log_queue.empty()) return false;
    *level = log_queue.front().first;
    copy_text(buf, len, log_queue.front().second);
    log_queue.pop_front();
    return true;
  } catch (...) {
    return false;
  }
}

bool walseg_bridge_set_fill_io_class(int io_class, char* why, size_t len) noexcept {
  return guarded(why, len, [&]() -> bool {
    walseg::set_thread_io_class(static_cast<walseg::FillIoClass>(io_class));
    return true;
  });
}

bool walseg_bridge_arm_failpoints(bool* armed, char* why, size_t len) noexcept {
  return guarded(why, len, [&]() -> bool {
    const char* env = std::getenv("WALSEG_FAILPOINTS");
    *armed = env != nullptr && *env != '\0';
    if (*armed) walseg::failpoint::arm_from_string(env);
    return true;
  });
}

}  // extern "C"
