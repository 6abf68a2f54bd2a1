// A plugin library that passed loading: its function table, its context and
// the library handle that keeps its code mapped for the life of the process.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <boost/dll/shared_library.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace accel::detail {

// One physical device as the plugin described it at load time, copied out of
// the plugin's memory once its strings were checked.
struct DescribedDevice {
  std::string type;  // upper case
  std::string description;
  uint64_t memory_bytes = 0;
  std::map<std::string, std::string> properties;
};

struct PluginLibrary {
  std::string name;
  std::string path;
  std::string version;
  const AccelPluginApi* api = nullptr;
  AccelPluginContext* context = nullptr;
  int32_t physical_device_count = 0;
  std::vector<DescribedDevice> devices;  // physical_device_count of them
  boost::dll::shared_library library;

  // Whether the plugin's table is large enough to hold `field` (appended fields).
  template <typename Field>
  bool has(Field AccelPluginApi::*field) const {
    auto offset = reinterpret_cast<size_t>(&(static_cast<AccelPluginApi*>(nullptr)->*field));
    return api->struct_size >= offset + sizeof(Field) && api->*field != nullptr;
  }
};

}  // namespace accel::detail
