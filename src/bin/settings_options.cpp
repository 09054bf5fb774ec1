// --config / -c for every subcommand (settings_options.h).
#include "settings_options.h"

#include <sys/stat.h>

#include <cstdio>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "tool_util.h"
#include "walseg/guc_definitions.h"
#include "walseg/error.h"
#include "walseg/guc_file.h"
#include "walseg/wal_control.h"

namespace walseg::tool {

void add_settings_options(CLI::App& cmd, SettingsOptions& opts) {
  // One file, as postgres's config_file: a second one is refused in words, not CLI11's "At Most
  // 1 required but received 2" (the new-user trial), with what to do instead.
  cmd.add_option_function<std::vector<std::string>>(
         "--config",
         [&opts](const std::vector<std::string>& files) {
           if (files.size() > 1)
             throw CLI::ValidationError(
                 "--config", fmt::format("given {} times (\"{}\" and \"{}\"): walseg reads one settings file; put "
                                         "\"include '{}'\" in \"{}\" to read both, later lines winning",
                                         files.size(), files[0], files[1], files[1], files[0]));
           if (files.front().empty())
             throw CLI::ValidationError("--config", "an empty value names no file");
           opts.config_file = files.front();
         },
         "settings file (postgresql.conf syntax)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  // One value per -c, so that `-c a=1 FILE` leaves FILE to the positional argument.
  cmd.add_option("-c", opts.overrides, "set a setting, name=value (repeatable)")
      ->allow_extra_args(false);
}

guc::LoadReport apply_settings(const SettingsOptions& opts, guc::Registry& registry) {
  std::optional<guc::ParsedFiles> files;
  if (!opts.config_file.empty()) files = guc::parse_config_file(opts.config_file);
  return guc::load_at_start(registry, files ? &*files : nullptr, opts.overrides);
}

namespace {

// A WAL's segment size, page size and append mode are fixed when it is made and kept in its
// walseg.control, as PostgreSQL keeps wal_segment_size in pg_control: they become the defaults,
// so a WAL made with -c walseg.segment_size=1MB is written again without it (the new-user
// trial: every later run refused until the setting was given again). A setting given by the
// user still wins, and one that contradicts the WAL is refused by the open.
void defaults_from_control(guc::Registry& registry, const std::string& wal_dir) {
  // Only a directory with a control file is read: the failpoints count the opens of the
  // WAL's own open from the first one on (tests/lazyfs/storage_faults_test.sh's open=crash@1).
  struct stat st{};
  if (::stat((wal_dir + "/" + kControlFileName).c_str(), &st) != 0) return;
  std::optional<WalControl> c;
  try {
    c = read_control(wal_dir);
  } catch (const Error&) {
    return;  // missing directory, unreadable or damaged control file: the open says so
  }
  if (!c) return;
  registry.set_default("walseg.segment_size", std::to_string(c->segment_size_bytes >> 10) + "kB");
  registry.set_default("walseg.block_size", std::to_string(c->block_size_bytes));
  if (c->append_mode && !append_mode(static_cast<InitMethod>(registry.get_enum("walseg.init_method"))))
    registry.set_default("walseg.init_method", to_string(InitMethod::kNone));
}

}  // namespace

guc::Registry load_registry(const SettingsOptions& opts, const std::string& wal_dir) {
  guc::Registry registry = guc::make_walseg_registry();
  if (!wal_dir.empty()) defaults_from_control(registry, wal_dir);
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

SettingsOptions with_segment_size_option(const SettingsOptions& opts, const std::string& text, std::uint64_t* bytes) {
  *bytes = 0;
  if (text.empty()) return opts;
  *bytes = parse_segment_size_option("--segment-size", text);
  check_segment_size(*bytes);
  // A -c walseg.segment_size given too would win over --segment-size, which comes first: two
  // sizes on one command line are refused rather than one silently dropped (break-it round 30).
  for (const std::string& o : opts.overrides) {
    guc::Registry one = guc::make_walseg_registry();
    if (!apply_settings(SettingsOptions{"", {o}}, one).ok()) continue;  // the load names a bad value
    const auto row = one.show("walseg.segment_size");
    if (!row || row->source == "default") continue;
    const std::uint64_t set = guc::make_config(one).segment_size_bytes;
    if (set != *bytes)
      throw std::invalid_argument(fmt::format("--segment-size {} and -c {} give two segment sizes ({} and {}): give "
                                              "one of them",
                                              text, o, format_size(*bytes), format_size(set)));
  }
  SettingsOptions with = opts;
  with.overrides.insert(with.overrides.begin(), fmt::format("walseg.segment_size={}kB", *bytes / 1024));
  return with;
}

Config load_config(const SettingsOptions& opts, const std::string& wal_dir) {
  return guc::make_config(load_registry(opts, wal_dir));
}

void warn_if_not_the_wals_segment_size(std::uint64_t given, const std::string& how, std::uint64_t wals) {
  if (given == 0 || given == wals) return;
  std::fprintf(stderr, "WARNING:  %s is not this WAL's segment size: its walseg.control says %s segments, and those "
                       "are what is read\n", how.c_str(), format_size(wals).c_str());
}

std::uint64_t segment_size_set_in(const guc::Registry& registry) {
  const auto row = registry.show("walseg.segment_size");
  return row && row->source != "default" ? guc::make_config(registry).segment_size_bytes : 0;
}

void refuse_segment_size_option_against_wal(const std::string& text, std::uint64_t bytes, const std::string& wal_dir) {
  std::optional<WalControl> c;
  try {
    c = read_control(wal_dir);
  } catch (const Error&) {
    return;
  }
  if (!c || c->segment_size_bytes == bytes) return;
  throw std::invalid_argument(fmt::format("--segment-size {}: the WAL in \"{}\" has {} segments ({}), and it is "
                                          "written in those; leave --segment-size out (an existing WAL's size is "
                                          "used) or give --segment-size {}",
                                          text, wal_dir, format_size(c->segment_size_bytes), kControlFileName,
                                          format_size(c->segment_size_bytes)));
}

}  // namespace walseg::tool
