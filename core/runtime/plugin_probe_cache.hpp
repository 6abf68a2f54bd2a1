// The per-user cache of plugin probe verdicts (plugin_probe.hpp): one JSON
// file, $ACCEL_PLUGIN_PROBE_CACHE, else $XDG_CACHE_HOME/accel/plugin-probes.json,
// else ~/.cache/accel/plugin-probes.json. An entry holds for one build of one
// file for one host: the path, size, modification time (ns) and GNU build id
// of the file, and the host's plugin API version. Writes replace the file
// atomically (processes starting side by side may each add an entry; the
// last rename wins, and a lost entry only costs one more probe). A missing,
// unreadable or malformed cache is an empty one, never an error.
// ACCEL_PLUGIN_RESCAN=1 ignores what is cached (and writes fresh verdicts).
#pragma once

#include "runtime/plugin_probe.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace accel::detail {

struct PluginFileIdentity {
  std::string path;  // canonical
  uint64_t size = 0;
  int64_t modified_ns = 0;
  std::string build_id;
  static std::optional<PluginFileIdentity> of(const std::filesystem::path& plugin);
};

std::filesystem::path probe_cache_file();
std::optional<ProbeVerdict> cached_verdict(const PluginFileIdentity& file);
void store_verdict(const PluginFileIdentity& file, const ProbeVerdict& verdict);

}  // namespace accel::detail
