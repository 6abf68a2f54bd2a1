#include "device_setup.hpp"

#include "strategy_factory.hpp"

#include <accel/config.hpp>
#include <accel/distribute/tpu_strategy.hpp>
#include <accel/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace accel::experiment {
namespace {

// "/job:localhost/replica:0/task:0/device:TPU:0" -> "TPU:0"; "GPU" stays "GPU".
std::string short_device(const std::string& name) {
  const auto marker = name.rfind("device:");
  std::string result = marker == std::string::npos ? name : name.substr(marker + 7);
  while (!result.empty() && result.front() == '/') result.erase(0, 1);
  return result;
}

std::string type_of(const std::string& short_name) { return short_name.substr(0, short_name.find(':')); }

bool options_match(const DeviceOptions& options, const config::PhysicalDevice& device) {
  const std::string wanted = short_device(options.device);
  if (wanted.find(':') == std::string::npos) return wanted == device.device_type;
  const std::string physical = device.name.substr(device.name.find("device:") + 7);  // "/physical_device:GPU:0"
  return physical == wanted;
}

}  // namespace

std::string short_device_name(const std::string& device) {
  const auto marker = device.rfind("device:");
  if (marker == std::string::npos) return device;
  std::string name = "/";
  name.append(device, marker + 7);
  return name;
}

std::string run_device_name(const RunConfig& run) {
  if (run.device) return "/" + short_device(*run.device);
  if (run.strategy && run.strategy->name == "one_device") {
    if (const Value* device = run.strategy->argument("device"); device && device->is_set()) {
      return "/" + short_device(device->as_text());
    }
  }
  // The default placement: the first needed accelerator type, else the CPU.
  for (const char* type : {"GPU", "TPU"}) {
    if (std::find(run.device_types_needed.begin(), run.device_types_needed.end(), type) !=
        run.device_types_needed.end()) {
      return fmt::format("/{}:0", type);
    }
  }
  return "/CPU:0";
}

std::string run_device_type(const RunConfig& run) { return type_of(run_device_name(run).substr(1)); }

std::string tpu_sim_overrides(const TpuSystem& system) {
  std::vector<std::string> fields;
  if (system.array_rows) fields.push_back(fmt::format("core.mxu.rows={}", *system.array_rows));
  if (system.array_columns) fields.push_back(fmt::format("core.mxu.columns={}", *system.array_columns));
  if (system.dataflow) fields.push_back("core.mxu.dataflow=" + *system.dataflow);
  for (const auto& [key, value] : system.hardware_overrides) fields.push_back(key + "=" + value);
  std::string text;
  for (const std::string& field : fields) text += (text.empty() ? "" : ";") + field;
  return text;
}

void apply_device_settings(const RunConfig& run) {
  if (run.tpu) {
    config::set_setting("tpu_sim.preset", run.tpu->preset_path.empty() ? run.tpu->preset : run.tpu->preset_path);
    config::set_setting("tpu_sim.overrides", tpu_sim_overrides(*run.tpu));
    config::set_setting("tpu_sim.mode", run.tpu->timing);
  }
  // The tpu strategy's slice (chips) is read when the emulator loads, which
  // the device listing below does: initialize it first.
  if (run.strategy && run.strategy->name == "tpu") distribute::initialize_tpu_system(make_tpu_resolver(*run.strategy));
  // Only the CPU (for data and fallbacks) and the run's own device type are
  // opened: a CPU run does not reserve emulated HBM or GPU memory.
  const std::string run_type = run_device_type(run);
  std::vector<config::PhysicalDevice> visible;
  for (const config::PhysicalDevice& device : config::list_physical_devices()) {
    if (device.device_type == "CPU" || device.device_type == run_type) visible.push_back(device);
  }
  config::set_visible_devices(visible);

  for (const DeviceOptions& options : run.devices) {
    for (const config::PhysicalDevice& device : visible) {
      if (!options_match(options, device)) continue;
      if (options.memory_growth) config::set_memory_growth(device, *options.memory_growth);
      std::vector<config::LogicalDeviceConfiguration> split;
      for (const auto& limit : options.logical_device_memory_limits) {
        split.push_back({limit ? std::optional<uint64_t>(*limit >> 20) : std::nullopt});
      }
      if (split.empty() && options.memory_limit_bytes) split.push_back({*options.memory_limit_bytes >> 20});
      if (!split.empty()) config::set_logical_device_configuration(device, split);
    }
  }
}

}  // namespace accel::experiment
