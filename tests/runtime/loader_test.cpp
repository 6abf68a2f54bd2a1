// Plugin loader faults: every broken plugin is skipped with its reason, the
// good plugins still load, and nothing crashes; a required plugin that fails
// is a hard error.
#include "runtime/plugin_loader.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct CommandResult {
  int exit_code;
  std::string output;
};

CommandResult run(const std::string& command) {
  std::array<char, 4096> buffer{};
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  while (pipe != nullptr && fgets(buffer.data(), buffer.size(), pipe) != nullptr) output += buffer.data();
  int status = pipe != nullptr ? pclose(pipe) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string fault_plugin(const std::string& kind) {
  return std::string(ACCEL_TEST_FAULT_PLUGIN_DIR) + "/libaccel-plugin-fault_" + kind + ".so";
}

nlohmann::json devices_with_plugin_path(const std::string& plugin_path) {
  CommandResult result = run("ACCEL_PLUGIN_PATH='" + plugin_path + "' " + ACCEL_TEST_CLI + " devices --json 2>/dev/null");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return nlohmann::json::parse(result.output);
}

std::string skip_reason(const nlohmann::json& devices, const std::string& file_name) {
  for (const auto& skipped : devices["skipped_plugins"]) {
    if (std::filesystem::path(skipped["path"].get<std::string>()).filename() == file_name) {
      return skipped["reason"].get<std::string>();
    }
  }
  return "<not skipped>";
}

TEST(LoaderTest, EveryFaultIsSkippedWithItsReasonAndGoodPluginsLoad) {
  nlohmann::json devices = devices_with_plugin_path(ACCEL_TEST_FAULT_PLUGIN_DIR);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_missing_entry.so").find("missing entry point accel_get_plugin_api"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_wrong_major.so").find("major version 99 does not match"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_entry_throws.so").find("threw an exception"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_init_error.so").find("simulated init failure"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_init_throws.so").find("initialize threw"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_zero_devices.so").find("zero devices: no widget attached"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-text.so").find("not a shared library"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_none_dup_copy.so").find("duplicate plugin name 'dup'"), std::string::npos);
  // Plugins that used to crash the host, displace the CPU or fail every command.
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_huge_count.so").find("reports 2147483647 devices; a plugin may have at most 1024"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_info_error.so").find("describing device 0 failed: simulated failure"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_null_type.so").find("device 0 has no type"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_cpu_type.so").find("device type CPU is reserved for accel's bundled cpu plugin"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_entry_is_data.so").find("is not a function"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_foreign_status.so").find("returned a status the host did not create"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_missing_dependency.so").find("libaccel_test_missing_dependency.so: cannot open shared object file"), std::string::npos);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-fault_none_cpu_name.so").find("the name 'cpu' belongs to accel's bundled plugin"), std::string::npos);

  std::vector<std::string> loaded;
  for (const auto& plugin : devices["plugins"]) loaded.push_back(plugin["name"]);
  EXPECT_NE(std::find(loaded.begin(), loaded.end(), "cpu"), loaded.end());
  EXPECT_EQ(std::count(loaded.begin(), loaded.end(), "dup"), 1);
  bool has_test_device = false;
  for (const auto& device : devices["logical_devices"]) has_test_device |= device["device_type"] == "TESTDEV";
  EXPECT_TRUE(has_test_device);
  // Found first (ACCEL_PLUGIN_PATH comes before the bundled folder), the
  // impostors still leave CPU:0 to the bundled CPU plugin, and the only CPU.
  int cpus = 0;
  for (const auto& device : devices["physical_devices"]) {
    if (device["device_type"] != "CPU") continue;
    ++cpus;
    EXPECT_EQ(device["plugin"], "cpu");
  }
  EXPECT_EQ(cpus, 1) << devices.dump(1);
}

