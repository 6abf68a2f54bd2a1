// The plugin probe cache file (see plugin_probe_cache.hpp).
#include "runtime/plugin_probe_cache.hpp"

#include "runtime/logging.hpp"
#include "runtime/plugin_file_check.hpp"

#include <accel/plugin/accel_plugin.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace accel::detail {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "accel-plugin-probes";
constexpr int kVersion = 1;

std::string host_identity() { return fmt::format("plugin API {}.{}", ACCEL_PLUGIN_API_MAJOR, ACCEL_PLUGIN_API_MINOR); }

bool rescan_requested() {
  const char* rescan = std::getenv("ACCEL_PLUGIN_RESCAN");
  return rescan != nullptr && *rescan != '\0' && std::string_view(rescan) != "0";
}

// Whether `object[key]` is there and of the type `is_type` checks: the cache
// is a file anyone can edit, so no field is read before its type is known
// (nlohmann's value() throws on a field of another type).
template <typename TypeCheck>
bool has(const json& object, const char* key, TypeCheck is_type) {
  const auto found = object.find(key);
  return found != object.end() && is_type(*found);
}
const auto is_string = [](const json& value) { return value.is_string(); };
const auto is_integer = [](const json& value) { return value.is_number_integer(); };

json read_cache() {
  std::ifstream in(probe_cache_file(), std::ios::binary);
  if (!in) return json::object();
  std::stringstream text;
  text << in.rdbuf();
  json document = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  const bool ours = document.is_object() && has(document, "format", is_string) && document["format"] == kFormat &&
                    has(document, "version", is_integer) && document["version"] == kVersion &&
                    has(document, "plugins", [](const json& value) { return value.is_object(); });
  if (!ours) {
    if (!text.str().empty()) runtime_log().debug("ignoring the malformed plugin probe cache {}", probe_cache_file().string());
    return json::object();
  }
  return document;
}

bool same_build(const json& entry, const PluginFileIdentity& file) {
  return entry.is_object() && has(entry, "size", is_integer) && entry["size"] == file.size &&
         has(entry, "modified_ns", is_integer) && entry["modified_ns"] == file.modified_ns &&
         has(entry, "build_id", is_string) && entry["build_id"] == file.build_id && has(entry, "host", is_string) &&
         entry["host"] == host_identity() && has(entry, "safe", [](const json& value) { return value.is_boolean(); }) &&
         has(entry, "reason", is_string);
}

}  // namespace

std::optional<PluginFileIdentity> PluginFileIdentity::of(const std::filesystem::path& plugin) {
  struct stat status {};
  if (::stat(plugin.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
  PluginFileIdentity identity;
  std::error_code error;
  const auto canonical = std::filesystem::weakly_canonical(plugin, error);
  identity.path = error ? plugin.string() : canonical.string();
  identity.size = static_cast<uint64_t>(status.st_size);
  identity.modified_ns = static_cast<int64_t>(status.st_mtim.tv_sec) * 1000000000 + status.st_mtim.tv_nsec;
  identity.build_id = elf_build_id(plugin);
  return identity;
}

std::filesystem::path probe_cache_file() {
  if (const char* file = std::getenv("ACCEL_PLUGIN_PROBE_CACHE"); file != nullptr && *file != '\0') return file;
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache != nullptr && *cache == '/') {
    return std::filesystem::path(cache) / "accel" / "plugin-probes.json";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr && *home != '\0' ? home : "/tmp") / ".cache" / "accel" /
         "plugin-probes.json";
}

std::optional<ProbeVerdict> cached_verdict(const PluginFileIdentity& file) {
  if (rescan_requested()) return std::nullopt;
  const json document = read_cache();
  if (!document.contains("plugins")) return std::nullopt;
  const auto entry = document["plugins"].find(file.path);
  if (entry == document["plugins"].end() || !same_build(*entry, file)) return std::nullopt;
  return ProbeVerdict{(*entry)["safe"].get<bool>(), (*entry)["reason"].get<std::string>()};
}

void store_verdict(const PluginFileIdentity& file, const ProbeVerdict& verdict) {
  json document = read_cache();
  if (!document.contains("plugins")) document = {{"format", kFormat}, {"version", kVersion}, {"plugins", json::object()}};
  document["plugins"][file.path] = {{"size", file.size},          {"modified_ns", file.modified_ns},
                                    {"build_id", file.build_id},  {"host", host_identity()},
                                    {"safe", verdict.safe},       {"reason", verdict.reason}};
  const std::filesystem::path target = probe_cache_file();
  std::error_code error;
  std::filesystem::create_directories(target.parent_path(), error);
  const std::filesystem::path temporary = target.string() + fmt::format(".{}.tmp", ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << document.dump(1) << "\n";
    if (!out) {
      runtime_log().debug("cannot write the plugin probe cache {}", target.string());
      std::filesystem::remove(temporary, error);
      return;  // a cache that cannot be written only costs probing again
    }
  }
  std::filesystem::rename(temporary, target, error);
  if (error) std::filesystem::remove(temporary, error);
}

}  // namespace accel::detail
