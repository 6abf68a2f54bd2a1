// Probing a plugin file out of process before the host loads it. A plugin's
// own code can crash (SIGSEGV in initialize, bad pointers in its device
// properties), hang or eat memory while it loads; in-process checks cannot
// stop that. So each new or changed plugin file is first loaded by
// accel-plugin-probe (plugin_probe_main.cpp) in a child process with bounded
// time and memory. A file whose probe finished is safe to load here (the
// loader then gives its own verdict, such as "reports zero devices"); one
// whose probe crashed, hung or ran out of memory is skipped with that reason.
// Verdicts are cached per user (plugin_probe_cache.hpp), keyed by the file's
// path, size, modification time and build id, so warm starts probe nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace accel::detail {

struct ProbeVerdict {
  bool safe = true;
  std::string reason;  // why it is not safe
};

struct ProbeLimits {
  int64_t timeout_ms = 10000;  // ACCEL_PLUGIN_PROBE_TIMEOUT_MS
  int64_t memory_mib = 4096;   // ACCEL_PLUGIN_PROBE_MEMORY_MIB (RLIMIT_DATA of the probe)
  static ProbeLimits from_environment();
};

// The probe program: ACCEL_PLUGIN_PROBE when it names a file; none when it is
// "off" (probing disabled: plugins load in process, as before); else
// accel/accel-plugin-probe beside libaccel, if it is there.
std::optional<std::filesystem::path> probe_program();

// Runs the probe on `plugin` (no cache). `minimum_minor` as for load_plugin.
ProbeVerdict probe_plugin(const std::filesystem::path& program, const std::filesystem::path& plugin,
                          uint32_t minimum_minor, const ProbeLimits& limits);

// What the host does before loading `plugin`: the cached verdict when the file
// is unchanged, else a fresh probe (stored in the cache); safe when probing is
// off or the probe program is missing.
ProbeVerdict plugin_verdict(const std::filesystem::path& plugin, uint32_t minimum_minor);

}  // namespace accel::detail
