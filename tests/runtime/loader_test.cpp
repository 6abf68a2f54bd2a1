// Plugin loader faults: every broken plugin is skipped with its reason, the
// good plugins still load, and nothing crashes; a required plugin that fails
// is a hard error.
#include "runtime/plugin_loader.hpp"
#include "runtime/sanitizers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
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

// --- The probe process: plugins that crash, hang or eat memory while loading.

struct ProbeRun {
  nlohmann::json devices;
  std::string cache_text;
};

// `accel devices --json` with the unsafe plugins on ACCEL_PLUGIN_PATH and
// their own probe cache file.
ProbeRun devices_with_unsafe_plugins(const std::string& plugin_path, const std::string& cache,
                                     const std::string& extra_environment = "") {
  const CommandResult result =
      run("env ACCEL_PLUGIN_PATH='" + plugin_path + "' ACCEL_PLUGIN_PROBE_CACHE='" + cache +
          "' ACCEL_PLUGIN_PROBE_TIMEOUT_MS=1500 ACCEL_PLUGIN_PROBE_MEMORY_MIB=512 " + extra_environment + " " +
          ACCEL_TEST_CLI + " devices --json 2>/dev/null");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::ifstream in(cache);
  return {nlohmann::json::parse(result.output, nullptr, false), std::string(std::istreambuf_iterator<char>(in), {})};
}

std::string unsafe_reason(const nlohmann::json& devices, const std::string& kind) {
  return skip_reason(devices, "libaccel-plugin-unsafe_" + kind + ".so");
}

std::string scratch_cache(const std::string& name) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("accel-probe-" + std::to_string(getpid())) / name;
  std::filesystem::remove_all(file.parent_path() / name);
  std::filesystem::create_directories(file.parent_path());
  return file.string();
}

TEST(PluginProbe, WhatCrashesHangsOrEatsMemoryIsSkippedAndTheHostLives) {
  const ProbeRun probed = devices_with_unsafe_plugins(ACCEL_TEST_UNSAFE_PLUGIN_DIR, scratch_cache("unsafe.json"));
  ASSERT_TRUE(probed.devices.is_object()) << "accel devices did not survive the unsafe plugins";
  const nlohmann::json& devices = probed.devices;
#if ACCEL_UNDER_SANITIZER
  // The sanitizers catch the null store first and end the probe themselves.
  EXPECT_NE(unsafe_reason(devices, "crash_in_init").find("the probe process"), std::string::npos)
      << unsafe_reason(devices, "crash_in_init");
#else
  EXPECT_NE(unsafe_reason(devices, "crash_in_init").find("crashed the probe process with signal 11 (SIGSEGV"),
            std::string::npos) << unsafe_reason(devices, "crash_in_init");
#endif
  EXPECT_NE(unsafe_reason(devices, "crash_in_init").find("in initialize"), std::string::npos);
  EXPECT_NE(unsafe_reason(devices, "hang_in_init").find("did not finish loading within 1500 ms (stuck in initialize)"),
            std::string::npos) << unsafe_reason(devices, "hang_in_init");
  if (std::filesystem::exists(std::string(ACCEL_TEST_UNSAFE_PLUGIN_DIR) + "/libaccel-plugin-unsafe_memory_hog.so")) {
    EXPECT_NE(unsafe_reason(devices, "memory_hog").find("used more than the probe's 512 MiB of memory in initialize"),
              std::string::npos) << unsafe_reason(devices, "memory_hog");
  }  // (not built under the sanitizers: tests/runtime/CMakeLists.txt)
  EXPECT_NE(unsafe_reason(devices, "bad_properties").find("in physical_device_info"), std::string::npos)
      << unsafe_reason(devices, "bad_properties");
  EXPECT_NE(unsafe_reason(devices, "bad_table").find("in reading the plugin table"), std::string::npos)
      << unsafe_reason(devices, "bad_table");
  bool cpu = false;
  for (const auto& device : devices["logical_devices"]) cpu |= device["device_type"] == "CPU";
  EXPECT_TRUE(cpu) << "the good plugins must still load";
}

