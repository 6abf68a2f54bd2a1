#include "tpu_preset_lookup.hpp"

#include "schema_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

namespace accel::experiment {
namespace fs = std::filesystem;
namespace {

#ifndef ACCEL_EXPERIMENT_CONFIG_DIR
#define ACCEL_EXPERIMENT_CONFIG_DIR ""
#endif
#ifndef ACCEL_EXPERIMENT_INSTALL_CONFIG_DIR
#define ACCEL_EXPERIMENT_INSTALL_CONFIG_DIR ""
#endif

bool looks_like_path(const std::string& text) {
  return text.find('/') != std::string::npos || text.ends_with(".yaml") || text.ends_with(".yml");
}

std::vector<std::string> preset_names(const std::vector<std::string>& dirs) {
  std::vector<std::string> names;
  for (const auto& dir : dirs) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// Parsed presets, by path (validating many runs reads each preset once).
SourceNodePtr load_preset(const std::string& path, const SourceLimits& limits) {
  static std::mutex mutex;
  static std::map<std::string, SourceNodePtr> cache;
  std::lock_guard lock(mutex);
  auto& slot = cache[path];
  if (!slot) slot = load_yaml_file(path, limits);
  return slot;
}

// Dotted keys of the override mapping: {core: {mxu: {rows: 64}}} and
// {core.mxu.rows: 64} both give "core.mxu.rows".
void flatten_overrides(const SourceNode& node, const std::string& prefix,
                       std::vector<std::pair<std::string, const SourceNode*>>& out,
                       std::vector<const SourceNode*>& key_nodes) {
  for (const auto& [key, value] : node.entries) {
    const std::string full = prefix.empty() ? key->text : prefix + "." + key->text;
    if (value->is_map()) {
      flatten_overrides(*value, full, out, key_nodes);
    } else {
      out.emplace_back(full, value.get());
      key_nodes.push_back(key.get());
    }
  }
}

// Fields the TPU timing library gives a default when a preset leaves them out
// (plugins/tpu_sim/timing/config_loader.cpp): what-ifs may set them anyway.
constexpr std::string_view kOptionalHardwareFields[] = {"core.accumulator_bytes", "interconnect.link_latency_s",
                                                        "interconnect.wraparound_axis",
                                                        "interconnect.dcn_bandwidth_bytes_per_s",
                                                        "interconnect.dcn_latency_s"};

bool optional_field_of_existing_section(const SourceNode& preset, const std::string& dotted) {
  if (std::find(std::begin(kOptionalHardwareFields), std::end(kOptionalHardwareFields), dotted) ==
      std::end(kOptionalHardwareFields)) {
    return false;
  }
  const SourceNode* section = preset.find(dotted.substr(0, dotted.find('.')));
  return section != nullptr && section->is_map() && section->find(dotted.substr(dotted.find('.') + 1)) == nullptr;
}

void check_override_key(const SourceNode& preset, const std::string& dotted, const SourceNode& key_node,
                        const SourceNode& value, const std::string& preset_path) {
  if (optional_field_of_existing_section(preset, dotted)) {
    if (value.is_list() || value.is_map()) {
      fail_at(value, fmt::format("'tpu.hardware.{}' is {}", dotted, value.describe()), "a single value");
    }
    return;
  }
  const SourceNode* node = &preset;
  std::string walked;
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted.find('.', start);
    const std::string part = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::vector<std::string> known;
    if (node->is_map()) {
      for (const auto& entry : node->entries) known.push_back(entry.first->text);
    }
    const SourceNode* next = node->is_map() ? node->find(part) : nullptr;
    const std::string full = walked.empty() ? part : walked + "." + part;
    if (next == nullptr) {
      fail_at(key_node, fmt::format("unknown hardware key 'tpu.hardware.{}'{}", full, did_you_mean(part, known)),
              fmt::format("a key of {} under '{}': {}", fs::path(preset_path).filename().string(),
                          walked.empty() ? "the top" : walked, quoted_names(known)));
    }
    walked = full;
    node = next;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (node->is_map()) {
    fail_at(value, fmt::format("'tpu.hardware.{}' is a section of the preset, not a value", dotted),
            "a key with a value, e.g. core.mxu.rows");
  }
  if (node->is_list() != value.is_list()) {
    fail_at(value, fmt::format("'tpu.hardware.{}' is {}", dotted, value.describe()),
            node->is_list() ? "a list, like the preset's" : "a single value, like the preset's");
  }
}

std::string emit_scalar_or_list(const SourceNode& node) {
  if (!node.is_list()) return node.text;
  std::string out = "[";
  for (std::size_t i = 0; i < node.items.size(); ++i) out += (i > 0 ? ", " : "") + node.items[i]->text;
  return out + "]";
}

}  // namespace

std::vector<std::string> tpu_preset_dirs(const std::vector<std::string>& extra, const std::string& experiment_dir) {
  std::vector<std::string> dirs = extra;
  if (const char* env = std::getenv("ACCEL_TPU_CONFIG_DIR"); env != nullptr && *env != '\0') dirs.emplace_back(env);
  if (!experiment_dir.empty()) dirs.push_back((fs::path(experiment_dir) / "tpu").string());
  if (*ACCEL_EXPERIMENT_CONFIG_DIR != '\0') dirs.push_back((fs::path(ACCEL_EXPERIMENT_CONFIG_DIR) / "tpu").string());
  if (*ACCEL_EXPERIMENT_INSTALL_CONFIG_DIR != '\0') {
    dirs.push_back((fs::path(ACCEL_EXPERIMENT_INSTALL_CONFIG_DIR) / "tpu").string());
  }
  return dirs;
}

TpuSystem read_tpu_system(const SourceNode* tpu, const std::vector<std::string>& search_dirs,
                          const std::string& experiment_dir, const SourceLimits& limits) {
  TpuSystem out;
  const SourceNode* preset = nullptr;
  if (tpu != nullptr && tpu->is_scalar()) preset = tpu;
  if (tpu != nullptr && tpu->is_map()) preset = tpu->find("preset");
  if (preset != nullptr) out.preset = preset->text;

  if (looks_like_path(out.preset)) {
    fs::path path = out.preset;
    if (path.is_relative() && !experiment_dir.empty()) path = fs::path(experiment_dir) / path;
    std::error_code error;
    if (!fs::is_regular_file(path, error)) {
      fail_at(preset != nullptr ? preset->where : SourceLocation{}, fmt::format("TPU hardware file '{}' not found", path.string()),
              "an existing YAML file (relative paths start at the experiment file's folder)");
    }
    out.preset_path = path.string();
  } else {
    for (const auto& dir : search_dirs) {
      std::error_code error;
      const fs::path candidate = fs::path(dir) / (out.preset + ".yaml");
      if (fs::is_regular_file(candidate, error)) {
        out.preset_path = candidate.string();
        break;
      }
    }
    if (out.preset_path.empty()) {
      const auto names = preset_names(search_dirs);
      const SourceLocation where = preset != nullptr ? preset->where : (tpu != nullptr ? tpu->where : SourceLocation{});
      fail_at(where, fmt::format("unknown TPU preset '{}'{}", out.preset, did_you_mean(out.preset, names)),
              names.empty() ? "a path to a TPU hardware YAML file (no presets found; set ACCEL_TPU_CONFIG_DIR)"
                            : "a preset (" + quoted_names(names) + ") or a path to a YAML file");
    }
  }
  if (tpu == nullptr || !tpu->is_map()) return out;

  if (const SourceNode* array = tpu->find("array")) {
    int rows = 0;
    int columns = 0;
    parse_array_size(array->text, rows, columns);
    out.array_rows = rows;
    out.array_columns = columns;
  }
  if (const SourceNode* dataflow = tpu->find("dataflow")) out.dataflow = dataflow->text;
  if (const SourceNode* timing = tpu->find("timing")) out.timing = timing->text;
  if (const SourceNode* hardware = tpu->find("hardware")) {
    SourceNodePtr preset_tree;
    try {
      preset_tree = load_preset(out.preset_path, limits);
    } catch (const ExperimentError& error) {
      fail_at(preset != nullptr ? preset->where : tpu->where,
              fmt::format("the TPU preset cannot be read: {}", error.what()), "a valid TPU hardware YAML file");
    }
    std::vector<std::pair<std::string, const SourceNode*>> overrides;
    std::vector<const SourceNode*> key_nodes;
    flatten_overrides(*hardware, "", overrides, key_nodes);
    for (std::size_t i = 0; i < overrides.size(); ++i) {
      check_override_key(*preset_tree, overrides[i].first, *key_nodes[i], *overrides[i].second, out.preset_path);
      out.hardware_overrides.emplace_back(overrides[i].first, emit_scalar_or_list(*overrides[i].second));
      out.hardware_override_locations[overrides[i].first] = overrides[i].second->where;
    }
  }
  return out;
}

}  // namespace accel::experiment
