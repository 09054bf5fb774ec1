// walseg show [NAME|all]: the effective settings after --config and -c, as PostgreSQL's SHOW
// and pg_settings give them (value as SHOW prints it, the stored setting and its base unit,
// source, file:line for file values, context, description).
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.h"
#include "settings_options.h"
#include "walseg/guc_definitions.h"

namespace walseg::tool {
namespace {

struct ShowOptions {
  SettingsOptions settings;
  std::string name = "all";
  bool value_only = false;
};

std::vector<std::string> columns(const guc::ShowRow& r) {
  std::string where = r.sourcefile.empty() ? "" : fmt::format("{}:{}", r.sourcefile, r.sourceline);
  return {r.name, r.value, r.setting, r.unit, r.source, where, r.context, r.description};
}

// psql's aligned format: a header, a rule, one line per row, and the row count.
void print_table(const std::vector<guc::ShowRow>& rows) {
  std::vector<std::vector<std::string>> lines = {
      {"name", "value", "setting", "unit", "source", "sourcefile:line", "context", "description"}};
  for (const auto& r : rows) lines.push_back(columns(r));
  std::vector<std::size_t> width(lines[0].size(), 0);
  for (const auto& l : lines)
    for (std::size_t i = 0; i < l.size(); ++i) width[i] = std::max(width[i], l[i].size());
  auto print_line = [&](const std::vector<std::string>& l) {
    std::string out;
    for (std::size_t i = 0; i < l.size(); ++i) {
      bool last = i + 1 == l.size();
      out += last ? fmt::format(" {}", l[i]) : fmt::format(" {:<{}} |", l[i], width[i]);
    }
    fmt::print("{}\n", out);
  };
  print_line(lines[0]);
  std::string rule;
  for (std::size_t i = 0; i < width.size(); ++i) rule += std::string(width[i] + 2, '-') + (i + 1 < width.size() ? "+" : "");
  fmt::print("{}\n", rule);
  for (std::size_t i = 1; i < lines.size(); ++i) print_line(lines[i]);
  fmt::print("({} row{})\n", rows.size(), rows.size() == 1 ? "" : "s");
}

void run(const ShowOptions& opts) {
  guc::Registry registry = load_registry(opts.settings);
  std::vector<guc::ShowRow> rows;
  if (opts.name == "all" || opts.name == "ALL") {
    rows = registry.show_all();
  } else if (auto row = registry.show(opts.name)) {
    rows.push_back(std::move(*row));
  } else {
    // A name not accepted is a usage error (README: exit status), as in check-config; the
    // prefix forgotten gets -c's hint (the new-user trial: `show segment_size`).
    const std::string prefixed = std::string(registry.prefix()) + opts.name;
    const bool forgot_prefix = !registry.owns_name(opts.name) && registry.find(prefixed) != nullptr;
    throw std::invalid_argument(fmt::format("unrecognized configuration parameter \"{}\" ({})", opts.name,
                                            forgot_prefix ? fmt::format("did you mean \"{}\"?", prefixed)
                                                          : std::string("walseg show all lists them")));
  }
  if (opts.value_only) {
    for (const auto& r : rows) fmt::print("{}\n", r.value);
    return;
  }
  print_table(rows);
}

RegisterCommand reg("show", [](CLI::App& app) {
  auto opts = std::make_shared<ShowOptions>();
  CLI::App* cmd = app.add_subcommand("show", "show settings as PostgreSQL's SHOW / pg_settings");
  cmd->add_option("name", opts->name, "setting name, or all (default)");
  cmd->add_flag("--value-only", opts->value_only, "print only the value(s), as SHOW does");
  add_settings_options(*cmd, opts->settings);
  cmd->callback([opts] { run(*opts); });
});

}  // namespace
}  // namespace walseg::tool
