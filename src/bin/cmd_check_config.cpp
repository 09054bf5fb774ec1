// walseg check-config [FILE]: validates a settings file set (FILE or --config, with includes,
// plus any -c options) with the start rules, lists every error and exits 1 if there is one.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command.h"
#include "settings_options.h"
#include "walseg/guc_definitions.h"

namespace walseg::tool {
namespace {

struct CheckOptions {
  SettingsOptions settings;
  std::string file;
};

void run(CheckOptions opts) {
  // One settings file per run: which of two would be checked is not for the tool to guess.
  if (!opts.file.empty() && !opts.settings.config_file.empty() && opts.file != opts.settings.config_file)
    throw std::invalid_argument(fmt::format("check-config: give one settings file, FILE or --config (got \"{}\" and "
                                            "\"{}\"); check each in its own run, or include one from the other",
                                            opts.file, opts.settings.config_file));
  if (!opts.file.empty()) opts.settings.config_file = opts.file;
  // -c alone is checked too: what is wrong is then the -c option, not a file.
  if (opts.settings.config_file.empty() && opts.settings.overrides.empty()) {
    std::fprintf(stderr, "walseg: check-config needs a settings file (FILE or --config) or -c name=value\n");
    exit_status() = 2;
    return;
  }
  guc::Registry registry = guc::make_walseg_registry();
  guc::LoadReport report = apply_settings(opts.settings, registry);
  for (const auto& note : report.notes) fmt::print("LOG:  {}\n", note);
  for (const auto& w : report.warnings) fmt::print(stderr, "WARNING:  {}\n", w);
  // In the order of the files as they were read and of the lines in each, -c's last (the
  // new-user trial: a missing include on line 10 came first, then lines 8, 4, 5, ...).
  std::vector<guc::ConfigError> errors = report.errors;
  std::vector<std::string> files;
  for (const auto& e : errors)
    if (!e.file.empty() && std::find(files.begin(), files.end(), e.file) == files.end()) files.push_back(e.file);
  auto place = [&](const guc::ConfigError& e) {
    const auto f = std::find(files.begin(), files.end(), e.file);
    return std::pair{e.file.empty() ? files.size() : static_cast<std::size_t>(f - files.begin()), e.line};
  };
  std::stable_sort(errors.begin(), errors.end(),
                   [&](const guc::ConfigError& a, const guc::ConfigError& b) { return place(a) < place(b); });
  for (const auto& e : errors) fmt::print(stderr, "ERROR:  {}\n", e.to_string());
  if (!report.ok()) {
    // PostgreSQL's summary names the file; errors from -c alone are not the file's.
    const bool any_from_file = std::any_of(errors.begin(), errors.end(), [](const auto& e) { return !e.file.empty(); });
    if (any_from_file || opts.settings.config_file.empty()) fmt::print(stderr, "FATAL:  {}\n", report.summary);
    else fmt::print(stderr, "FATAL:  the -c settings contain errors\n");
    exit_status() = 1;
    return;
  }
  if (opts.settings.config_file.empty()) {
    fmt::print("-c settings are valid ({} given)\n", opts.settings.overrides.size());
    return;
  }
  int from_file = 0;
  for (const auto& row : registry.show_all())
    if (!row.sourcefile.empty()) ++from_file;
  fmt::print("configuration file \"{}\" is valid ({} walseg setting{} set in it)\n",
             opts.settings.config_file, from_file, from_file == 1 ? "" : "s");
}

RegisterCommand reg("check-config", [](CLI::App& app) {
  auto opts = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand("check-config", "validate a settings file and its includes");
  cmd->add_option("file", opts->file, "settings file (default: --config)");
  add_settings_options(*cmd, opts->settings);
  cmd->callback([opts] { run(*opts); });
});

}  // namespace
}  // namespace walseg::tool
