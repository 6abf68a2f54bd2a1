// The host side of the plugin API (see host_api.hpp).
#include "runtime/host_api.hpp"

#include "runtime/logging.hpp"
#include "runtime/logical_device.hpp"
#include "runtime/profiler_state.hpp"
#include "runtime/settings.hpp"
#include "runtime/status.hpp"


namespace accel::detail {
namespace {

AccelStatus* status_create(AccelStatusCode code, const char* message) { return create_status(code, message); }

void log(AccelLogLevel level, const char* plugin_name, const char* message) {
  const char* plugin = plugin_name != nullptr ? plugin_name : "plugin";
  const char* text = message != nullptr ? message : "";
  switch (level) {
    case ACCEL_LOG_DEBUG: runtime_log().debug("[{}] {}", plugin, text); break;
    case ACCEL_LOG_INFO: runtime_log().info("[{}] {}", plugin, text); break;
    case ACCEL_LOG_WARNING: runtime_log().warn("[{}] {}", plugin, text); break;
    default: runtime_log().error("[{}] {}", plugin, text); break;
  }
}

void report_op(void* host_context, const AccelOpProfile* profile) {
  if (host_context == nullptr || profile == nullptr) return;
  record_op_profile(*static_cast<LogicalDevice*>(host_context), *profile);
}

const char* get_setting_for_plugin(const char* key) { return get_setting_c_string(key); }

}  // namespace

const AccelHostApi* host_api() {
  static const AccelHostApi api = {
      sizeof(AccelHostApi), ACCEL_PLUGIN_API_MAJOR, ACCEL_PLUGIN_API_MINOR,
      &status_create, &log, &report_op, &get_setting_for_plugin,
  };
  return &api;
}

}  // namespace accel::detail
