// libFuzzer target: the plugin table and device descriptions a plugin hands
// the host, made from the input (sizes, versions, which functions are null,
// names, device types, descriptions, property tables of any length and
// count). check_plugin_table and describe_devices must accept or refuse each
// with a reason -- never read past what they were given, crash or throw; and
// what they accept must hold to the documented bounds. (A plugin's wild
// pointers are the probe's to catch: every pointer here is valid.) Built and
// run by tests/fuzz/run_libfuzzer.sh (ctest plugin_table_fuzz).
#include "runtime/plugin_loader.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// What physical_device_info hands out for the current input.
struct FuzzedDevice {
  std::string type, description;
  bool null_type = false;
  uint64_t memory = 0;
  int32_t num_properties = 0;
  bool null_properties = false;
  std::vector<std::string> keys, values;
  std::vector<AccelProperty> properties;
};
std::vector<FuzzedDevice> devices;

AccelStatus* physical_device_info(AccelPluginContext*, int32_t index, AccelDeviceInfo* info) {
  FuzzedDevice& device = devices[static_cast<size_t>(index)];
  info->type = device.null_type ? nullptr : device.type.c_str();
  info->description = device.description.c_str();
  info->memory_bytes = device.memory;
  info->num_properties = device.num_properties;
  info->properties = device.null_properties ? nullptr : device.properties.data();
  return nullptr;
}

AccelStatus* unused_status() { return nullptr; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel::detail;
  FuzzedDataProvider input(data, size);
  AccelPluginApi api{};
  api.struct_size = input.ConsumeBool() ? sizeof(AccelPluginApi) : input.ConsumeIntegral<uint32_t>();
  api.api_major = input.ConsumeBool() ? ACCEL_PLUGIN_API_MAJOR : input.ConsumeIntegral<uint32_t>();
  api.api_minor = input.ConsumeIntegralInRange<uint32_t>(0, ACCEL_PLUGIN_API_MINOR + 1);
  const std::string name = input.ConsumeRandomLengthString(96);
  const std::string version = input.ConsumeRandomLengthString(5000);
  api.name = input.ConsumeBool() ? nullptr : name.c_str();
  api.version = input.ConsumeBool() ? nullptr : version.c_str();
  // Required functions, each present or null (never called here).
  auto* any = reinterpret_cast<AccelStatus* (*)(AccelPluginContext*, int32_t, AccelDeviceInfo*)>(&unused_status);
  const uint16_t present = input.ConsumeIntegral<uint16_t>();
  api.initialize = (present & 1) ? reinterpret_cast<decltype(api.initialize)>(any) : nullptr;
  api.physical_device_count = (present & 2) ? reinterpret_cast<decltype(api.physical_device_count)>(any) : nullptr;
  api.physical_device_info = (present & 4) ? &physical_device_info : nullptr;
  api.device_open = (present & 8) ? reinterpret_cast<decltype(api.device_open)>(any) : nullptr;
  api.device_close = (present & 16) ? reinterpret_cast<decltype(api.device_close)>(any) : nullptr;
  api.supports_op = (present & 32) ? reinterpret_cast<decltype(api.supports_op)>(any) : nullptr;
  api.buffer_allocate = (present & 64) ? reinterpret_cast<decltype(api.buffer_allocate)>(any) : nullptr;
  api.buffer_free = (present & 128) ? reinterpret_cast<decltype(api.buffer_free)>(any) : nullptr;
  api.copy_host_to_device = (present & 256) ? reinterpret_cast<decltype(api.copy_host_to_device)>(any) : nullptr;
  api.copy_device_to_host = (present & 512) ? reinterpret_cast<decltype(api.copy_device_to_host)>(any) : nullptr;
  api.copy_device_to_device = (present & 1024) ? reinterpret_cast<decltype(api.copy_device_to_device)>(any) : nullptr;
  api.execute = (present & 2048) ? reinterpret_cast<decltype(api.execute)>(any) : nullptr;
  api.synchronize = (present & 4096) ? reinterpret_cast<decltype(api.synchronize)>(any) : nullptr;

  const TableCheck table = check_plugin_table(api, ACCEL_PLUGIN_API_MIN_MINOR);
  if (table.problem.empty()) {
    if (table.name.empty() || table.name.size() > kMaxPluginNameLength) std::abort();
    if (table.version.size() > kMaxPluginTextLength) std::abort();
  }
  if (api.physical_device_info == nullptr) return 0;

  devices.assign(input.ConsumeIntegralInRange<size_t>(1, 4), FuzzedDevice{});
  for (FuzzedDevice& device : devices) {
    device.type = input.ConsumeRandomLengthString(40);
    device.null_type = input.ConsumeBool();
    device.description = input.ConsumeRandomLengthString(5000);
    device.memory = input.ConsumeIntegral<uint64_t>();
    const size_t stored = input.ConsumeIntegralInRange<size_t>(0, 300);
    device.num_properties = input.ConsumeBool() ? static_cast<int32_t>(stored) : input.ConsumeIntegral<int32_t>();
    device.null_properties = input.ConsumeBool() && input.ConsumeBool();
    for (size_t index = 0; index < stored; ++index) {
      device.keys.push_back(input.ConsumeRandomLengthString(40));
      device.values.push_back(input.ConsumeRandomLengthString(40));
    }
    for (size_t index = 0; index < stored; ++index) {
      device.properties.push_back({input.ConsumeBool() ? nullptr : device.keys[index].c_str(),
                                   input.ConsumeBool() ? nullptr : device.values[index].c_str()});
    }
    // Only counts the table really holds: more would be a wild pointer.
    if (device.num_properties > static_cast<int32_t>(stored)) device.num_properties = static_cast<int32_t>(stored);
  }
  PluginLibrary plugin;
  plugin.api = &api;
  plugin.physical_device_count = static_cast<int32_t>(devices.size());
  const std::string problem = describe_devices(plugin);
  if (problem.empty()) {
    if (plugin.devices.size() != devices.size()) std::abort();
    for (const DescribedDevice& device : plugin.devices) {
      if (device.type.empty() || device.type.size() > kMaxDeviceTypeLength) std::abort();
      if (!std::all_of(device.type.begin(), device.type.end(),
                       [](unsigned char c) { return std::isupper(c) || std::isdigit(c) || c == '_'; })) {
        std::abort();
      }
      if (device.description.size() > kMaxPluginTextLength) std::abort();
      if (device.properties.size() > static_cast<size_t>(kMaxDeviceProperties)) std::abort();
    }
  }
  plugin.library = {};  // nothing was loaded
  return 0;
}
