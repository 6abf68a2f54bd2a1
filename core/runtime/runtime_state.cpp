// The process-wide registry of plugins and devices (see runtime_state.hpp).
#include "runtime/runtime_state.hpp"

#include "runtime/logging.hpp"
#include "runtime/plugin_discovery.hpp"
#include "runtime/plugin_loader.hpp"
#include "runtime/plugin_probe.hpp"
#include "runtime/settings.hpp"
#include "runtime/status.hpp"

#include <accel/device.hpp>
#include <accel/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace accel::detail {
namespace {

std::string canonical(const std::string& path) {
  std::error_code error;
  auto resolved = std::filesystem::weakly_canonical(path, error);
  return error ? path : resolved.string();
}

// The plugins that ship with accel, by name, and the device type each one
// alone may provide (nullptr: none reserved). Another plugin taking one of
// these names, or the CPU type, would displace or renumber the real ones:
// whatever order discovery finds files in, CPU:0 is the bundled CPU plugin's.
struct BundledPlugin {
  const char* name;
  const char* reserved_type;
};
constexpr BundledPlugin kBundledPlugins[] = {{"cpu", "CPU"}, {"cuda", nullptr}, {"tpu_sim", nullptr}};

// Whether `path` (canonical) lies in one of the folders accel's own plugins
// are installed in (beside the library or the program, the install folder),
// as opposed to a folder a user named (ACCEL_PLUGIN_PATH, --plugin, YAML).
bool in_bundled_folder(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().string();
  for (const PluginLocation& location : default_plugin_locations()) {
    if (!location.named_by_user && canonical(location.path.string()) == folder) return true;
  }
  return false;
}

// Why `plugin` may not load as it is (a reserved name or type), or "".
std::string reserved_name_or_type(const PluginLibrary& plugin) {
  const bool bundled = in_bundled_folder(plugin.path);
  for (const BundledPlugin& reserved : kBundledPlugins) {
    if (plugin.name == reserved.name && !bundled) {
      return fmt::format("the name '{}' belongs to accel's bundled plugin; a plugin from {} must choose another",
                         plugin.name, std::filesystem::path(plugin.path).parent_path().string());
    }
    if (reserved.reserved_type == nullptr || (plugin.name == reserved.name && bundled)) continue;
    for (const DescribedDevice& device : plugin.devices) {
      if (device.type == reserved.reserved_type) {
        return fmt::format("device type {} is reserved for accel's bundled {} plugin; name the device type after "
                           "your hardware",
                           device.type, reserved.name);
      }
    }
  }
  return {};
}


}  // namespace

RuntimeState& RuntimeState::instance() {
  // Never destroyed: plugins are never unloaded and may call back during exit.
  static auto* state = new RuntimeState();
  return *state;
}

void RuntimeState::require_plugin(const std::string& path) {
  std::lock_guard lock(mutex_);
  if (discovered_) {
    throw FailedPreconditionError("require_plugin(" + path + ") called after plugins were discovered");
  }
  required_paths_.push_back(path);
}

void RuntimeState::add_plugin_path(const std::string& path) {
  std::lock_guard lock(mutex_);
  if (discovered_) {
    throw FailedPreconditionError("add_plugin_path(" + path + ") called after plugins were discovered");
  }
  extra_paths_.push_back(path);
}

void RuntimeState::load_candidate(const std::string& path, bool required) {
  std::string resolved = canonical(path);
  if (std::find(seen_paths_.begin(), seen_paths_.end(), resolved) != seen_paths_.end()) return;
  seen_paths_.push_back(resolved);

  // A new or changed file is loaded in a probe process first: what crashes,
  // hangs or eats memory there is skipped here without being loaded.
  const ProbeVerdict verdict = plugin_verdict(resolved, ACCEL_PLUGIN_API_MIN_MINOR);
  PluginLoadResult result = verdict.safe ? load_plugin(resolved) : PluginLoadResult{nullptr, {}, verdict.reason};
  if (result.plugin != nullptr) {
    if (std::string reason = reserved_name_or_type(*result.plugin); !reason.empty()) {
      result.reason = std::move(reason);
      rejected_.push_back(std::move(result.plugin));  // stays loaded: plugins are never unloaded
    }
  }
  if (result.plugin != nullptr) {
    auto same_name = std::find_if(plugins_.begin(), plugins_.end(),
                                  [&](const auto& plugin) { return plugin->name == result.name; });
    if (same_name != plugins_.end()) {
      result.reason = fmt::format("duplicate plugin name '{}' (already loaded from {})", result.name,
                                  (*same_name)->path);
      rejected_.push_back(std::move(result.plugin));  // stays loaded: plugins are never unloaded
    }
  }
  if (result.plugin == nullptr) {
    if (required) {
      throw FailedPreconditionError(fmt::format("required plugin {} failed to load: {}", path, result.reason));
    }
    runtime_log().debug("skipping plugin {}: {}", resolved, result.reason);
    skipped_.push_back({resolved, result.name, result.reason});
    return;
  }

  PluginLibrary* plugin = result.plugin.get();
  plugins_.push_back(std::move(result.plugin));
  std::map<std::string, int32_t> type_counts;
  for (const auto& record : physical_) ++type_counts[record.info.device_type];
  for (int32_t index = 0; index < plugin->physical_device_count; ++index) {
    const DescribedDevice& device = plugin->devices[static_cast<size_t>(index)];
    PhysicalDeviceRecord record;
    record.plugin = plugin;
    record.plugin_index = index;
    record.info.device_type = device.type;
    record.info.name = fmt::format("/physical_device:{}:{}", device.type, type_counts[device.type]++);
    record.info.plugin = plugin->name;
    record.info.description = device.description;
    record.info.memory_bytes = device.memory_bytes;
    record.info.properties = device.properties;
    physical_.push_back(std::move(record));
  }
}

