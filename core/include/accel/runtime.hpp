// The runtime's plugin registry as a user sees it: which plugins loaded, which
// were skipped and why, how to add plugins before initialization, and the
// logical devices initialization will open.
#pragma once

#include <accel/config.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct AccelPluginContext;

namespace accel::runtime {

struct LoadedPlugin {
  std::string name;
  std::string path;
  std::string version;
  uint32_t api_major = 0;
  uint32_t api_minor = 0;
  int32_t physical_devices = 0;
};

struct SkippedPlugin {
  std::string path;
  std::string name;    // empty when the file never told its name
  std::string reason;  // "missing entry point accel_get_plugin_api", ...
};

// A plugin that must load: a failure is an error, not a skip. Call before the
// runtime discovers plugins (the first device listing, tensor or op).
void require_plugin(const std::string& path);
// Extra search locations, searched after required plugins and before ACCEL_PLUGIN_PATH.
void add_plugin_path(const std::string& path);

std::vector<LoadedPlugin> loaded_plugins();
std::vector<SkippedPlugin> skipped_plugins();

// The logical devices as config::list_logical_devices gives them, without
// opening any when the runtime has not initialized yet: from the physical
// devices, their visibility and logical device configurations. A listing that
// leaves the GPUs alone (no context made, no memory reserved), as `accel
// devices` prints; a device that cannot open shows at initialization instead.
std::vector<config::LogicalDevice> planned_logical_devices();

// Data moved because an op ran on the CPU in place of a device lacking it.
struct FallbackStats {
  uint64_t ops = 0;
  uint64_t bytes_to_cpu = 0;
  uint64_t bytes_from_cpu = 0;
};
FallbackStats fallback_stats();

// A loaded plugin's extension table (AccelPluginApi.get_extension) with the
// plugin context its functions take; nullopt when the plugin is not loaded or
// does not offer the extension. Example: the TPU emulator's "accel.tpu_sim.v1".
struct PluginExtension {
  const void* table = nullptr;
  AccelPluginContext* context = nullptr;
};
std::optional<PluginExtension> plugin_extension(std::string_view plugin_name, std::string_view extension_name);

// Waits for every op issued on every device.
void synchronize();

}  // namespace accel::runtime
