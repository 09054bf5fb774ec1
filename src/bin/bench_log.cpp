// Bench's LOG lines during its scratch-WAL phases (bench_log.h).
#include "bench_log.h"

#include <cstdio>
#include <string>

#include "walseg/log.h"

namespace walseg::tool {
namespace {

// As the library's default sink (log.cpp): the tool has no other.
void print(LogLevel level, const std::string& msg, bool warnings_only) {
  if (level == LogLevel::kDebug2 || (warnings_only && level != LogLevel::kWarning)) return;
  std::fprintf(stderr, "%s:  %s\n", log_level_name(level), msg.c_str());
}

}  // namespace

BenchLogWarningsOnly::BenchLogWarningsOnly() {
  set_log_sink([](LogLevel level, const std::string& msg) { print(level, msg, true); });
}

BenchLogWarningsOnly::~BenchLogWarningsOnly() {
  set_log_sink([](LogLevel level, const std::string& msg) { print(level, msg, false); });
}

}  // namespace walseg::tool