void RuntimeState::discover() {
  std::lock_guard lock(mutex_);
  if (discovered_) return;
  for (const std::string& path : required_paths_) load_candidate(path, true);
  for (const std::string& path : extra_paths_) {
    for (const auto& file : plugin_files_in(path)) load_candidate(file.string(), false);
  }
  for (const PluginLocation& location : default_plugin_locations()) {
    std::error_code error;
    if (location.named_by_user && !std::filesystem::exists(location.path, error)) {
      skipped_.push_back({location.path.string(), "", "no such file or folder (from ACCEL_PLUGIN_PATH)"});
      continue;
    }
    for (const auto& file : plugin_files_in(location.path)) load_candidate(file.string(), false);
  }
  discovered_ = true;
}

std::vector<runtime::LoadedPlugin> RuntimeState::loaded_plugins() {
  discover();
  std::lock_guard lock(mutex_);
  std::vector<runtime::LoadedPlugin> result;
  for (const auto& plugin : plugins_) {
    result.push_back({plugin->name, plugin->path, plugin->version, plugin->api->api_major,
                      plugin->api->api_minor, plugin->physical_device_count});
  }
  return result;
}

std::vector<runtime::SkippedPlugin> RuntimeState::skipped_plugins() {
  discover();
  std::lock_guard lock(mutex_);
  return skipped_;
}

std::optional<runtime::PluginExtension> RuntimeState::plugin_extension(std::string_view plugin_name,
                                                                      std::string_view extension_name) {
  discover();
  std::lock_guard lock(mutex_);
  for (const auto& plugin : plugins_) {
    if (plugin->name != plugin_name || !plugin->has(&AccelPluginApi::get_extension)) continue;
    std::string name(extension_name);
    const void* table = plugin->api->get_extension(plugin->context, name.c_str());
    if (table == nullptr) return std::nullopt;
    return runtime::PluginExtension{table, plugin->context};
  }
  return std::nullopt;
}

std::vector<PhysicalDeviceRecord>& RuntimeState::physical_devices() {
  discover();
  return physical_;
}

PhysicalDeviceRecord& RuntimeState::physical_device(const config::PhysicalDevice& device) {
  for (auto& record : physical_devices()) {
    if (record.info.name == device.name) return record;
  }
  std::string known;
  for (const auto& record : physical_) known += (known.empty() ? "" : ", ") + record.info.name;
  throw NotFoundError(fmt::format("no physical device {}; physical devices: {}", device.name, known));
}

void RuntimeState::check_not_initialized(const char* what) const {
  if (initialized()) {
    throw FailedPreconditionError(fmt::format(
        "{}: physical devices cannot be modified after being initialized (the runtime initializes "
        "on the first tensor, op or logical device listing)",
        what));
  }
}

void RuntimeState::initialize() {
  if (initialized()) return;
  std::lock_guard lock(mutex_);
  if (initialized()) return;
  discover();
  open_logical_devices();
  initialized_.store(true, std::memory_order_release);
}

std::vector<LogicalDevicePlan> RuntimeState::plan_logical_devices() {
  discover();
  std::lock_guard lock(mutex_);
  std::vector<LogicalDevicePlan> plans;
  std::map<std::string, int32_t> type_counts;
  // TensorFlow lists CPU devices first; keep that order, then plugin order.
  std::vector<PhysicalDeviceRecord*> order;
  for (auto& record : physical_) if (record.info.device_type == "CPU") order.push_back(&record);
  for (auto& record : physical_) if (record.info.device_type != "CPU") order.push_back(&record);
  for (PhysicalDeviceRecord* record : order) {
    if (!record->visible) continue;
    std::vector<config::LogicalDeviceConfiguration> configurations = record->logical_configuration;
    if (configurations.empty()) configurations.emplace_back();
    for (size_t logical = 0; logical < configurations.size(); ++logical) {
      LogicalDevicePlan& plan = plans.emplace_back();
      plan.physical = record;
      plan.logical_index = static_cast<int32_t>(logical);
      plan.logical_count = static_cast<int32_t>(configurations.size());
      plan.type_index = type_counts[record->info.device_type]++;
      plan.memory_limit_bytes = configurations[logical].memory_limit_mib.value_or(0) * 1024ull * 1024ull;
    }
  }
  return plans;
}

