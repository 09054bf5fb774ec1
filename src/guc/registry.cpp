// Registry: values per source and PostgreSQL's checks (include/walseg/guc_registry.h).
#include <cctype>
#include "walseg/guc_registry.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "text_util.h"

namespace walseg::guc {

using detail::iequals;

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

ConfigError value_error(ErrorKind kind, const SettingDef& def, std::string message,
                        std::string hint = {}) {
  ConfigError e;
  e.kind = kind;
  e.parameter = std::string(def.name);
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

ConfigError invalid_value(const SettingDef& def, std::string_view text, std::string hint = {}) {
  return value_error(ErrorKind::kInvalidValue, def,
                     fmt::format("invalid value for parameter \"{}\": \"{}\"", def.name,
                                 detail::printable_cut(text)),
                     std::move(hint));
}

template <typename T>
std::optional<ConfigError> range_error(const SettingDef& def, T v, T min, T max, Unit unit) {
  if (v >= min && v <= max) return std::nullopt;
  return value_error(ErrorKind::kOutOfRange, def,
                     fmt::format("{} is outside the valid range for parameter \"{}\" ({} .. {})",
                                 with_unit(v, unit), def.name, with_unit(min, unit),
                                 with_unit(max, unit)));
}

std::optional<ConfigError> hook_error(const SettingDef& def, const char* reason) {
  if (reason == nullptr) return std::nullopt;
  return value_error(ErrorKind::kCheckFailed, def,
                     fmt::format("parameter \"{}\" {}", def.name, reason));
}

std::string available_values(const EnumSpec& spec) {
  std::string list;
  for (const auto& o : spec.options) list += fmt::format("{}{}", list.empty() ? "" : ", ", o.name);
  return fmt::format("Available values: {}.", list);
}

Value default_value(const SettingDef& def) {
  return std::visit(Overloaded{
                        [](const BoolSpec& s) -> Value { return s.default_value; },
                        [](const IntSpec& s) -> Value { return s.default_value; },
                        [](const RealSpec& s) -> Value { return s.default_value; },
                        [](const StringSpec& s) -> Value { return std::string(s.default_value); },
                        [](const EnumSpec& s) -> Value { return std::int64_t{s.default_value}; },
                    },
                    def.spec);
}

ConfigError unknown_parameter(std::string_view name) {
  ConfigError e;
  e.kind = ErrorKind::kUnknownParameter;
  e.parameter = std::string(name);
  e.message = fmt::format("unrecognized configuration parameter \"{}\"", detail::printable_cut(name));
  return e;
}

}  // namespace

std::string_view context_name(Context c) {
  switch (c) {
    case Context::kPostmaster: return "postmaster";
    case Context::kSighup: return "sighup";
    case Context::kUser: return "user";
  }
  return "?";
}

std::string_view source_name(Source s) {
  switch (s) {
    case Source::kDefault: return "default";
    case Source::kFile: return "configuration file";
    case Source::kCommandLine: return "command line";
    case Source::kSession: return "session";
  }
  return "?";
}

Registry::Registry(std::span<const SettingDef> defs, std::string_view prefix,
                   CrossCheck cross_check, DeriveDefaults derive_defaults)
    : defs_(defs), prefix_(prefix), cross_check_(cross_check), derive_defaults_(derive_defaults) {
  for (const auto& def : defs_) {
    // A bad table is a programming error, caught by the first test that builds the registry.
    if (!owns_name(def.name) || find(def.name) != nullptr)
      throw std::logic_error(fmt::format("bad or duplicate setting name \"{}\"", def.name));
    State st{&def, {}};
    st.slots[static_cast<std::size_t>(Source::kDefault)] = Slot{default_value(def), {}};
    states_.push_back(std::move(st));
    if (auto err = parse_value(def, display_value(def, default_value(def)));
        std::holds_alternative<ConfigError>(err))
      throw std::logic_error("default of " + std::string(def.name) + " fails its own checks: " +
                             std::get<ConfigError>(err).message);
  }
}

bool Registry::owns_name(std::string_view name) const {
  return detail::istarts_with(name, prefix_);
}

const SettingDef* Registry::find(std::string_view name) const {
  const State* st = state(name);
  return st ? st->def : nullptr;
}

Registry::State* Registry::state(std::string_view name) {
  for (auto& st : states_)
    if (iequals(st.def->name, name)) return &st;
  return nullptr;
}

const Registry::State* Registry::state(std::string_view name) const {
  return const_cast<Registry*>(this)->state(name);
}

const Registry::State& Registry::checked_state(std::string_view name) const {
  const State* st = state(name);
  if (st == nullptr) throw std::logic_error("no setting named " + std::string(name));
  return *st;
}

const Registry::Slot& Registry::State::effective() const {
  for (std::size_t i = kSourceCount; i-- > 0;)
    if (slots[i]) return *slots[i];
  throw std::logic_error("setting without a default");
}

std::variant<Value, ConfigError> Registry::parse_value(const SettingDef& def,
                                                       std::string_view text) const {
  using Result = std::variant<Value, ConfigError>;
  auto checked = [](Value v, std::optional<ConfigError> err) -> Result {
    if (err) return *err;
    return v;
  };
  return std::visit(
      Overloaded{
          [&](const BoolSpec&) -> Result {
            if (auto b = parse_bool(text)) return Value{*b};
            return value_error(ErrorKind::kInvalidValue, def,
                               fmt::format("parameter \"{}\" requires a Boolean value", def.name));
          },
          [&](const IntSpec& s) -> Result {
            auto p = parse_int(text, s.unit);
            // A unit on a unitless number (new-user trial 17: walseg.commit_delay = 5ms): the
            // description names the unit it is in.
            if (!p.value && p.hint.empty() && s.unit == Unit::kNone && !text.empty() &&
                (std::isdigit(static_cast<unsigned char>(text.front())) != 0 || text.front() == '-' ||
                 text.front() == '+'))
              return invalid_value(def, text, fmt::format("It takes a whole number, with no unit. {}", def.description));
            if (!p.value) return invalid_value(def, text, p.hint);
            auto err = range_error(def, *p.value, s.min, s.max, s.unit);
            if (!err && s.check) err = hook_error(def, s.check(*p.value));
            return checked(*p.value, err);
          },
          [&](const RealSpec& s) -> Result {
            auto p = parse_real(text, s.unit);
            if (!p.value)
              return value_error(ErrorKind::kInvalidValue, def,
                                 fmt::format("parameter \"{}\" requires a numeric value", def.name),
                                 p.hint);
            return checked(*p.value, range_error(def, *p.value, s.min, s.max, s.unit));
          },
          [&](const StringSpec& s) -> Result {
            return checked(std::string(text), s.check ? hook_error(def, s.check(text)) : std::nullopt);
          },
          [&](const EnumSpec& s) -> Result {
            for (const auto& o : s.options)
              if (iequals(o.name, text)) return Value{std::int64_t{o.value}};
            return invalid_value(def, text, available_values(s));
          },
      },
      def.spec);
}

std::optional<ConfigError> Registry::check_context(const State& st, Phase phase, Source source,
                                                   const std::optional<Slot>& replacement) const {
  const SettingDef& def = *st.def;
  auto cannot = [&](std::string_view why) {
    return value_error(ErrorKind::kCannotChange, def,
                       fmt::format("parameter \"{}\" cannot be changed {}", def.name, why));
  };
  if (phase == Phase::kRuntime && def.context == Context::kPostmaster)
    return cannot("without restarting the server");
  if (phase == Phase::kRuntime && def.context == Context::kSighup) return cannot("now");
  if (phase == Phase::kReload && def.context == Context::kPostmaster) {
    State next = st;
    next.slots[static_cast<std::size_t>(source)] = replacement;
    if (next.effective().value != st.effective().value)
      return cannot("without restarting the server");
  }
  return std::nullopt;
}

std::optional<ConfigError> Registry::set(std::string_view name, std::string_view text,
                                         Source source, Phase phase, Origin origin) {
  State* st = state(name);
  if (st == nullptr) return unknown_parameter(name);
  auto parsed = parse_value(*st->def, text);
  if (auto* err = std::get_if<ConfigError>(&parsed)) return *err;
  std::optional<Slot> slot = Slot{std::get<Value>(std::move(parsed)), std::move(origin)};
  if (auto err = check_context(*st, phase, source, slot)) return err;
  // A postmaster setting on reload that passed the check leaves the effective value as it
  // is; storing it would make SHOW claim a file line that never took effect.
  if (phase == Phase::kReload && st->def->context == Context::kPostmaster) return std::nullopt;
  st->slots[static_cast<std::size_t>(source)] = std::move(slot);
  return std::nullopt;
}

std::optional<ConfigError> Registry::unset(std::string_view name, Source source, Phase phase) {
  State* st = state(name);
  if (st == nullptr) return unknown_parameter(name);
  if (source == Source::kDefault) return std::nullopt;  // the default is never removed
  if (auto err = check_context(*st, phase, source, std::nullopt)) return err;
  st->slots[static_cast<std::size_t>(source)].reset();
  return std::nullopt;
}

void Registry::reset_all() {
  for (auto& st : states_) st.slots[static_cast<std::size_t>(Source::kSession)].reset();
}

namespace {
// The effective value as T, where `spec_ok` says the setting's type fits the getter; a
// mismatch is a programming error in the caller.
template <typename T>
const T& typed(const Value& v, bool spec_ok, std::string_view name) {
  const T* p = std::get_if<T>(&v);
  if (p == nullptr || !spec_ok)
    throw std::logic_error(fmt::format("setting \"{}\" read as the wrong type", name));
  return *p;
}
}  // namespace

bool Registry::get_bool(std::string_view name) const {
  const State& st = checked_state(name);
  return typed<bool>(st.effective().value, true, name);
}
std::int64_t Registry::get_int(std::string_view name) const {
  const State& st = checked_state(name);
  return typed<std::int64_t>(st.effective().value,
                             std::holds_alternative<IntSpec>(st.def->spec), name);
}
double Registry::get_real(std::string_view name) const {
  const State& st = checked_state(name);
  return typed<double>(st.effective().value, true, name);
}
const std::string& Registry::get_string(std::string_view name) const {
  const State& st = checked_state(name);
  return typed<std::string>(st.effective().value, true, name);
}
int Registry::get_enum(std::string_view name) const {
  const State& st = checked_state(name);
  return static_cast<int>(typed<std::int64_t>(
      st.effective().value, std::holds_alternative<EnumSpec>(st.def->spec), name));
}

Source Registry::source_of(std::string_view name) const {
  const State& st = checked_state(name);
  for (std::size_t i = kSourceCount; i-- > 0;)
    if (st.slots[i]) return static_cast<Source>(i);
  return Source::kDefault;
}

bool Registry::has_value_from(std::string_view name, Source source) const {
  return checked_state(name).slots[static_cast<std::size_t>(source)].has_value();
}

void Registry::derive_defaults() {
  if (derive_defaults_) derive_defaults_(*this);
}

void Registry::set_default(std::string_view name, std::string_view text) {
  State* st = state(name);
  if (st == nullptr) throw std::logic_error(fmt::format("set_default: unknown setting \"{}\"", name));
  auto parsed = parse_value(*st->def, text);
  if (auto* err = std::get_if<ConfigError>(&parsed))
    throw std::logic_error(fmt::format("derived default \"{}\" of {} fails its checks: {}", text, name, err->message));
  st->slots[static_cast<std::size_t>(Source::kDefault)] = Slot{std::get<Value>(std::move(parsed)), {}};
}

std::vector<ConfigError> Registry::cross_check() const {
  return cross_check_ ? cross_check_(*this) : std::vector<ConfigError>{};
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string Registry::closest_name(std::string_view name) const {
  const std::string lower = detail::to_lower(std::string(name));
  std::string best;
  std::size_t best_d = 4;
  for (const auto& def : definitions()) {
    const std::size_t d = edit_distance(lower, detail::to_lower(std::string(def.name)));
    if (d < best_d && 2 * d < def.name.size()) {
      best_d = d;
      best = std::string(def.name);
    }
  }
  return best;
}

}  // namespace walseg::guc
