// The runtime's stderr logger (see logging.hpp).
#include "runtime/logging.hpp"

#include <accel/log.hpp>

#include "runtime/settings.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <memory>

namespace accel::detail {
namespace {

spdlog::level::level_enum level_from_setting() {
  std::string level = get_setting("log_level").value_or("warning");
  if (level == "debug") return spdlog::level::debug;
  if (level == "info") return spdlog::level::info;
  if (level == "error") return spdlog::level::err;
  return spdlog::level::warn;
}

}  // namespace

spdlog::logger& runtime_log() {
  // Never destroyed: plugins may log while the process exits.
  static spdlog::logger* logger = [] {
    auto* created = new spdlog::logger("accel", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    created->set_level(level_from_setting());
    return created;
  }();
  return *logger;
}

}  // namespace accel::detail

namespace accel::log {

void write(Level level, std::string_view message) {
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::info,
                                                          spdlog::level::warn, spdlog::level::err};
  detail::runtime_log().log(kLevels[static_cast<int>(level)], "{}", message);
}

}  // namespace accel::log
