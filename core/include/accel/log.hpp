// The runtime's log for the libraries built on it (distribution,
// experiments): standard error, filtered by ACCEL_LOG_LEVEL (debug, info,
// warning, error; default warning), the same stream plugins log to.
#pragma once

#include <string_view>

namespace accel::log {

enum class Level { kDebug, kInfo, kWarning, kError };

void write(Level level, std::string_view message);
inline void info(std::string_view message) { write(Level::kInfo, message); }
inline void warning(std::string_view message) { write(Level::kWarning, message); }

}  // namespace accel::log
