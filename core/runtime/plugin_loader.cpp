// Loading and checking one plugin library (see plugin_loader.hpp).
#include "runtime/plugin_loader.hpp"

#include "runtime/host_api.hpp"
#include "runtime/plugin_file_check.hpp"
#include "runtime/status.hpp"

#include <boost/dll/shared_library.hpp>
#include <fmt/format.h>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace accel::detail {
namespace {

PluginLoadResult skipped(std::string reason, std::string name = {}) {
  return PluginLoadResult{nullptr, std::move(name), std::move(reason)};
}

// Plugins are never unloaded while the process runs, skipped ones included: a
// plugin may have started threads or registered callbacks before failing.
void keep_loaded(boost::dll::shared_library&& library) {
  static auto* kept = new std::vector<boost::dll::shared_library>();  // never destroyed
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  kept->push_back(std::move(library));
}

// The dynamic loader's own words for a library it refuses (a missing
// dependency, an undefined symbol); Boost.DLL reports only an errno.
std::string dynamic_loader_message(const std::filesystem::path& path, const std::string& fallback) {
  if (void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(handle);
    return fallback;
  }
  const char* message = ::dlerror();
  return message != nullptr ? message : fallback;
}

// The entry point must be code: a data object of that name, called, would
// jump into data.
bool is_function(const void* address) {
  Dl_info info{};
  void* entry = nullptr;  // the symbol's ElfW(Sym)
  if (::dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return false;
  const unsigned type = ELF64_ST_TYPE(static_cast<const ElfW(Sym)*>(entry)->st_info);
  return type == STT_FUNC || type == STT_GNU_IFUNC;
}

// A string the plugin handed over: bounded before it is copied.
bool bounded_text(const char* text, size_t limit, std::string& out) {
  if (text == nullptr) return false;
  const size_t length = ::strnlen(text, limit + 1);
  if (length > limit) return false;
  out.assign(text, length);
  return true;
}

// Device types are names such as CPU, GPU, TPU, NPU_X: letters, digits, '_'.
bool valid_device_type(const std::string& type) {
  return !type.empty() && std::all_of(type.begin(), type.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// The plugin table functions this host calls unconditionally.
std::string missing_required_function(const AccelPluginApi& api) {
  struct Required { const void* pointer; const char* name; };
  const Required required[] = {
      {reinterpret_cast<const void*>(api.initialize), "initialize"},
      {reinterpret_cast<const void*>(api.physical_device_count), "physical_device_count"},
      {reinterpret_cast<const void*>(api.physical_device_info), "physical_device_info"},
      {reinterpret_cast<const void*>(api.device_open), "device_open"},
      {reinterpret_cast<const void*>(api.device_close), "device_close"},
      {reinterpret_cast<const void*>(api.supports_op), "supports_op"},
      {reinterpret_cast<const void*>(api.buffer_allocate), "buffer_allocate"},
      {reinterpret_cast<const void*>(api.buffer_free), "buffer_free"},
      {reinterpret_cast<const void*>(api.copy_host_to_device), "copy_host_to_device"},
      {reinterpret_cast<const void*>(api.copy_device_to_host), "copy_device_to_host"},
      {reinterpret_cast<const void*>(api.copy_device_to_device), "copy_device_to_device"},
      {reinterpret_cast<const void*>(api.execute), "execute"},
      {reinterpret_cast<const void*>(api.synchronize), "synchronize"},
  };
  for (const Required& function : required) {
    if (function.pointer == nullptr) return function.name;
  }
  return {};
}

std::string status_message(AccelStatus* status) {
  std::unique_ptr<AccelStatus> owned = take_status(status);
  if (owned == nullptr) {
    return fmt::format("returned a status the host did not create ({})", static_cast<const void*>(status));
  }
  return owned->message;
}

}  // namespace

std::string describe_devices(PluginLibrary& plugin) {
  const AccelPluginApi& api = *plugin.api;
  for (int32_t index = 0; index < plugin.physical_device_count; ++index) {
    AccelDeviceInfo info{};
    info.struct_size = sizeof(info);
    AccelStatus* status = nullptr;
    try {
      status = api.physical_device_info(plugin.context, index, &info);
    } catch (...) {
      return fmt::format("describing device {} threw an exception", index);
    }
    if (status != nullptr) return fmt::format("describing device {} failed: {}", index, status_message(status));
    DescribedDevice device;
    if (info.type == nullptr) return fmt::format("device {} has no type (expected a name such as GPU)", index);
    if (!bounded_text(info.type, kMaxDeviceTypeLength, device.type) || !valid_device_type(device.type)) {
      return fmt::format("device {} has a type that is not a name of at most {} letters, digits or '_'", index,
                         kMaxDeviceTypeLength);
    }
    std::transform(device.type.begin(), device.type.end(), device.type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (info.description != nullptr && !bounded_text(info.description, kMaxPluginTextLength, device.description)) {
      return fmt::format("device {}'s description is longer than {} bytes", index, kMaxPluginTextLength);
    }
    device.memory_bytes = info.memory_bytes;
    if (info.num_properties < 0 || info.num_properties > kMaxDeviceProperties ||
        (info.num_properties > 0 && info.properties == nullptr)) {
      return fmt::format("device {} reports {} properties (expected 0 to {}, with a table)", index, info.num_properties,
                         kMaxDeviceProperties);
    }
    for (int32_t property = 0; property < info.num_properties; ++property) {
      const AccelProperty& entry = info.properties[property];
      std::string key, value;
      if (!bounded_text(entry.key, kMaxPluginTextLength, key) ||
          (entry.value != nullptr && !bounded_text(entry.value, kMaxPluginTextLength, value))) {
        return fmt::format("device {}'s property {} has no key or a text longer than {} bytes", index, property,
                           kMaxPluginTextLength);
      }
      device.properties[key] = value;
    }
    plugin.devices.push_back(std::move(device));
  }
  return {};
}

TableCheck check_plugin_table(const AccelPluginApi& api, uint32_t minimum_minor) {
  TableCheck check;
  const auto problem = [&check](std::string text) {
    check.problem = std::move(text);
    return check;
  };
  if (api.struct_size < offsetof(AccelPluginApi, memory_info)) {
    return problem(fmt::format("plugin table too small ({} bytes)", api.struct_size));
  }
  if (api.name != nullptr && !bounded_text(api.name, kMaxPluginNameLength, check.name)) {
    return problem(fmt::format("plugin name longer than {} bytes", kMaxPluginNameLength));
  }
  if (api.api_major != ACCEL_PLUGIN_API_MAJOR) {
    return problem(fmt::format("plugin API major version {} does not match the host's {}", api.api_major,
                               ACCEL_PLUGIN_API_MAJOR));
  }
  if (api.api_minor < minimum_minor) {
    return problem(fmt::format("plugin API version {}.{} is older than the minimum {}.{}", api.api_major,
                               api.api_minor, ACCEL_PLUGIN_API_MAJOR, minimum_minor));
  }
  if (check.name.empty()) return problem("plugin table has no name");
  if (std::string missing = missing_required_function(api); !missing.empty()) {
    return problem("plugin table lacks function " + missing);
  }
  if (api.version != nullptr && !bounded_text(api.version, kMaxPluginTextLength, check.version)) {
    return problem(fmt::format("version text longer than {} bytes", kMaxPluginTextLength));
  }
  return check;
}

PluginLoadResult load_plugin(const std::filesystem::path& path, uint32_t minimum_minor, LoadStepObserver observe_step) {
  const auto step = [observe_step](const char* name) {
    if (observe_step != nullptr) observe_step(name);
  };
  if (std::string problem = check_plugin_file(path); !problem.empty()) return skipped(problem);

  auto plugin = std::make_unique<PluginLibrary>();
  plugin->path = path.string();
  step("dlopen");  // runs the library's static constructors
  boost::dll::fs::error_code error;
  plugin->library.load(boost::dll::fs::path(path.string()), error,
                       boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (error) return skipped("cannot load shared library: " + dynamic_loader_message(path, error.message()));
  struct KeepLoadedWhenSkipped {
    PluginLibrary* plugin;
    bool accepted = false;
    ~KeepLoadedWhenSkipped() {
      if (!accepted) keep_loaded(std::move(plugin->library));
    }
  };
  KeepLoadedWhenSkipped keep_on_skip{plugin.get()};
  if (!plugin->library.has(ACCEL_PLUGIN_ENTRY_POINT_NAME)) {
    return skipped(fmt::format("missing entry point {}", ACCEL_PLUGIN_ENTRY_POINT_NAME));
  }

  auto entry_point = plugin->library.get<const AccelPluginApi*()>(ACCEL_PLUGIN_ENTRY_POINT_NAME);
  if (!is_function(reinterpret_cast<const void*>(entry_point))) {
    return skipped(fmt::format("entry point {} is not a function (it is data, or of unknown type)",
                               ACCEL_PLUGIN_ENTRY_POINT_NAME));
  }
  const AccelPluginApi* api = nullptr;
  step(ACCEL_PLUGIN_ENTRY_POINT_NAME);
  try {
    api = entry_point();
  } catch (...) {
    return skipped(fmt::format("entry point {} threw an exception", ACCEL_PLUGIN_ENTRY_POINT_NAME));
  }
  if (api == nullptr) return skipped("entry point returned no plugin table");
  step("reading the plugin table");
  TableCheck table = check_plugin_table(*api, minimum_minor);
  if (!table.problem.empty()) return skipped(std::move(table.problem), std::move(table.name));
  plugin->api = api;
  plugin->name = table.name;
  plugin->version = std::move(table.version);
  const std::string& name = plugin->name;
  AccelStatus* status = nullptr;
  step("initialize");
  try {
    status = api->initialize(host_api(), &plugin->context);
  } catch (...) {
    return skipped("initialize threw an exception", name);
  }
  if (status != nullptr) return skipped("initialize failed: " + status_message(status), name);

  int32_t count = 0;
  step("physical_device_count");
  try {
    status = api->physical_device_count(plugin->context, &count);
  } catch (...) {
    return skipped("physical_device_count threw an exception", name);
  }
  if (status != nullptr) return skipped("listing devices failed: " + status_message(status), name);
  if (count <= 0) {
    std::string reason = "reports zero devices";
    if (plugin->has(&AccelPluginApi::no_device_reason)) {
      if (const char* why = api->no_device_reason(plugin->context); why != nullptr && *why != '\0') {
        reason += std::string(": ") + why;
      }
    }
    return skipped(reason, name);
  }
  if (count > kMaxDevicesPerPlugin) {
    return skipped(fmt::format("reports {} devices; a plugin may have at most {}", count, kMaxDevicesPerPlugin), name);
  }
  plugin->physical_device_count = count;
  step("physical_device_info");
  if (std::string problem = describe_devices(*plugin); !problem.empty()) return skipped(problem, name);
  keep_on_skip.accepted = true;
  return PluginLoadResult{std::move(plugin), name, {}};
}

}  // namespace accel::detail
