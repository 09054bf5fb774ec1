// TEMPORARY stand-in until the guc layer lands: defaults only.
#include "settings_options.h"

#include <stdexcept>

namespace walseg::tool {
void add_settings_options(CLI::App& cmd, SettingsOptions& opts) {
  cmd.add_option("--config", opts.config_file, "settings file (postgresql.conf syntax)");
  cmd.add_option("-c", opts.overrides, "set a setting, name=value (repeatable)");
}
Config load_config(const SettingsOptions& opts) {
  if (!opts.config_file.empty() || !opts.overrides.empty())
    throw std::runtime_error("settings are not implemented yet");
  return Config{};
}
}  // namespace walseg::tool
