// auto_distribution: layouts from a mesh's axis names (auto_layout.hpp).
#include <accel/error.hpp>
#include <accel/keras/distribution/auto_layout.hpp>

#include "layout_sharding.hpp"

#include <map>
#include <set>
#include <optional>
#include <string>
#include <string_view>

namespace accel::keras::distribution {
namespace {

// The size most of the variables' dimensions share: the model's width.
int64_t model_width(const std::vector<Variable>& weights) {
  std::map<int64_t, int> counts;
  for (const Variable& variable : weights) {
    if (variable.shape().rank() < 2) continue;
    for (int32_t dimension = 0; dimension < variable.shape().rank(); ++dimension) ++counts[variable.shape()[dimension]];
  }
  int64_t width = 0;
  int most = 0;
  for (const auto& [size, count] : counts) {
    if (count > most) width = size, most = count;
  }
  return width;
}

// A LayoutMap key that matches exactly `path`: its regex metacharacters escaped.
std::string exact_key(const std::string& path) {
  std::string key = "^";
  for (char c : path) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) key += '\\';
    key += c;
  }
  return key + "$";
}

}  // namespace

std::string auto_layout_batch_axis(const std::vector<std::string>& axis_names) {
  std::set<std::string> seen;
  for (const std::string& name : axis_names) {
    if (name != "data" && name != "fsdp" && name != "tensor") {
      throw InvalidArgumentError("mesh axis '" + name +
                                 "': expected fsdp (batch and weights split), data (batch split) or tensor (heads, "
                                 "MLP units and vocabulary split)");
    }
    if (!seen.insert(name).second) throw InvalidArgumentError("mesh axis '" + name + "' named twice");
  }
  if (seen.contains("data") && seen.contains("fsdp")) {
    throw InvalidArgumentError("mesh axes fsdp and data both split the batch, and a batch splits along one mesh axis: "
                               "keep one (fsdp shards the weights too)");
  }
  if (!seen.contains("data") && !seen.contains("fsdp")) throw InvalidArgumentError("no mesh axis splits the batch; add fsdp or data");
  return seen.contains("fsdp") ? "fsdp" : "data";
}

std::shared_ptr<const Distribution> auto_distribution(const DeviceMesh& mesh, const std::vector<Variable>& weights) {
  const std::string batch_axis = auto_layout_batch_axis(mesh.axis_names());
  std::map<std::string, int64_t> size_of;
  for (size_t axis = 0; axis < mesh.axis_names().size(); ++axis) size_of[mesh.axis_names()[axis]] = mesh.shape()[axis];
  const int64_t width = model_width(weights);
  LayoutMap layouts(mesh);
  for (const Variable& variable : weights) {
    const Shape& shape = variable.shape();
    std::vector<std::optional<std::string>> axes(static_cast<size_t>(shape.rank()));
    bool split = false;
    if (const auto tensor = size_of.find("tensor"); tensor != size_of.end() && tensor->second > 1) {
      for (int32_t dimension = 0; dimension < shape.rank(); ++dimension) {
        if (shape[dimension] == width || shape[dimension] % tensor->second != 0) continue;
        axes[static_cast<size_t>(dimension)] = "tensor";
        split = true;
        break;
      }
    }
    if (const auto fsdp = size_of.find("fsdp"); fsdp != size_of.end() && fsdp->second > 1) {
      int32_t chosen = -1;
      for (int32_t dimension = 0; dimension < shape.rank(); ++dimension) {
        if (axes[static_cast<size_t>(dimension)] || shape[dimension] % fsdp->second != 0) continue;
        if (chosen < 0 || shape[dimension] > shape[chosen]) chosen = dimension;
      }
      if (chosen >= 0) {
        axes[static_cast<size_t>(chosen)] = "fsdp";
        split = true;
      }
    }
    if (split) layouts.set(exact_key(variable_path(variable.name())), TensorLayout{axes});
  }
  return std::make_shared<ModelParallel>(layouts, batch_axis);
}

}  // namespace accel::keras::distribution
