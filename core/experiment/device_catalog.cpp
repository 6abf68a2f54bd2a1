// DeviceCatalog from the runtime's plugins, or a fixed one for tests.
#include <accel/config.hpp>
#include <accel/experiment/experiment_loader.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>

#include <algorithm>
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

DeviceCatalog fixed_device_catalog(std::map<std::string, int> available) {
  DeviceCatalog catalog;
  catalog.available = std::move(available);
  fill_known_and_reasons(catalog, "");
  return catalog;
}

}  // namespace accel::experiment
