// Bench's LOG lines during its scratch-WAL phases (bench_log.h).
#include "bench_log.h"

#include <string>

#include "walseg/log.h"

namespace walseg::tool {

BenchLogWarningsOnly::BenchLogWarningsOnly() {
  set_log_sink([print = default_log_sink()](LogLevel level, const std::string& msg) {
    if (level == LogLevel::kWarning) print(level, msg);
  });
}

BenchLogWarningsOnly::~BenchLogWarningsOnly() { set_log_sink(default_log_sink()); }

}  // namespace walseg::tool
