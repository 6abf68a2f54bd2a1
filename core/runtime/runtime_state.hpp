// RuntimeState: the process-wide registry. It discovers plugins and their
// physical devices (phase one), then opens logical devices from the settings
// made through accel::config (phase two, "initialization"). After phase two
// the device lists never change, so lookups need no lock.
#pragma once

#include <accel/config.hpp>
#include <accel/runtime.hpp>

#include "runtime/loaded_plugin.hpp"
#include "runtime/logical_device.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace accel::detail {

struct PhysicalDeviceRecord {
  config::PhysicalDevice info;
  PluginLibrary* plugin = nullptr;
  int32_t plugin_index = 0;  // index among the plugin's own devices
  bool visible = true;
  std::optional<bool> memory_growth;
  std::vector<config::LogicalDeviceConfiguration> logical_configuration;
};

// One logical device as initialization opens it.
struct LogicalDevicePlan {
  PhysicalDeviceRecord* physical = nullptr;
  int32_t logical_index = 0;  // among its physical device's logical devices
  int32_t logical_count = 1;
  int32_t type_index = 0;     // the N of /device:GPU:N
  uint64_t memory_limit_bytes = 0;
};

class RuntimeState {
 public:
  static RuntimeState& instance();

  // Phase one: load plugins and list physical devices (idempotent).
  void discover();
  // Phase two: open logical devices (idempotent); discovers first if needed.
  void initialize();
  bool initialized() const noexcept { return initialized_.load(std::memory_order_acquire); }

  // Before discovery only.
  void require_plugin(const std::string& path);
  void add_plugin_path(const std::string& path);

  std::vector<runtime::LoadedPlugin> loaded_plugins();
  std::vector<runtime::SkippedPlugin> skipped_plugins();
  std::optional<runtime::PluginExtension> plugin_extension(std::string_view plugin_name,
                                                           std::string_view extension_name);

  // Physical-device settings; fail once initialized.
  std::vector<PhysicalDeviceRecord>& physical_devices();
  PhysicalDeviceRecord& physical_device(const config::PhysicalDevice& device);
  void check_not_initialized(const char* what) const;
  void set_require_accelerator(bool require) { require_accelerator_ = require; }

  // The logical devices initialize() opens, in its order (TensorFlow's: CPUs
  // first, then plugin order), from the physical devices' settings; opens
  // nothing (discovers first if needed).
  std::vector<LogicalDevicePlan> plan_logical_devices();

  // After initialize().
  const std::vector<std::unique_ptr<LogicalDevice>>& logical_devices();
  LogicalDevice* default_device();
  LogicalDevice* cpu_device();  // the first CPU device, for fallbacks (may be null)
  // Throws InvalidArgumentError for a malformed name, NotFoundError listing devices.
  LogicalDevice* find_device(std::string_view name);
  std::string device_list() const;

 private:
  RuntimeState() = default;
  void load_candidate(const std::string& path, bool required);
  void open_logical_devices();

  std::recursive_mutex mutex_;
  bool discovered_ = false;
  std::atomic<bool> initialized_{false};
  bool require_accelerator_ = false;
  std::vector<std::string> required_paths_;
  std::vector<std::string> extra_paths_;
  std::vector<std::string> seen_paths_;
  std::vector<std::unique_ptr<PluginLibrary>> plugins_;
  std::vector<std::unique_ptr<PluginLibrary>> rejected_;  // initialized, then refused (duplicates)
  std::vector<runtime::SkippedPlugin> skipped_;
  std::vector<PhysicalDeviceRecord> physical_;
  std::vector<std::unique_ptr<LogicalDevice>> logical_;
  LogicalDevice* default_device_ = nullptr;
  LogicalDevice* cpu_device_ = nullptr;
};

}  // namespace accel::detail
