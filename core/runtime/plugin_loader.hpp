// Loading one plugin file: open it with Boost.DLL, find the entry point, check
// the API version and table, initialize it and count its devices. Every way
// this can fail becomes a reason string; nothing a plugin does crashes the host.
#pragma once

#include "runtime/loaded_plugin.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace accel::detail {

struct PluginLoadResult {
  std::unique_ptr<PluginLibrary> plugin;  // null when skipped
  std::string name;                       // the plugin's name when it told it
  std::string reason;                     // why it was skipped
};

// What the host accepts from a plugin: more devices, or longer strings, are
// a broken plugin (a count read from uninitialised memory), not hardware.
inline constexpr int32_t kMaxDevicesPerPlugin = 1024;
inline constexpr size_t kMaxDeviceTypeLength = 32;
inline constexpr size_t kMaxPluginTextLength = 4096;
inline constexpr int32_t kMaxDeviceProperties = 256;
inline constexpr size_t kMaxPluginNameLength = 64;

// The table's fields the host reads before calling the plugin: size, API
// version, name (bounded), the required functions, version text (bounded).
struct TableCheck {
  std::string problem;  // empty when the table is usable
  std::string name;     // as far as it was read
  std::string version;
};
TableCheck check_plugin_table(const AccelPluginApi& api, uint32_t minimum_minor);

// Describes every one of plugin.physical_device_count devices into
// plugin.devices, checking what the plugin hands over (type, bounded strings,
// property table); the reason when a device is bad, else "".
std::string describe_devices(PluginLibrary& plugin);

// Told the step about to run ("dlopen", "initialize", "physical_device_count",
// "physical_device_info"), so that whoever watches (the probe process) can
// say where a plugin crashed or hung.
using LoadStepObserver = void (*)(const char* step);

// `minimum_minor` is the oldest plugin API minor accepted (the host's by default).
PluginLoadResult load_plugin(const std::filesystem::path& path,
                             uint32_t minimum_minor = ACCEL_PLUGIN_API_MIN_MINOR,
                             LoadStepObserver observe_step = nullptr);

}  // namespace accel::detail