void RuntimeState::open_logical_devices() {
  bool require = require_accelerator_ || setting_is_true("require_accelerator");
  // TensorFlow's TF_FORCE_GPU_ALLOW_GROWTH: growth for every device not set explicitly,
  // so that several processes can share one GPU (a test suite run side by side).
  const bool force_growth = setting_is_true("force_gpu_allow_growth");
  std::vector<std::unique_ptr<LogicalDevice>> opened;
  for (const LogicalDevicePlan& plan : plan_logical_devices()) {
    PhysicalDeviceRecord* record = plan.physical;
    std::string options = get_setting(record->plugin->name + ".device_options").value_or("");
    AccelDeviceOptions device_options{};
    device_options.struct_size = sizeof(device_options);
    device_options.physical_index = record->plugin_index;
    device_options.logical_index = plan.logical_index;
    device_options.logical_count = plan.logical_count;
    device_options.memory_limit_bytes = plan.memory_limit_bytes;
    device_options.memory_growth = record->memory_growth.value_or(force_growth) ? 1 : 0;
    device_options.options = options.c_str();
    auto device = std::make_unique<LogicalDevice>(record->plugin, record->info.device_type, plan.type_index,
                                                  record->info.name, record->plugin_index, plan.memory_limit_bytes);
    device_options.host_context = device.get();
    AccelDevice* handle = nullptr;
    check_status(record->plugin->api->device_open(record->plugin->context, &device_options, &handle),
                 fmt::format("plugin '{}' opening {}", record->plugin->name, device->name()));
    device->attach(handle);
    opened.push_back(std::move(device));
  }

  logical_ = std::move(opened);
  default_device_ = nullptr;
  cpu_device_ = nullptr;
  for (const char* preferred : {"GPU", "TPU", "CPU"}) {
    for (const auto& device : logical_) {
      if (device->type() == preferred) {
        if (default_device_ == nullptr) default_device_ = device.get();
        break;
      }
    }
    if (default_device_ != nullptr) break;
  }
  for (const auto& device : logical_) {
    if (device->type() == "CPU") { cpu_device_ = device.get(); break; }
  }
  if (default_device_ == nullptr && !logical_.empty()) default_device_ = logical_.front().get();

  bool has_accelerator = std::any_of(logical_.begin(), logical_.end(),
                                     [](const auto& device) { return device->type() != "CPU"; });
  if (require && !has_accelerator) {
    std::string reasons;
    for (const auto& skip : skipped_) {
      reasons += fmt::format("\n  {} ({}): {}", skip.path, skip.name.empty() ? "?" : skip.name, skip.reason);
    }
    logical_.clear();
    throw FailedPreconditionError(
        "an accelerator is required (require_accelerator) but no GPU or TPU device was found; "
        "skipped plugins:" + (reasons.empty() ? std::string(" none") : reasons));
  }
  if (logical_.empty()) {
    throw FailedPreconditionError("no devices: no plugin with devices was found" +
                                  std::string(skipped_.empty() ? "" : "; see `accel devices` for skipped plugins"));
  }
}

const std::vector<std::unique_ptr<LogicalDevice>>& RuntimeState::logical_devices() {
  initialize();
  return logical_;
}

LogicalDevice* RuntimeState::default_device() {
  initialize();
  return default_device_;
}

LogicalDevice* RuntimeState::cpu_device() {
  initialize();
  return cpu_device_;
}

std::string RuntimeState::device_list() const {
  std::string list;
  for (const auto& device : logical_) list += (list.empty() ? "" : ", ") + device->name();
  return list;
}

LogicalDevice* RuntimeState::find_device(std::string_view text) {
  DeviceName name = DeviceName::parse(text);
  initialize();
  if (!name.job.empty() && name.job != "localhost") {
    throw NotFoundError(fmt::format("device {} is on job '{}', but this process is job 'localhost'; devices: {}",
                                    text, name.job, device_list()));
  }
  if ((name.replica > 0) || (name.task > 0)) {
    throw NotFoundError(fmt::format("device {} names replica {} task {}, but only replica 0 task 0 exist "
                                    "here; devices: {}", text, name.replica, name.task, device_list()));
  }
  for (const auto& device : logical_) {
    if (device->type() == name.type && (name.index < 0 ? 0 : name.index) == device->index()) return device.get();
  }
  throw NotFoundError(fmt::format("no device {}; devices: {}", text, device_list()));
}

}  // namespace accel::detail
