// Applying settings to a Registry with PostgreSQL's rules for start and reload
// (ProcessConfigFile): which errors stop everything, which keep one setting's old value, and
// what gets reported.
//
// Common rules: of several lines setting one name the last wins (earlier ones are not even
// checked, as in PostgreSQL). Names outside the registry's prefix are skipped silently
// because the same file may be included into postgresql.conf; unknown names inside the
// prefix are errors.
//
// Start (load_at_start): the file set, then `-c name=value` options, over the defaults. Any
// error of any kind rejects everything: the registry is left untouched and every error found
// is returned, so one run shows all of them.
//
// Reload (reload), like SIGHUP in PostgreSQL:
//  * syntax or include errors, or unknown names: nothing is applied;
//  * an invalid value: that setting keeps its old value, the others are applied;
//  * a postmaster-context setting whose value changed: reported as "cannot be changed
//    without restarting the server" and not applied;
//  * a setting removed from the file goes back to its default (or -c value), noted as
//    "removed from configuration file, reset to default";
//  * XXX: walseg addition: if the result breaks a cross-setting rule (guc_definitions.h)
//    nothing is applied, because applying a subset could leave a combination nobody wrote.
// Each effective change is reported as `parameter "x" changed to "v"`.
//
// Not for: parsing (guc_file.h); the checks on one value (guc_registry.h).
// Thread-safety: functions of their arguments; the registry is modified in place only when
// the call succeeds (start) or per the rules above (reload), never partially on an exception.
// Lifetimes: nothing is retained; the registry copies every value and origin it keeps.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <utility>

#include "walseg/guc_file.h"
#include "walseg/guc_registry.h"

namespace walseg::guc {

struct LoadReport {
  std::vector<ConfigError> errors;
  std::vector<std::string> notes;    ///< LOG-level lines: skipped files, resets, changes
  std::vector<std::string> warnings; ///< WARNING-level lines: ParsedFiles::warnings
  std::vector<std::string> changed;  ///< names whose effective value changed
  /// PostgreSQL's closing line when there were errors: `configuration file "F" contains
  /// errors`, `...; unaffected changes were applied`, or `...; no changes were applied`.
  std::string summary;
  bool ok() const { return errors.empty(); }
};

/// Start: `files` (may be null: no settings file) then `overrides`, each "name=value" as
/// given to -c. All or nothing, see above.
LoadReport load_at_start(Registry& registry, const ParsedFiles* files,
                         std::span<const std::string> overrides);

/// The start rules over settings a host has already read (the PostgreSQL extension's GUCs):
/// each name = value set as from a file, then the defaults that follow other settings, then
/// the rules across settings except those that read a refused value, as load_at_start applies
/// them. Returns every error (empty: the walseg tool would accept the same values). `registry`
/// is changed only when there are none. Throws only std::bad_alloc.
std::vector<ConfigError> check_start_values(Registry& registry,
                                            std::span<const std::pair<std::string, std::string>> values);

/// Reload of the file set, with PostgreSQL's partial-apply rules above.
LoadReport reload(Registry& registry, const ParsedFiles& files);

}  // namespace walseg::guc
