// The accel::runtime functions (see accel/runtime.hpp).
#include <accel/runtime.hpp>

#include "runtime/runtime_state.hpp"

namespace accel::runtime {

void require_plugin(const std::string& path) { detail::RuntimeState::instance().require_plugin(path); }
void add_plugin_path(const std::string& path) { detail::RuntimeState::instance().add_plugin_path(path); }
std::vector<LoadedPlugin> loaded_plugins() { return detail::RuntimeState::instance().loaded_plugins(); }
std::vector<SkippedPlugin> skipped_plugins() { return detail::RuntimeState::instance().skipped_plugins(); }

std::vector<config::LogicalDevice> planned_logical_devices() {
  detail::RuntimeState& state = detail::RuntimeState::instance();
  if (state.initialized()) return config::list_logical_devices();
  std::vector<config::LogicalDevice> devices;
  for (const detail::LogicalDevicePlan& plan : state.plan_logical_devices()) {
    const std::string& type = plan.physical->info.device_type;
    config::LogicalDevice& device = devices.emplace_back();
    device.name = detail::LogicalDevice::name_for(type, plan.type_index);
    device.device_type = type;
    device.physical_device = plan.physical->info.name;
    if (plan.memory_limit_bytes != 0) device.memory_limit_bytes = plan.memory_limit_bytes;
  }
  return devices;
}

std::optional<PluginExtension> plugin_extension(std::string_view plugin_name, std::string_view extension_name) {
  return detail::RuntimeState::instance().plugin_extension(plugin_name, extension_name);
}

void synchronize() {
  for (const auto& device : detail::RuntimeState::instance().logical_devices()) device->synchronize();
}

}  // namespace accel::runtime
