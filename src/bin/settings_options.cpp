// --config / -c for every subcommand (settings_options.h).
#include "settings_options.h"

#include <cstdio>
#include <optional>

#include "walseg/guc_definitions.h"
#include "walseg/guc_file.h"

namespace walseg::tool {

void add_settings_options(CLI::App& cmd, SettingsOptions& opts) {
  cmd.add_option("--config", opts.config_file, "settings file (postgresql.conf syntax)");
  // One value per -c, so that `-c a=1 FILE` leaves FILE to the positional argument.
  cmd.add_option("-c", opts.overrides, "set a setting, name=value (repeatable)")
      ->allow_extra_args(false);
}

guc::LoadReport apply_settings(const SettingsOptions& opts, guc::Registry& registry) {
  std::optional<guc::ParsedFiles> files;
  if (!opts.config_file.empty()) files = guc::parse_config_file(opts.config_file);
  return guc::load_at_start(registry, files ? &*files : nullptr, opts.overrides);
}

guc::Registry load_registry(const SettingsOptions& opts) {
  guc::Registry registry = guc::make_walseg_registry();
  guc::LoadReport report = apply_settings(opts, registry);
  for (const auto& w : report.warnings) std::fprintf(stderr, "WARNING:  %s\n", w.c_str());
  if (!report.ok()) {
    guc::ConfigError summary;
    summary.message = report.summary;
    report.errors.push_back(std::move(summary));
    throw guc::ConfigException(std::move(report.errors));
  }
  return registry;
}

Config load_config(const SettingsOptions& opts) { return guc::make_config(load_registry(opts)); }

}  // namespace walseg::tool
