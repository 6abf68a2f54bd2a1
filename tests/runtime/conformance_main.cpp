// The conformance program (build/bin/conformance_tests; installed as
// bin/accel-conformance). Plugins to prove come from its command line
// (`--plugin PATH` or a bare path, repeatable) and from ACCEL_PLUGIN_PATH. If
// any of them did not load, it stops before running a case, with exit status 2
// and the file and the loader's reason: a suite that passes because the plugin
// under test never loaded (only the CPU was tested) proves nothing. After the
// cases it prints one table per device (conformance_summary.hpp).
#include <accel/config.hpp>
#include <accel/error.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "conformance_summary.hpp"
#include "runtime/plugin_discovery.hpp"

namespace {

constexpr int kPluginDidNotLoad = 2;

struct Arguments {
  std::vector<std::string> plugins;
  std::vector<std::string> device_types;  // --device-type: only devices of these types
  bool all_devices = false;               // --all-devices: the bundled devices too
  std::vector<char*> passed_on;  // argv for GoogleTest, program name first
  std::string error;
};

void print_usage(const char* program) {
  std::printf(
      "Usage: %s [--plugin PATH | PATH]... [--device-type TYPE]... [--all-devices] [GoogleTest flags]\n"
      "Runs every op of the op set on every device but the reference CPU:0 and compares it with the CPU plugin.\n"
      "  --plugin PATH, PATH  a plugin file that must load (repeatable); ACCEL_PLUGIN_PATH entries must load too.\n"
      "                       With plugins named, only their devices are tested\n"
      "  --device-type TYPE   only devices of this type, e.g. EXAMPLE or TPU (repeatable)\n"
      "  --all-devices        every device, the bundled plugins' too (the default when no plugin is named)\n"
      "  ACCEL_CONFORMANCE_REQUIRE_DEVICE=TYPE  also fail unless a device of that type was tested\n\n",
      program);
}

Arguments parse(int argc, char** argv) {
  Arguments arguments;
  arguments.passed_on.push_back(argv[0]);
  for (int index = 1; index < argc; ++index) {
    const std::string_view argument = argv[index];
    if (argument == "--plugin") {
      if (index + 1 == argc) {
        arguments.error = "--plugin needs a path";
        return arguments;
      }
      arguments.plugins.emplace_back(argv[++index]);
    } else if (argument.starts_with("--plugin=")) {
      arguments.plugins.emplace_back(argument.substr(std::string_view("--plugin=").size()));
    } else if (argument == "--device-type") {
      if (index + 1 == argc) {
        arguments.error = "--device-type needs a type (CPU, TPU, GPU, EXAMPLE, ...)";
        return arguments;
      }
      arguments.device_types.emplace_back(argv[++index]);
    } else if (argument == "--all-devices") {
      arguments.all_devices = true;
    } else if (argument.starts_with("-")) {
      if (argument == "--help" || argument == "-h" || argument == "-?") print_usage(argv[0]);
      arguments.passed_on.push_back(argv[index]);  // GoogleTest's flags
    } else {
      arguments.plugins.emplace_back(argument);
    }
  }
  return arguments;
}

std::filesystem::path resolved_path(const std::filesystem::path& path) {
  std::error_code error;
  std::filesystem::path resolved = std::filesystem::weakly_canonical(path, error);
  return error ? path : resolved;
}

// Plugins the runtime skipped that ACCEL_PLUGIN_PATH named, as a file or as a
// folder holding them (the runtime only records these and loads the rest).
std::vector<accel::runtime::SkippedPlugin> named_plugins_that_did_not_load() {
  std::vector<std::filesystem::path> named;
  for (const auto& location : accel::detail::default_plugin_locations()) {
    if (location.named_by_user) named.push_back(resolved_path(location.path));
  }
  std::vector<accel::runtime::SkippedPlugin> failed;
  for (const auto& skipped : accel::runtime::skipped_plugins()) {
    const std::filesystem::path path = resolved_path(skipped.path);
    for (const auto& entry : named) {
      if (entry == path || entry == path.parent_path()) {
        failed.push_back(skipped);
        break;
      }
    }
  }
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments arguments = parse(argc, argv);
  if (!arguments.error.empty()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], arguments.error.c_str());
    return kPluginDidNotLoad;
  }
  try {
    for (const std::string& plugin : arguments.plugins) accel::runtime::require_plugin(plugin);
    accel::config::list_physical_devices();  // discovery: a required plugin that fails throws here
  } catch (const accel::Error& error) {
    std::fprintf(stderr, "%s: %s\n", argv[0], error.what());
    return kPluginDidNotLoad;
  }
  const auto failed = named_plugins_that_did_not_load();
  for (const auto& skipped : failed) {
    std::fprintf(stderr, "%s: plugin %s (named in ACCEL_PLUGIN_PATH) did not load: %s\n", argv[0],
                 skipped.path.c_str(), skipped.reason.c_str());
  }
  if (!failed.empty()) return kPluginDidNotLoad;

  // Which devices the cases run on (conformance_test.cpp's params() reads these).
  std::string types;
  for (const std::string& type : arguments.device_types) types += (types.empty() ? "" : ",") + type;
  if (!types.empty()) setenv("ACCEL_CONFORMANCE_DEVICE_TYPES", types.c_str(), 1);
  if (!arguments.all_devices && arguments.device_types.empty()) {
    std::string plugins;  // the named plugins (command line and ACCEL_PLUGIN_PATH), by name
    for (const auto& plugin : accel::runtime::loaded_plugins()) {
      bool named = false;
      for (const std::string& path : arguments.plugins) named = named || resolved_path(path) == resolved_path(plugin.path);
      for (const auto& location : accel::detail::default_plugin_locations()) {
        if (!location.named_by_user) continue;
        const std::filesystem::path where = resolved_path(location.path);
        named = named || where == resolved_path(plugin.path) ||
                (std::filesystem::is_directory(where) && resolved_path(plugin.path).parent_path() == where);
      }
      if (named) plugins += (plugins.empty() ? "" : ",") + plugin.name;
    }
    if (!plugins.empty()) setenv("ACCEL_CONFORMANCE_PLUGINS", plugins.c_str(), 1);
  }

  int gtest_argc = static_cast<int>(arguments.passed_on.size());
  arguments.passed_on.push_back(nullptr);
  ::testing::InitGoogleTest(&gtest_argc, arguments.passed_on.data());
  const int result = RUN_ALL_TESTS();
  std::fputs(accel::conformance::summary_tables().c_str(), stdout);
  return result;
}
