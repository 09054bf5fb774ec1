// Bench's LOG lines during its scratch-WAL phases (bench_log.h).
#include "bench_log.h"

#include <memory>
#include <regex>
#include <set>
#include <string>

#include "walseg/log.h"

namespace walseg::tool {

BenchLogWarningsOnly::BenchLogWarningsOnly() {
  // Each WARNING once per kind: every commit row opens a scratch WAL of its own, and the same
  // advice about the filesystem came once per row, four times over (new-user trial 5, btrfs).
  // The quoted paths differ from row to row, so they do not make a warning new.
  auto seen = std::make_shared<std::set<std::string>>();
  set_log_sink([print = default_log_sink(), seen](LogLevel level, const std::string& msg) {
    if (level != LogLevel::kWarning) return;
    static const std::regex quoted("\"[^\"]*\"");
    if (seen->insert(std::regex_replace(msg, quoted, "\"\"")).second) print(level, msg);
  });
}

BenchLogWarningsOnly::~BenchLogWarningsOnly() { set_log_sink(default_log_sink()); }

}  // namespace walseg::tool
