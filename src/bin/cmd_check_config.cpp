// walseg check-config [FILE]: validates a settings file set (FILE or --config, with includes,
// plus any -c options) with the start rules, lists every error and exits 1 if there is one.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

#include "command.h"
#include "settings_options.h"
#include "walseg/guc_definitions.h"
#include "walseg/guc_file.h"

namespace walseg::tool {
namespace {

struct CheckOptions {
  SettingsOptions settings;
  std::string file;
};

// A file's names outside walseg.'s prefix are ignored, as PostgreSQL's for the server, so a
// mistyped prefix or a forgotten one made a setting vanish with "is valid" (the new-user
// trial: walsg.init_method = sparse, then create used zero_write). check-config says so for
// a name that is one of walseg's with another prefix close to walseg's, or with none when no
// PostgreSQL setting has that name (block_size, commit_delay, segment_size and wal_buffers are
// PostgreSQL's too).
std::vector<std::string> ignored_lookalikes(const guc::Registry& registry, const guc::ParsedFiles& files) {
  static const std::set<std::string> kPostgresNames = {"block_size", "commit_delay", "segment_size", "wal_buffers"};
  std::set<std::string> shorts;
  for (const auto& def : registry.definitions()) shorts.insert(std::string(def.name.substr(registry.prefix().size())));
  std::vector<std::string> out;
  for (const guc::ConfigItem& item : files.items) {
    if (registry.owns_name(item.name)) continue;
    std::string name = item.name;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::size_t dot = name.rfind('.');
    const std::string tail = dot == std::string::npos ? name : name.substr(dot + 1);
    if (!shorts.count(tail)) continue;
    const std::string prefix = std::string(registry.prefix());
    const bool lookalike = dot == std::string::npos
                               ? !kPostgresNames.count(tail)
                               : guc::edit_distance(name.substr(0, dot + 1), prefix) <= 2;
    if (lookalike)
      out.push_back(fmt::format("\"{}\" on line {} of \"{}\" is not a walseg setting and is ignored, as names "
                                "outside \"{}\" are: did you mean \"{}{}\"?",
                                item.name, item.line, item.file, prefix, prefix, tail));
  }
  return out;
}

void run(CheckOptions opts) {
  // One settings file per run: which of two would be checked is not for the tool to guess.
  // One file under two spellings (good.conf and ./good.conf) is one file.
  auto same = [](const std::string& x, const std::string& y) {
    std::error_code ec;
    return x == y || std::filesystem::equivalent(x, y, ec);
  };
  if (!opts.file.empty() && !opts.settings.config_file.empty() && !same(opts.file, opts.settings.config_file))
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
  // The file as read (the load above read it too, but keeps only walseg's names): for the
  // lookalike warnings and the count below.
  const std::optional<guc::ParsedFiles> parsed =
      opts.settings.config_file.empty() ? std::nullopt
                                        : std::optional<guc::ParsedFiles>(guc::parse_config_file(opts.settings.config_file));
  if (parsed)
    for (const auto& w : ignored_lookalikes(registry, *parsed)) fmt::print(stderr, "WARNING:  {}\n", w);
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
    // PostgreSQL's summary names the file; errors from -c alone are not the file's. A file that
    // could not be opened is the file's error, though no line carries it (the new-user trial:
    // "the -c settings contain errors" with no -c given).
    const auto from_c = [](const guc::ConfigError& e) { return e.from_command_line; };
    const bool only_c = !opts.settings.overrides.empty() && std::all_of(errors.begin(), errors.end(), from_c);
    if (!only_c && !opts.settings.config_file.empty() && report.summary == "settings contain errors")
      fmt::print(stderr, "FATAL:  configuration file \"{}\" contains errors\n", opts.settings.config_file);
    else if (only_c && !opts.settings.config_file.empty()) fmt::print(stderr, "FATAL:  the -c settings contain errors\n");
    else fmt::print(stderr, "FATAL:  {}\n", report.summary);
    exit_status() = 1;
    return;
  }
  if (opts.settings.config_file.empty()) {
    fmt::print("-c settings are valid ({} given)\n", opts.settings.overrides.size());
    return;
  }
  // What the file sets, whether or not a -c overrides it (the new-user trial: "0 walseg
  // settings set in it" for a file setting walseg.recycle that -c set again).
  std::set<std::string> in_file;
  for (const guc::ConfigItem& item : parsed->items)
    if (registry.owns_name(item.name) && registry.find(item.name) != nullptr) {
      std::string n = item.name;
      for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      in_file.insert(n);
    }
  const std::size_t from_file = in_file.size();
  const std::size_t from_c = opts.settings.overrides.size();
  fmt::print("configuration file \"{}\" is valid ({} walseg setting{} set in it){}\n", opts.settings.config_file,
             from_file, from_file == 1 ? "" : "s",
             from_c == 0 ? std::string() : fmt::format(", and so {} ({} given)", from_c == 1 ? "is the -c setting" : "are the -c settings", from_c));
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
