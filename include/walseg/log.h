// A minimal log sink so the library can say what it did (method fallbacks, removed leftovers)
// without choosing where messages go: the tool prints to stderr, the PostgreSQL extension maps
// levels to elog at its boundary. Levels follow PostgreSQL's: DEBUG2 for routine file work, LOG
// for notable events, WARNING for things a DBA should change.
//
// Thread-safety: log() may be called from any thread; set_log_sink() should be called before
// other threads start and the sink must be thread-safe.
#pragma once

#include <functional>
#include <string>

namespace walseg {

enum class LogLevel { kDebug2, kLog, kWarning };

using LogSink = std::function<void(LogLevel, const std::string&)>;

/// Replaces the sink (default: default_log_sink()).
void set_log_sink(LogSink sink);
/// The sink in place until set_log_sink(): LOG and WARNING to stderr as `LEVEL:  message`,
/// DEBUG2 dropped. A host that filters for a while wraps it and sets it back afterwards.
LogSink default_log_sink();
void log(LogLevel level, const std::string& message);
const char* log_level_name(LogLevel level);

}  // namespace walseg