TEST(PluginProbe, VerdictsAreCachedUntilTheFileChanges) {
  // One crashing plugin, copied so that the test can change it.
  const std::filesystem::path folder = std::filesystem::path(scratch_cache("copy")).parent_path() / "plugins";
  std::filesystem::create_directories(folder);
  const std::filesystem::path copy = folder / "libaccel-plugin-unsafe_crash_in_init.so";
  std::filesystem::copy_file(std::string(ACCEL_TEST_UNSAFE_PLUGIN_DIR) + "/libaccel-plugin-unsafe_crash_in_init.so",
                             copy, std::filesystem::copy_options::overwrite_existing);
  const std::string cache = scratch_cache("cached.json");

  const ProbeRun first = devices_with_unsafe_plugins(copy.string(), cache);
  EXPECT_EQ(unsafe_reason(first.devices, "crash_in_init").find("(cached"), std::string::npos);
  const nlohmann::json entries = nlohmann::json::parse(first.cache_text)["plugins"];
  ASSERT_TRUE(entries.contains(std::filesystem::canonical(copy).string())) << first.cache_text;
  EXPECT_FALSE(entries[std::filesystem::canonical(copy).string()]["safe"].get<bool>());
  EXPECT_FALSE(entries[std::filesystem::canonical(copy).string()]["build_id"].get<std::string>().empty());

  // Unchanged: the cached verdict, and nothing probed (the cache file is not rewritten).
  const ProbeRun second = devices_with_unsafe_plugins(copy.string(), cache);
  EXPECT_NE(unsafe_reason(second.devices, "crash_in_init").find("(cached; ACCEL_PLUGIN_RESCAN=1"), std::string::npos);
  EXPECT_EQ(second.cache_text, first.cache_text);

  // A rescan, and a changed file, probe again.
  const ProbeRun rescanned = devices_with_unsafe_plugins(copy.string(), cache, "ACCEL_PLUGIN_RESCAN=1");
  EXPECT_EQ(unsafe_reason(rescanned.devices, "crash_in_init").find("(cached"), std::string::npos);
  std::filesystem::last_write_time(copy, std::filesystem::last_write_time(copy) + std::chrono::seconds(5));
  const ProbeRun changed = devices_with_unsafe_plugins(copy.string(), cache);
  EXPECT_EQ(unsafe_reason(changed.devices, "crash_in_init").find("(cached"), std::string::npos);
  EXPECT_NE(changed.cache_text, rescanned.cache_text) << "the new modification time is recorded";
}

TEST(PluginProbe, AMalformedCacheIsAnEmptyOne) {
  const std::string cache = scratch_cache("malformed.json");
  // The plugin's own entry with each field of the wrong type (found by plugin_file_fuzz: a
  // field read before its type was checked threw out of `accel devices`).
  const std::string plugin =
      std::filesystem::canonical(std::string(ACCEL_TEST_UNSAFE_PLUGIN_DIR) + "/libaccel-plugin-unsafe_bad_table.so").string();
  const std::string wrong_types = "{\"format\": \"accel-plugin-probes\", \"version\": 1, \"plugins\": {\"" + plugin +
                                  "\": {\"size\": \"big\", \"modified_ns\": [], \"build_id\": 7, \"host\": null, "
                                  "\"safe\": \"yes\", \"reason\": 3}}}";
  for (const std::string text : {std::string(""), std::string("{"), std::string("[]"), std::string("{\"format\": 7011}"),
                                 std::string("{\"format\": \"accel-plugin-probes\", \"version\": \"1\"}"),
                                 std::string("{\"format\": \"accel-plugin-probes\", \"version\": 1, \"plugins\": 3}"),
                                 std::string("{\"format\": \"accel-plugin-probes\", \"version\": 1, \"plugins\": {\"x\": 1}}"),
                                 wrong_types}) {
    std::ofstream(cache) << text;
    const ProbeRun run = devices_with_unsafe_plugins(
        std::string(ACCEL_TEST_UNSAFE_PLUGIN_DIR) + "/libaccel-plugin-unsafe_bad_table.so", cache);
    EXPECT_NE(unsafe_reason(run.devices, "bad_table").find("crashed the probe process"), std::string::npos) << text;
    EXPECT_TRUE(nlohmann::json::accept(run.cache_text)) << "the cache is rewritten whole: " << run.cache_text;
  }
}

TEST(PluginProbe, ProbingOffLoadsGoodPluginsInProcess) {
  const CommandResult result = run("env ACCEL_PLUGIN_PROBE=off ACCEL_PLUGIN_PATH='" + fault_plugin("none_dup") + "' " +
                                   ACCEL_TEST_CLI + " devices --json 2>/dev/null");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const nlohmann::json devices = nlohmann::json::parse(result.output);
  std::vector<std::string> loaded;
  for (const auto& plugin : devices["plugins"]) loaded.push_back(plugin["name"]);
  EXPECT_NE(std::find(loaded.begin(), loaded.end(), "dup"), loaded.end());
}

}  // namespace
