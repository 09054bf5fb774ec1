// The settings options every walseg subcommand takes: --config FILE and repeatable
// -c name=value, and the Config they produce (issue: settings).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "walseg/config.h"

namespace walseg::tool {

struct SettingsOptions {
  std::string config_file;              ///< --config FILE ("" = none)
  std::vector<std::string> overrides;   ///< each -c name=value, in order
};

/// Adds --config and -c to a subcommand, storing into opts (which must outlive the parse).
void add_settings_options(CLI::App& cmd, SettingsOptions& opts);

/// Defaults < settings file < -c overrides. Throws std::runtime_error whose what() lists every
/// error found (file, line, parameter, value), one per line.
Config load_config(const SettingsOptions& opts);

}  // namespace walseg::tool
