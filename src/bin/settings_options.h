// The settings options every walseg subcommand takes: --config FILE and repeatable
// -c name=value, and the settings they produce, with the start rules of guc_load.h (any error
// rejects everything and every error is reported).
//
// Thread-safety: call from main's thread only. Lifetimes: `opts` must outlive the CLI parse.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "walseg/config.h"
#include "walseg/guc_load.h"
#include "walseg/guc_registry.h"

namespace walseg::tool {

struct SettingsOptions {
  std::string config_file;             ///< --config FILE ("" = none)
  std::vector<std::string> overrides;  ///< each -c name=value, in order
};

/// Adds --config and -c to a subcommand, storing into opts (which must outlive the parse).
void add_settings_options(CLI::App& cmd, SettingsOptions& opts);

/// Applies defaults < settings file (with includes) < -c overrides to `registry` and returns
/// the report without throwing: errors, notes and PostgreSQL's summary line. `registry` is
/// changed only when the report has no errors.
guc::LoadReport apply_settings(const SettingsOptions& opts, guc::Registry& registry);

/// The walseg registry after apply_settings. Throws guc::ConfigException (a
/// std::runtime_error) whose what() lists every error found, one per line.
/// wal_dir: a WAL directory whose walseg.control, if it has a readable one, gives the defaults
/// of what a WAL fixes when it is made (walseg.segment_size, walseg.block_size, and
/// walseg.init_method = none for an append-mode WAL), as pg_control gives wal_segment_size;
/// "" for none.
guc::Registry load_registry(const SettingsOptions& opts, const std::string& wal_dir = "");

/// `opts` with a command's `--segment-size TEXT` given as walseg.segment_size, below the
/// settings file and every -c, so that the settings that follow the segment size
/// (walseg.min_size, max_size: five and 64 segments) follow this one too, as with -c (the
/// new-user trial: bench's --segment-size 1MB kept 16MB's 80MB min_size; break-it round 23 M2:
/// write's and create's). The value is parsed and checked first (parse_segment_size_option:
/// std::invalid_argument naming the option); "" returns opts unchanged. `*bytes` gets the size,
/// or 0 for "".
SettingsOptions with_segment_size_option(const SettingsOptions& opts, const std::string& text, std::uint64_t* bytes);

/// make_config(load_registry(opts, wal_dir)); throws as load_registry.
Config load_config(const SettingsOptions& opts, const std::string& wal_dir = "");

/// `--segment-size TEXT` (as `bytes`) for the WAL in `wal_dir`: throws std::invalid_argument (a
/// usage error, before anything is opened) when its walseg.control says another size, naming the
/// option given rather than the setting (the new-user trial: "set walseg.segment_size = 1MB" for
/// a --segment-size typed). Nothing without a readable control file: the open decides then.
void refuse_segment_size_option_against_wal(const std::string& text, std::uint64_t bytes, const std::string& wal_dir);

/// For the commands that only read a WAL (ls, dump, recover), which take the segment size
/// from its walseg.control: a WARNING on stderr when the user set another one (`given`, in
/// bytes, named by `how`: "--segment-size 1MB", "walseg.segment_size"), saying which is used
/// (the new-user trial: a contradicting size was ignored without a word, while write and
/// create refuse it).
void warn_if_not_the_wals_segment_size(std::uint64_t given, const std::string& how, std::uint64_t wals);

/// The walseg.segment_size `registry` has from a settings file or -c, in bytes; 0 when it is
/// the default.
std::uint64_t segment_size_set_in(const guc::Registry& registry);

}  // namespace walseg::tool
