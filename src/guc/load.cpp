// Start and reload rules (include/walseg/guc_load.h).
#include "walseg/guc_load.h"

#include <map>
#include <optional>
#include <set>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "text_util.h"

namespace walseg::guc {

namespace {

struct Selection {
  std::vector<const ConfigItem*> items;  ///< last occurrence of each known name, file order
  std::vector<ConfigError> unknown;      ///< names under the prefix that are not settings
};

Selection select_items(const Registry& registry, const ParsedFiles& files) {
  Selection out;
  std::map<std::string, std::size_t> last;  // lower-cased name -> index of its last line
  for (std::size_t i = 0; i < files.items.size(); ++i) {
    const ConfigItem& item = files.items[i];
    if (!registry.owns_name(item.name)) continue;  // someone else's (postgresql.conf)
    if (registry.find(item.name) == nullptr) {
      ConfigError e;
      e.kind = ErrorKind::kUnknownParameter;
      e.file = item.file;
      e.line = item.line;
      e.parameter = item.name;
      e.message = fmt::format("unrecognized configuration parameter \"{}\" in file \"{}\" line {}",
                              detail::printable_cut(item.name), item.file, item.line);
      if (const std::string near = registry.closest_name(item.name); !near.empty())
        e.hint = fmt::format("Did you mean \"{}\"?", near);
      out.unknown.push_back(std::move(e));
      continue;
    }
    last[detail::to_lower(item.name)] = i;
  }
  for (std::size_t i = 0; i < files.items.size(); ++i) {
    auto it = last.find(detail::to_lower(files.items[i].name));
    if (it != last.end() && it->second == i) out.items.push_back(&files.items[i]);
  }
  return out;
}

ConfigError located(ConfigError e, const ConfigItem& item) {
  e.file = item.file;
  e.line = item.line;
  return e;
}

// PostgreSQL names the file holding an error in its closing line; else the top file.
std::string error_file(const std::vector<ConfigError>& errors, const std::string& top) {
  for (auto it = errors.rbegin(); it != errors.rend(); ++it)
    if (!it->file.empty()) return it->file;
  return top;
}

// A rule's error is located where its settings came from: the first of them (the one it is
// about, then the other) set in a file gives file and line; one set by -c is named with it.
// The name -c gives (dashes for underscores, as PostgreSQL's ParseLongOption), and its value,
// blanks around both dropped: "-c 'walseg.segment_size = 1MB'" copied from a postgresql.conf
// line means what the line means there.
std::pair<std::string, std::string_view> split_override(std::string_view opt, std::size_t eq) {
  auto trim = [](std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
  };
  std::string name(trim(opt.substr(0, eq)));
  for (char& c : name)
    if (c == '-') c = '_';
  return {std::move(name), trim(opt.substr(eq + 1))};
}

// What -c said for `name` (the last one wins), as typed.
std::optional<std::string_view> typed_override(std::span<const std::string> overrides, std::string_view name) {
  std::optional<std::string_view> typed;
  for (const std::string& opt : overrides)
    if (std::size_t eq = opt.find('='); eq != std::string::npos) {
      auto [n, v] = split_override(opt, eq);
      if (detail::iequals(n, name)) typed = v;
    }
  return typed;
}

// Names where the rule's first setting came from (file and line, or -c as typed, with the
// value it gave when that reads differently: "-c walseg.max_size=20, that is 20MB"); a
// setting the rule reads at its default is said in the hint, since nobody wrote it.
ConfigError locate_cross(const Registry& next, ConfigError e, std::span<const std::string> overrides) {
  std::string defaults;
  for (const std::string& name : e.reads)
    if (next.source_of(name) == Source::kDefault)
      if (const auto row = next.show(name))
        defaults += fmt::format("\"{}\" is {}, its default. ", name, row->value);
  e.hint = defaults + e.hint;
  for (const std::string& name : e.reads) {
    const auto row = next.show(name);
    if (!row) continue;
    if (!row->sourcefile.empty()) {
      e.file = row->sourcefile;
      e.line = row->sourceline;
      return e;
    }
    if (next.source_of(name) == Source::kCommandLine) {
      const std::string shown(detail::printable_cut(row->value));
      const std::optional<std::string_view> typed = typed_override(overrides, name);
      const std::string as_typed = typed ? std::string(detail::printable_cut(*typed)) : shown;
      e.message += as_typed == shown ? fmt::format(" (-c {}={})", name, shown)
                                     : fmt::format(" (-c {}={}, that is {})", name, as_typed, shown);
      e.from_command_line = true;
      return e;
    }
  }
  return e;
}

// The error that refused a value the rule reads, if any: the value left in its place is not
// what anybody wrote, so the rule would judge the wrong combination.
ConfigError* refusal_read_by(const ConfigError& rule, std::vector<ConfigError>& errors) {
  for (ConfigError& e : errors)
    for (const std::string& name : rule.reads)
      if (!e.parameter.empty() && detail::iequals(e.parameter, name)) return &e;
  return nullptr;
}

// A rule left out is said on the refusal, so that fixing the value brings no new error by
// surprise: check-config promises every error in one run.
void say_not_checked(ConfigError& refusal, const ConfigError& rule) {
  if (!refusal.hint.empty()) refusal.hint += ' ';
  refusal.hint += fmt::format(
      "A rule across settings is not checked until this value is valid (it fails with the default in "
      "its place): {}.", rule.message);
}

// A number with a leading zero ("010", "-07kB") is octal to PostgreSQL's parse_int (strtol
// with base 0), and so to walseg: 010 is 8. Taken as PostgreSQL takes it, but said, since
// digits copied from a segment file name or typed with padding mean something else to a user.
void warn_if_octal(const Registry& next, std::string_view name, std::string_view value, const std::string& where,
                   LoadReport& report) {
  std::size_t i = 0;
  while (i < value.size() && (value[i] == ' ' || value[i] == '\t')) ++i;
  if (i < value.size() && (value[i] == '+' || value[i] == '-')) ++i;
  if (i + 1 >= value.size() || value[i] != '0' || value[i + 1] < '0' || value[i + 1] > '9') return;
  std::size_t j = i + 1;
  while (j < value.size() && value[j] >= '0' && value[j] <= '9') ++j;
  if (j < value.size() && (value[j] == '.' || value[j] == 'e' || value[j] == 'E')) return;  // a decimal real
  std::size_t first = i;
  while (first + 1 < j && value[first] == '0') ++first;
  if (j - first == 1) return;  // "07": octal and decimal agree
  const auto shown = next.show(name);
  if (!shown) return;
  report.warnings.push_back(fmt::format("{} = {}{} is read as an octal number, giving {}, as PostgreSQL reads a leading "
                                        "zero; write it without the leading zero for decimal",
                                        name, detail::printable_cut(std::string(value)), where, shown->value));
}

void apply_items(Registry& next, const Selection& sel, Phase phase, LoadReport& report) {
  for (const ConfigItem* item : sel.items) {
    if (auto err = next.set(item->name, item->value, Source::kFile, phase,
                            Origin{item->file, item->line}))
      report.errors.push_back(located(std::move(*err), *item));
    else
      warn_if_octal(next, item->name, item->value, fmt::format(" (file \"{}\" line {})", item->file, item->line),
                    report);
  }
}

void apply_overrides(Registry& next, std::span<const std::string> overrides, LoadReport& report) {
  for (const std::string& opt : overrides) {
    std::size_t eq = opt.find('=');
    if (eq == std::string::npos) {
      ConfigError e;
      e.parameter = opt;
      // Round 23 L1: `-c ''` read "-c  requires a value", with a gap where the name goes.
      e.message = opt.empty() ? std::string("-c needs name=value, and was given an empty value")
                              : fmt::format("-c {} requires a value", opt);
      e.from_command_line = true;
      report.errors.push_back(std::move(e));
      continue;
    }
    const auto [name, value] = split_override(opt, eq);
    if (auto err = next.set(name, value, Source::kCommandLine, Phase::kStartup)) {
      // `-c segment_size=1MB`: the prefix forgotten (a new user's trial).
      err->message += " (from -c)";  // not from the file the summary names
      err->from_command_line = true;
      const std::string prefixed = std::string(next.prefix()) + name;
      if (!next.owns_name(name) && next.find(prefixed) != nullptr && err->hint.empty())
        err->hint = fmt::format("walseg's settings are named with the prefix \"{}\": did you mean \"{}\"?",
                                next.prefix(), prefixed);
      if (err->kind == ErrorKind::kUnknownParameter && err->hint.empty()) {
        if (const std::string near = next.closest_name(name); !near.empty())
          err->hint = fmt::format("Did you mean \"{}\"?", near);
        else  // -c takes walseg's settings only (new-user trial 17)
          err->hint = fmt::format("-c sets walseg's own settings, all named {}*; `walseg show` lists them.",
                                  next.prefix());
      }
      report.errors.push_back(std::move(*err));
    } else {
      warn_if_octal(next, name, value, " (from -c)", report);
    }
  }
}

// Notes and names for every setting whose effective value differs between the two.
void report_changes(const Registry& before, const Registry& after, LoadReport& report) {
  for (const auto& def : after.definitions()) {
    std::string old_value = before.show(def.name)->value;
    std::string new_value = after.show(def.name)->value;
    if (old_value == new_value) continue;
    report.changed.emplace_back(def.name);
    report.notes.push_back(fmt::format("parameter \"{}\" changed to \"{}\"", def.name,
                                       detail::printable_cut(new_value)));
  }
}

// The end of every start: the derived defaults, then the rules across settings, with the
// other errors (check-config lists them all in one run), except those that read a refused value.
void finish_start(Registry& next, std::vector<ConfigError>& errors, std::span<const std::string> overrides = {}) {
  next.derive_defaults();
  for (ConfigError& e : next.cross_check()) {
    if (ConfigError* refusal = refusal_read_by(e, errors))
      say_not_checked(*refusal, e);
    else
      errors.push_back(locate_cross(next, std::move(e), overrides));
  }
}

}  // namespace

std::vector<ConfigError> check_start_values(Registry& registry,
                                            std::span<const std::pair<std::string, std::string>> values) {
  Registry next = registry;
  std::vector<ConfigError> errors;
  for (const auto& [name, value] : values)
    if (auto e = next.set(name, value, Source::kFile, Phase::kStartup)) errors.push_back(std::move(*e));
  finish_start(next, errors);
  if (errors.empty()) registry = std::move(next);
  return errors;
}

LoadReport load_at_start(Registry& registry, const ParsedFiles* files,
                         std::span<const std::string> overrides) {
  LoadReport report;
  Registry next = registry;
  std::string top;
  if (files != nullptr) {
    top = files->top_file;
    report.errors = files->errors;
    report.notes = files->notes;
    report.warnings = files->warnings;
    Selection sel = select_items(next, *files);
    report.errors.insert(report.errors.end(), sel.unknown.begin(), sel.unknown.end());
    apply_items(next, sel, Phase::kStartup, report);
  }
  apply_overrides(next, overrides, report);
  finish_start(next, report.errors, overrides);
  if (!report.errors.empty()) {
    std::string file = error_file(report.errors, top);
    report.summary = file.empty() ? "settings contain errors"
                                  : fmt::format("configuration file \"{}\" contains errors", file);
    return report;
  }
  // No "changed to" notes at start: as in PostgreSQL, only a reload reports changes.
  registry = std::move(next);
  return report;
}

LoadReport reload(Registry& registry, const ParsedFiles& files) {
  LoadReport report;
  report.errors = files.errors;
  report.notes = files.notes;
  report.warnings = files.warnings;
  Selection sel = select_items(registry, files);
  report.errors.insert(report.errors.end(), sel.unknown.begin(), sel.unknown.end());
  auto nothing_applied = [&] {
    report.summary = fmt::format("configuration file \"{}\" contains errors; no changes were applied",
                                 error_file(report.errors, files.top_file));
    return report;
  };
  if (!report.errors.empty()) return nothing_applied();

  Registry next = registry;
  std::set<std::string> in_file;
  for (const ConfigItem* item : sel.items) in_file.insert(detail::to_lower(item->name));
  for (const auto& def : next.definitions()) {
    if (!next.has_value_from(def.name, Source::kFile) || in_file.count(detail::to_lower(def.name)))
      continue;
    if (auto err = next.unset(def.name, Source::kFile, Phase::kReload))
      report.errors.push_back(std::move(*err));
    else
      report.notes.push_back(fmt::format(
          "parameter \"{}\" removed from configuration file, reset to default", def.name));
  }
  apply_items(next, sel, Phase::kReload, report);
  next.derive_defaults();
  if (auto cross = next.cross_check(); !cross.empty()) {
    report.errors.insert(report.errors.end(), cross.begin(), cross.end());
    return nothing_applied();
  }
  report_changes(registry, next, report);
  registry = std::move(next);
  if (!report.errors.empty())
    report.summary = fmt::format(
        "configuration file \"{}\" contains errors; unaffected changes were applied",
        error_file(report.errors, files.top_file));
  return report;
}

}  // namespace walseg::guc
