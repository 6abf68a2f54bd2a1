#include "timing/fidelity_table.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "timing/config_error.hpp"
#include "timing/presets.hpp"

namespace accel::tpu {
namespace {

[[noreturn]] void fail(const std::string& path, const YAML::Node& node, const std::string& key,
                       const std::string& problem, const std::string& expected) {
  const YAML::Mark mark = node.Mark();
  throw ConfigError(path, mark.line >= 0 ? mark.line + 1 : 0, mark.column >= 0 ? mark.column + 1 : 0, key, problem,
                    expected);
}

YAML::Node required(const std::string& path, const YAML::Node& map, const std::string& key, const std::string& where) {
  const YAML::Node value = map[key];
  if (!value.IsDefined()) fail(path, map, where + key, "missing key '" + where + key + "'", "'" + key + "'");
  return value;
}

double number(const std::string& path, const YAML::Node& map, const std::string& key, const std::string& where) {
  const YAML::Node value = required(path, map, key, where);
  try {
    const double out = value.as<double>();
    if (std::isfinite(out) && out >= 0) return out;
  } catch (const YAML::Exception&) {
  }
  fail(path, value, where + key, "'" + where + key + "' is not a number", "a finite number >= 0");
}

std::int64_t count(const std::string& path, const YAML::Node& map, const std::string& key, const std::string& where) {
  const double value = number(path, map, key, where);
  if (value < 1 || value > 1e15 || value != std::floor(value)) {
    fail(path, map[key], where + key, "'" + where + key + "' is not a positive integer", "an integer from 1 to 1e15");
  }
  return static_cast<std::int64_t>(value);
}

}  // namespace

const FidelityWorkload& FidelityTable::workload(const std::string& name) const {
  for (const auto& w : workloads) {
    if (w.name == name) return w;
  }
  throw std::out_of_range("fidelity table " + path + " has no workload '" + name + "'");
}

std::filesystem::path find_fidelity_table(const std::string& name) {
  for (const auto& dir : preset_search_dirs()) {
    const auto candidate = (dir / "fidelity" / (name + ".yaml")).lexically_normal();
    if (std::filesystem::is_regular_file(candidate)) return candidate;
  }
  throw ConfigError(name, 0, 0, "", "no fidelity table '" + name + "'",
                    "a file fidelity/" + name + ".yaml in the preset folders (configs/tpu)");
}

FidelityTable load_fidelity_table(const std::filesystem::path& file) {
  const std::string path = file.string();
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& error) {
    throw ConfigError(path, error.mark.line + 1, error.mark.column + 1, "", error.msg, "a readable YAML fidelity table");
  }
  FidelityTable table;
  table.path = path;
  table.source = required(path, root, "source", "").as<std::string>();
  table.preset = required(path, root, "preset", "").as<std::string>();
  const YAML::Node list = required(path, root, "workloads", "");
  if (!list.IsSequence() || list.size() == 0) fail(path, list, "workloads", "'workloads' is empty", "a list of workloads");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string where = "workloads[" + std::to_string(i) + "].";
    FidelityWorkload w;
    w.name = required(path, item, "name", where).as<std::string>();
    w.kind = required(path, item, "kind", where).as<std::string>();
    if (w.kind != "dense" && w.kind != "conv2d") {
      fail(path, item["kind"], where + "kind", "'" + where + "kind' is '" + w.kind + "'", "'dense' or 'conv2d'");
    }
    w.layers = count(path, item, "layers", where);
    w.weights = count(path, item, "weights", where);
    w.batch = count(path, item, "batch", where);
    if (w.kind == "conv2d") {
      w.spatial = count(path, item, "spatial", where);
      w.kernel = count(path, item, "kernel", where);
    }
    w.published_tops = number(path, item, "published_tops", where);
    w.tolerance = number(path, item, "tolerance", where);
    table.workloads.push_back(std::move(w));
  }
  return table;
}

std::int64_t layer_width(const FidelityWorkload& workload) {
  const double per_layer = static_cast<double>(workload.weights) / static_cast<double>(workload.layers);
  const double kernel_area = static_cast<double>(workload.kernel * workload.kernel);
  return std::max<std::int64_t>(1, std::llround(std::sqrt(per_layer / kernel_area)));
}

std::vector<OpTiming> workload_chain(const TimingModel& model, const FidelityWorkload& workload) {
  const std::int64_t width = layer_width(workload);
  const NumberType dtype = model.hardware().core.mxu.input_type;
  std::vector<OpTiming> chain;
  for (std::int64_t layer = 0; layer < workload.layers; ++layer) {
    OpTiming timing;
    std::int64_t outputs = 0;
    if (workload.kind == "dense") {
      timing = model.estimate_matmul(workload.batch, width, width, dtype);
      outputs = workload.batch * width;
    } else {
      Conv2dShape conv;
      conv.batch = workload.batch;
      conv.height = conv.width = workload.spatial;
      conv.channels = conv.filters = width;
      conv.kernel_h = conv.kernel_w = workload.kernel;
      conv.padding = Padding::kSame;
      timing = model.estimate_conv2d(conv, dtype);
      outputs = timing.gemm.m * timing.gemm.n;
    }
    // ReLU in the activation pipeline as each output tile leaves the array.
    chain.push_back(model.with_epilogue(std::move(timing), EpilogueWork{outputs, 1, 0, 0}));
  }
  return chain;
}

}  // namespace accel::tpu
