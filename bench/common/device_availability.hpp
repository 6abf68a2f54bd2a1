// Whether the device a benchmark was asked to run on exists here, and if not,
// why: a GPU benchmark on a machine without a GPU prints
// "skipped: no GPU: <reason>" (the CUDA plugin's own reason, as `accel devices`
// lists it) and exits 0 instead of failing.
#pragma once

#include <accel/config.hpp>
#include <accel/device.hpp>
#include <accel/runtime.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace accel::bench {

// Nullopt when the physical device behind `device_name` ("/GPU:0") exists;
// otherwise "no GPU: cuda plugin reports zero devices: no CUDA driver" or the
// like. Lists physical devices only, so settings that must precede device
// opening (memory growth, runtime settings read at open) can still follow.
inline std::optional<std::string> missing_device_reason(std::string_view device_name) {
  const DeviceName name = DeviceName::parse(device_name);
  const auto devices = config::list_physical_devices(name.type);
  const int32_t index = name.index < 0 ? 0 : name.index;
  if (static_cast<size_t>(index) < devices.size()) return std::nullopt;
  const std::string what = "no " + name.type + ": ";
  if (!devices.empty()) {
    return what + std::string(device_name) + " asked for, " + std::to_string(devices.size()) + " found";
  }
  // The plugin that would have provided the device tells why it has none.
  const std::string plugin = name.type == "GPU" ? "cuda" : name.type == "TPU" ? "tpu_sim" : "cpu";
  for (const runtime::SkippedPlugin& skipped : runtime::skipped_plugins()) {
    if (skipped.name == plugin) return what + plugin + " plugin " + skipped.reason;
  }
  return what + "no " + plugin + " plugin was found (ACCEL_PLUGIN_PATH, or a build without it)";
}

// The physical device behind `device_name` ("/GPU:0": the first GPU); call
// after missing_device_reason said it exists.
inline config::PhysicalDevice physical_device(std::string_view device_name) {
  const DeviceName name = DeviceName::parse(device_name);
  return config::list_physical_devices(name.type).at(static_cast<size_t>(name.index < 0 ? 0 : name.index));
}

}  // namespace accel::bench
