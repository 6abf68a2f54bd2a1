// DeviceCatalog from the runtime's plugins, or a fixed one for tests.
#include <accel/config.hpp>
#include <accel/experiment/experiment_loader.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>

#include <accel/error.hpp>

#include <algorithm>
#include <filesystem>
#include <mutex>

namespace accel::experiment {
namespace {

const std::vector<std::string> kBuiltinTypes{"CPU", "GPU", "TPU"};

void fill_known_and_reasons(DeviceCatalog& catalog, const std::string& skipped) {
  catalog.known_types = kBuiltinTypes;
  for (const auto& [type, count] : catalog.available) {
    if (std::find(catalog.known_types.begin(), catalog.known_types.end(), type) == catalog.known_types.end()) {
      catalog.known_types.push_back(type);
    }
  }
  for (const auto& type : catalog.known_types) {
    if (catalog.available.contains(type)) continue;
    catalog.absence_reasons[type] =
        skipped.empty() ? fmt::format("no loaded plugin provides {}; `accel devices` lists plugins", type)
                        : fmt::format("no loaded plugin provides {}; skipped plugins: {}", type, skipped);
  }
}

}  // namespace

DeviceCatalog runtime_device_catalog() {
  static std::once_flag once;
  static DeviceCatalog catalog;
  std::call_once(once, [] {
    std::string skipped;
    try {
      for (const auto& device : config::list_physical_devices()) ++catalog.available[device.device_type];
      for (const auto& plugin : runtime::skipped_plugins()) {
        skipped += fmt::format("{}{} ({})", skipped.empty() ? "" : ", ",
                               plugin.name.empty() ? plugin.path : plugin.name, plugin.reason);
      }
    } catch (const std::exception& error) {
      skipped = std::string("the runtime did not start: ") + error.what();
    }
    if (skipped.size() > 300) skipped = skipped.substr(0, 297) + "...";
    fill_known_and_reasons(catalog, skipped);
  });
  return catalog;
}

DeviceCatalog validated_device_catalog() {
  DeviceCatalog catalog;
  catalog.known_types = kBuiltinTypes;
  catalog.any_type = true;
  return catalog;
}

void register_run_plugins(const RunConfig& run) {
  for (const PluginReference& plugin : run.plugins) {
    try {
      if (plugin.required) {
        runtime::require_plugin(plugin.path);
      } else {
        runtime::add_plugin_path(plugin.path);
      }
    } catch (const FailedPreconditionError&) {
      // Discovery already ran in this process: fine if that plugin is loaded.
      std::error_code error;
      const std::string wanted = std::filesystem::weakly_canonical(plugin.path, error).string();
      bool loaded = false;
      for (const runtime::LoadedPlugin& each : runtime::loaded_plugins()) {
        loaded = loaded || std::filesystem::weakly_canonical(each.path, error).string() == wanted;
      }
      if (!loaded && plugin.required) {
        throw ExperimentError(plugin.where, fmt::format("plugin '{}' cannot be loaded: this process already "
                                                        "discovered its plugins without it",
                                                        plugin.path),
                              "the experiment run in a new process (accel run does this)");
      }
    }
  }
}

DeviceCatalog fixed_device_catalog(std::map<std::string, int> available) {
  DeviceCatalog catalog;
  catalog.available = std::move(available);
  fill_known_and_reasons(catalog, "");
  return catalog;
}

}  // namespace accel::experiment
