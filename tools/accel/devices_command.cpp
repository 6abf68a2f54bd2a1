// `accel devices`: what the runtime found, and why anything was skipped.
#include "commands.hpp"

#include <accel/config.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace accel::cli {
namespace {

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, units[unit]);
}

nlohmann::json devices_json() {
  nlohmann::json result;
  result["physical_devices"] = nlohmann::json::array();
  for (const auto& device : config::list_physical_devices()) {
    result["physical_devices"].push_back({{"name", device.name}, {"device_type", device.device_type},
                                          {"plugin", device.plugin}, {"description", device.description},
                                          {"memory_bytes", device.memory_bytes}, {"properties", device.properties}});
  }
  result["logical_devices"] = nlohmann::json::array();
  for (const auto& device : runtime::planned_logical_devices()) {
    nlohmann::json entry = {{"name", device.name}, {"device_type", device.device_type},
                            {"physical_device", device.physical_device}};
    if (device.memory_limit_bytes) entry["memory_limit_bytes"] = *device.memory_limit_bytes;
    result["logical_devices"].push_back(std::move(entry));
  }
  result["plugins"] = nlohmann::json::array();
  for (const auto& plugin : runtime::loaded_plugins()) {
    result["plugins"].push_back({{"name", plugin.name}, {"path", plugin.path}, {"version", plugin.version},
                                 {"api_version", fmt::format("{}.{}", plugin.api_major, plugin.api_minor)},
                                 {"physical_devices", plugin.physical_devices}});
  }
  result["skipped_plugins"] = nlohmann::json::array();
  for (const auto& skipped : runtime::skipped_plugins()) {
    result["skipped_plugins"].push_back({{"path", skipped.path}, {"name", skipped.name}, {"reason", skipped.reason}});
  }
  return result;
}

void print_devices() {
  std::printf("Physical devices:\n");
  for (const auto& device : config::list_physical_devices()) {
    std::printf("  %-24s %-5s %-10s %10s  %s\n", device.name.c_str(), device.device_type.c_str(),
                device.plugin.c_str(), human_bytes(device.memory_bytes).c_str(), device.description.c_str());
    // Every property the plugin reports (docs/plugin-guide.md section 5), one per line.
    for (const auto& [key, value] : device.properties) std::printf("      %s: %s\n", key.c_str(), value.c_str());
  }
  std::printf("Logical devices:\n");
  for (const auto& device : runtime::planned_logical_devices()) {
    std::string limit = device.memory_limit_bytes ? " (limit " + human_bytes(*device.memory_limit_bytes) + ")" : "";
    std::printf("  %s%s\n", device.name.c_str(), limit.c_str());
  }
  std::printf("Plugins:\n");
  for (const auto& plugin : runtime::loaded_plugins()) {
    std::printf("  %-10s v%s (API %u.%u) %s\n", plugin.name.c_str(), plugin.version.c_str(), plugin.api_major,
                plugin.api_minor, plugin.path.c_str());
  }
  auto skipped = runtime::skipped_plugins();
  if (!skipped.empty()) {
    std::printf("Skipped plugins:\n");
    for (const auto& plugin : skipped) {
      std::printf("  %s%s: %s\n", plugin.path.c_str(), plugin.name.empty() ? "" : (" (" + plugin.name + ")").c_str(),
                  plugin.reason.c_str());
    }
  }
}

}  // namespace

void add_devices_command(CLI::App& app) {
  auto* command = app.add_subcommand("devices", "list devices, loaded plugins and skipped plugins with reasons");
  static bool json = false;
  command->add_flag("--json", json, "print one JSON object");
  command->callback([] {
    if (json) {
      std::printf("%s\n", devices_json().dump(2).c_str());
    } else {
      print_devices();
    }
  });
}

}  // namespace accel::cli
