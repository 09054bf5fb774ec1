// Registry: the settings, their current values and where each value came from, with the
// checks PostgreSQL's set_config_option applies (type, unit, range, check hook, context).
//
// Settings are declared as a table of SettingDef, one entry per setting, like PostgreSQL's
// guc_tables.c; walseg's table is in guc_definitions.h, tests build their own. An entry holds
// everything about its setting (name, context, description, type, default, unit, bounds, enum
// options, check hook, the Config member it fills, which hosts use it and what it means inside
// PostgreSQL), so nothing about a setting is written anywhere else. A value is
// stored per source (default < configuration file < command line < session SET) and the
// highest-priority source present is the effective value, so RESET (dropping the session
// value) and a reload (replacing the file values) never disturb the other sources.
// Contexts say when a setting may change: postmaster only at start, sighup at start and on
// reload, user also by SET at run time (PostgreSQL's PGC_SUSET/PGC_USERSET).
//
// Not for: reading settings files (guc_file.h) or applying a file set with PostgreSQL's
// start/reload rules (guc_load.h); the typed snapshot the library reads (walseg::Config).
// Thread-safety: none; a Registry is a value owned by one thread. Copy it to publish, or
// publish a Config snapshot built from it.
// Lifetimes: the SettingDef table, the enum option lists and every string_view in them must
// outlive the Registry (normally they are static constants).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "walseg/config.h"
#include "walseg/guc_error.h"
#include "walseg/guc_value.h"

namespace walseg::guc {

/// When a setting may be changed (PostgreSQL's GucContext, reduced to walseg's three).
enum class Context { kPostmaster, kSighup, kUser };
/// Where a value came from, in increasing priority.
enum class Source { kDefault, kFile, kCommandLine, kSession };
inline constexpr std::size_t kSourceCount = 4;
/// What the caller is doing: starting, reloading the file set, or SET/RESET at run time.
enum class Phase { kStartup, kReload, kRuntime };

std::string_view context_name(Context c);  ///< "postmaster", "sighup", "user"
std::string_view source_name(Source s);    ///< "default", "configuration file", ...

/// Extra validation after type and range checks. Returns nullptr if the value is fine, else
/// the end of the message `parameter "NAME" <reason>`, e.g. "must be a power of two".
using IntCheck = const char* (*)(std::int64_t value);
using StringCheck = const char* (*)(std::string_view value);

struct BoolSpec {
  bool default_value;
};
struct IntSpec {
  std::int64_t default_value, min, max;  ///< all in `unit`
  Unit unit = Unit::kNone;               ///< base unit: a number written without one is in it
  IntCheck check = nullptr;
};
struct RealSpec {
  double default_value, min, max;
  Unit unit = Unit::kNone;
};
struct StringSpec {
  std::string_view default_value;
  StringCheck check = nullptr;
};
/// One allowed value of an enum setting: its name (matched case-insensitively) and the
/// integer value of the C++ enumerator it stands for.
struct EnumOption {
  std::string_view name;
  int value;
};
struct EnumSpec {
  std::span<const EnumOption> options;
  int default_value;
};

class Registry;
struct SettingDef;

/// Which programs act on a setting. Every setting is the walseg tool's; a setting a host
/// embeds (the PostgreSQL extension) is registered there only if it says kToolAndPostgres,
/// because the others describe the tool's own WAL, for which the host has settings of its own.
enum class Hosts { kTool, kToolAndPostgres };

/// The Config member an entry fills, so that building the snapshot is a loop over the table
/// (walseg's make_config) and the table can be checked against Config at compile time.
/// Tables that build no Config (tests') leave it empty.
struct ConfigField {
  enum class Kind { kNone, kBool, kInteger, kEnum };
  Kind kind = Kind::kNone;
  /// Copies the effective value of `def` from `registry` into its member of `config`; an
  /// integer in a memory unit is converted to bytes (Config's sizes are bytes).
  void (*store)(const Registry& registry, const SettingDef& def, Config& config) = nullptr;
  /// Integer members: the range of the member's type, in the member's unit (bytes for sizes).
  std::int64_t min = 0;
  std::uint64_t max = 0;
  /// Enum members: the enum's names in enumerator order (config.h's kEnumNames).
  std::span<const std::string_view> enum_names;
};

/// One table entry. `name` includes the registry's prefix ("walseg.segment_size").
struct SettingDef {
  std::string_view name;
  Context context;
  std::string_view description;
  std::variant<BoolSpec, IntSpec, RealSpec, StringSpec, EnumSpec> spec;
  ConfigField field = {};
  Hosts hosts = Hosts::kTool;
  /// What the setting means inside PostgreSQL (the extension's long description): what it
  /// does there, or which PostgreSQL setting applies instead. Empty if nothing to say.
  std::string_view postgres_note = {};
};

/// A parsed value: bool, integer in the base unit, real in the base unit, string, or for
/// enums the option's `value` (as std::int64_t).
using Value = std::variant<bool, std::int64_t, double, std::string>;

/// Where a file value was written; empty for defaults, -c and SET.
struct Origin {
  std::string file;
  int line = 0;
};

/// One row of SHOW ALL / pg_settings.
struct ShowRow {
  std::string name;
  std::string value;    ///< as SHOW prints it: "16MB", "on", "zero_write"
  std::string setting;  ///< in the base unit without it, as pg_settings.setting: "16384"
  std::string unit;     ///< base unit name ("kB") or ""
  std::string vartype;  ///< "bool", "integer", "real", "string", "enum"
  std::string source;   ///< source_name() of the effective value
  std::string sourcefile;
  int sourceline = 0;
  std::string context;
  std::string description;
  std::string min_val, max_val;          ///< integer and real settings, in the base unit
  std::vector<std::string> enum_values;  ///< enum settings
};

/// Setting-wide check over several settings; returns every violated rule.
using CrossCheck = std::vector<ConfigError> (*)(const Registry& registry);
/// Recomputes the defaults that depend on other settings' values (Registry::set_default), as
/// PostgreSQL's PGC_S_DYNAMIC_DEFAULT: called once the values of every source are in.
using DeriveDefaults = void (*)(Registry& registry);

class Registry {
 public:
  /// prefix: the namespace of this registry's names including the dot ("walseg."); names in
  /// files outside it belong to someone else. cross_check and derive_defaults may be null.
  Registry(std::span<const SettingDef> defs, std::string_view prefix,
           CrossCheck cross_check = nullptr, DeriveDefaults derive_defaults = nullptr);

