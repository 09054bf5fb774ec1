// libFuzzer target for the settings-file parser (guc_file.h) and, through the items it
// yields, the value parsers (guc_value.h) and the start/reload rules (guc_load.h).
//
// The input is the main file. Includes resolve in a MemorySource that also serves the input
// under conf.d/, plus a file that includes the main file back, so include cycles, include_dir
// and nesting are reachable from any input without touching the disk.
// Besides crashes and sanitizer reports, the target aborts when a property fails:
//  * every error has a message and every item a setting name and a line >= 1;
//  * an integer printed the way SHOW prints it parses back to the same integer, in every
//    base unit, and a value the registry accepted re-parses from its SHOW text unchanged.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS
#include <cstdint>
#include <cstdlib>
#include <string>

#include "walseg/guc_definitions.h"
#include "walseg/guc_file.h"
#include "walseg/guc_load.h"
#include "walseg/guc_value.h"

using namespace walseg::guc;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

constexpr Unit kUnits[] = {Unit::kNone,         Unit::kBytes,   Unit::kKilobytes, Unit::kMegabytes,
                           Unit::kMilliseconds, Unit::kSeconds, Unit::kMinutes};

void check_value_round_trips(const std::string& value) {
  for (Unit u : kUnits) {
    auto p = parse_int(value, u);
    if (p.value) {
      auto back = parse_int(format_int(*p.value, u), u);
      check(back.value && *back.value == *p.value);
    }
    (void)parse_real(value, u);
  }
  (void)parse_bool(value);
}

void check_registry_round_trips(const Registry& registry) {
  for (const auto& def : registry.definitions()) {
    auto row = registry.show(def.name);
    check(row.has_value());
    auto again = registry.parse_value(def, row->value);
    check(std::holds_alternative<Value>(again));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  MemorySource source;
  source.add_file("/fuzz/main.conf", text);
  source.add_file("/fuzz/inc.conf", "walseg.recycle = off\ninclude_if_exists 'nothing.conf'\n");
  source.add_file("/fuzz/conf.d/10-self.conf", text);
  source.add_file("/fuzz/conf.d/20-back.conf", "include '../main.conf'\n");

  ParsedFiles files = parse_config_text(text, "/fuzz/main.conf", source);
  for (const auto& e : files.errors) check(!e.message.empty() && !e.to_string().empty());
  for (const auto& item : files.items) {
    check(!item.name.empty() && item.line >= 1);
    check_value_round_trips(item.value);
  }

  Registry registry = make_walseg_registry();
  LoadReport start = load_at_start(registry, &files, {});
  check(start.ok() || !start.summary.empty());
  check_registry_round_trips(registry);
  LoadReport again = reload(registry, files);
  check(again.ok() || !again.summary.empty());
  check_registry_round_trips(registry);
  return 0;
}