// A copy of a good plugin, damaged by `damage`, in a folder of its own.
std::string damaged_copy(const std::string& name, const std::function<void(std::string&)>& damage) {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("accel-damaged-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  std::ifstream in(fault_plugin("none_dup"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  damage(bytes);
  const std::filesystem::path copy = folder / ("libaccel-plugin-" + name + ".so");
  std::ofstream(copy, std::ios::binary) << bytes;
  return copy.string();
}

TEST(LoaderTest, ATruncatedLibraryIsSkippedBeforeTheLoaderMapsIt) {
  // Cut at several points: inside the program headers, inside the code, near the end.
  for (const double fraction : {0.01, 0.3, 0.6, 0.95}) {
    const std::string copy = damaged_copy("truncated", [&](std::string& bytes) {
      bytes.resize(static_cast<size_t>(static_cast<double>(bytes.size()) * fraction));
    });
    const nlohmann::json devices = devices_with_plugin_path(copy);  // exits 0: no SIGBUS
    EXPECT_NE(skip_reason(devices, "libaccel-plugin-truncated.so").find("truncated ELF file"), std::string::npos)
        << fraction << ": " << skip_reason(devices, "libaccel-plugin-truncated.so");
  }
  std::filesystem::remove_all(std::filesystem::path(damaged_copy("x", [](std::string&) {})).parent_path());
}

TEST(LoaderTest, ALibraryForAnotherMachineSaysWhichMachine) {
  const std::string copy = damaged_copy("aarch64", [](std::string& bytes) {
    const uint16_t aarch64 = 183;  // EM_AARCH64, at e_machine (offset 18), little-endian
    std::memcpy(bytes.data() + 18, &aarch64, sizeof(aarch64));
  });
  const nlohmann::json devices = devices_with_plugin_path(copy);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-aarch64.so").find("built for aarch64, but this host is x86-64"),
            std::string::npos)
      << skip_reason(devices, "libaccel-plugin-aarch64.so");
  std::filesystem::remove_all(std::filesystem::path(copy).parent_path());
}

TEST(LoaderTest, OldMinorVersionIsSkipped) {
  // The test plugin declares minor 0; a host whose minimum minor is 1 refuses it.
  auto result = accel::detail::load_plugin(fault_plugin("old_minor"), 1);
  EXPECT_EQ(result.plugin, nullptr);
  EXPECT_NE(result.reason.find("older than the minimum 1.1"), std::string::npos) << result.reason;
  auto accepted = accel::detail::load_plugin(fault_plugin("old_minor"), 0);
  EXPECT_NE(accepted.plugin, nullptr) << accepted.reason;
}

TEST(LoaderTest, MissingPathEntryIsReported) {
  nlohmann::json devices = devices_with_plugin_path("/nonexistent/accel-plugins");
  EXPECT_NE(skip_reason(devices, "accel-plugins").find("no such file"), std::string::npos);
}

TEST(LoaderTest, UnreadableFileIsSkipped) {
  std::filesystem::path folder = std::filesystem::temp_directory_path() / ("accel-unreadable-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  std::filesystem::path copy = folder / "libaccel-plugin-locked.so";
  std::filesystem::copy_file(fault_plugin("none_dup"), copy, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::permissions(copy, std::filesystem::perms::none);
  std::filesystem::permissions(folder, std::filesystem::perms::all);
  std::string prefix;
  if (geteuid() == 0) {
    // Root reads anything; drop to an unprivileged user for this one run.
    if (run("command -v setpriv >/dev/null").exit_code != 0) GTEST_SKIP() << "running as root without setpriv";
    prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  CommandResult result = run(prefix + "env ACCEL_PLUGIN_PATH='" + copy.string() + "' " + ACCEL_TEST_CLI + " devices --json 2>&1");
  std::filesystem::remove_all(folder);
  if (result.exit_code != 0 && result.output.find("Permission denied") != std::string::npos) {
    GTEST_SKIP() << "the build tree is not readable by an unprivileged user: " << result.output;
  }
  ASSERT_EQ(result.exit_code, 0) << result.output;
  nlohmann::json devices = nlohmann::json::parse(result.output);
  EXPECT_NE(skip_reason(devices, "libaccel-plugin-locked.so").find("cannot read file"), std::string::npos) << result.output;
}

TEST(LoaderTest, RequiredPluginThatFailsIsAHardError) {
  CommandResult result = run(std::string(ACCEL_TEST_CLI) + " --plugin " + fault_plugin("wrong_major") + " devices 2>&1");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("required plugin"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("major version 99"), std::string::npos) << result.output;
}

TEST(LoaderTest, RequiredGoodPluginLoads) {
  CommandResult result = run(std::string(ACCEL_TEST_CLI) + " --plugin " + fault_plugin("none_dup") + " devices --json 2>/dev/null");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  nlohmann::json devices = nlohmann::json::parse(result.output);
  EXPECT_EQ(devices["plugins"][0]["name"], "dup");
}

}  // namespace