  std::string_view prefix() const { return prefix_; }
  /// True if `name` is under prefix() (case-insensitive, like every GUC name).
  bool owns_name(std::string_view name) const;
  /// Definition by name, case-insensitive; nullptr if unknown.
  const SettingDef* find(std::string_view name) const;
  std::span<const SettingDef> definitions() const { return defs_; }

  /// Parses and validates `text` for `def` (type, unit, range, check hook) without storing.
  /// Errors carry parameter, message and hint but no location.
  std::variant<Value, ConfigError> parse_value(const SettingDef& def, std::string_view text) const;

  /// Stores `text` as the value from `source` while the caller is in `phase`. Returns the
  /// error, or nullopt when stored or when correctly ignored (a postmaster setting whose
  /// reloaded value does not change the effective value). Errors: unknown name, invalid or
  /// out-of-range value, and context ("cannot be changed without restarting the server",
  /// "cannot be changed now"). On error nothing changes.
  std::optional<ConfigError> set(std::string_view name, std::string_view text, Source source,
                                 Phase phase, Origin origin = {});
  /// Drops the value `source` gave, with the same context rules as set().
  std::optional<ConfigError> unset(std::string_view name, Source source, Phase phase);

  /// SET name = value at run time (session source).
  std::optional<ConfigError> set_session(std::string_view name, std::string_view text) {
    return set(name, text, Source::kSession, Phase::kRuntime);
  }
  /// RESET name: back to the value from before any SET.
  std::optional<ConfigError> reset(std::string_view name) {
    return unset(name, Source::kSession, Phase::kRuntime);
  }
  /// RESET ALL: drops every session value (settings that cannot be SET have none).
  void reset_all();

  /// The setting whose name is nearest `name` (case-insensitive edit distance at most 3, and
  /// less than half its length), for "did you mean": "" when none is that near.
  std::string closest_name(std::string_view name) const;

  /// SHOW name: nullopt if unknown. show_all(): every setting in table order.
  std::optional<ShowRow> show(std::string_view name) const;
  std::vector<ShowRow> show_all() const;

  /// Effective values. The name must exist and have that type: anything else is a
  /// programming error and throws std::logic_error.
  bool get_bool(std::string_view name) const;
  std::int64_t get_int(std::string_view name) const;
  double get_real(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;
  int get_enum(std::string_view name) const;
  Source source_of(std::string_view name) const;
  /// The value `source` gave, if it gave one (used by reload to find removed file settings).
  bool has_value_from(std::string_view name, Source source) const;

  /// Runs the cross check given at construction (none: no errors).
  std::vector<ConfigError> cross_check() const;

  /// Runs the DeriveDefaults given at construction (the loaders call it before cross_check).
  void derive_defaults();
  /// Replaces the default of `name` by `text` (SHOW then reports it with source "default");
  /// values from files, -c or SET still win over it. Throws std::logic_error for an unknown
  /// name or a value its own checks refuse: the derivation is the program's, not the user's.
  void set_default(std::string_view name, std::string_view text);

 private:
  struct Slot {
    Value value;
    Origin origin;
  };
  struct State {
    const SettingDef* def;
    std::array<std::optional<Slot>, kSourceCount> slots;  ///< indexed by Source
    const Slot& effective() const;
  };

  State* state(std::string_view name);
  const State* state(std::string_view name) const;
  const State& checked_state(std::string_view name) const;
  std::optional<ConfigError> check_context(const State& st, Phase phase, Source source,
                                           const std::optional<Slot>& replacement) const;

  std::span<const SettingDef> defs_;
  std::string prefix_;
  CrossCheck cross_check_;
  DeriveDefaults derive_defaults_;
  std::vector<State> states_;
};

/// SHOW's text for a value of `def` ("16MB", "on", "fdatasync").
std::string display_value(const SettingDef& def, const Value& value);

/// Levenshtein distance of two strings, bytes compared as they are (for "did you mean").
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace walseg::guc
