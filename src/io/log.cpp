// Log sink (include/walseg/log.h).
#include "walseg/log.h"

#include <cstdio>
#include <mutex>

namespace walseg {
namespace {
std::mutex mu;
LogSink& sink() {
  static LogSink s = default_log_sink();
  return s;
}
}  // namespace

LogSink default_log_sink() {
  return [](LogLevel level, const std::string& msg) {
    if (level == LogLevel::kDebug2) return;
    std::fprintf(stderr, "%s:  %s\n", log_level_name(level), msg.c_str());
  };
}

void set_log_sink(LogSink s) {
  std::lock_guard lk(mu);
  sink() = std::move(s);
}

void log(LogLevel level, const std::string& message) {
  std::lock_guard lk(mu);
  sink()(level, message);
}

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug2: return "DEBUG2";
    case LogLevel::kLog: return "LOG";
    case LogLevel::kWarning: return "WARNING";
  }
  return "LOG";
}

}  // namespace walseg
