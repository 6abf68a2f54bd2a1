// libFuzzer target: the bytes the host reads from plugin files and from the
// probe cache before trusting anything. Each input is written once as a
// plugin file and once as the probe cache; then the ELF check, the build id
// reader and the cache lookup must return (a reason, an id, a verdict or
// nothing) -- never crash, hang, read out of bounds or throw. Built and run by
// tests/fuzz/run_libfuzzer.sh (ctest plugin_file_fuzz, label "fuzz").
#include "runtime/plugin_file_check.hpp"
#include "runtime/plugin_probe_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

const std::string& scratch(const char* name) {
  static const std::string folder = "/tmp/accel-plugin-file-fuzz-" + std::to_string(::getpid());
  static std::string paths[2];
  std::string& path = paths[name[0] == 'p' ? 0 : 1];
  if (path.empty()) {
    if (::mkdir(folder.c_str(), 0700) == 0) {
      std::atexit([] { std::filesystem::remove_all(folder); });
    }
    path = folder + "/" + name;
  }
  return path;
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel::detail;
  const std::string& plugin = scratch("plugin.so");
  write_file(plugin, data, size);
  const std::string problem = check_plugin_file(plugin);
  const std::string build_id = elf_build_id(plugin);
  if (!problem.empty() && !build_id.empty()) std::abort();  // an id only for a file that passed

  const std::string& cache = scratch("cache.json");
  write_file(cache, data, size);
  ::setenv("ACCEL_PLUGIN_PROBE_CACHE", cache.c_str(), 1);
  const PluginFileIdentity identity{"/fuzz/libaccel-plugin-fuzz.so", 2, 1, "4c863b6879b8770ea1f7ef5efc9170893113e72d"};
  (void)cached_verdict(identity);
  return 0;
}
