#include "layout_sharding.hpp"

#include <accel/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace accel::keras::distribution {

graph::MeshShape mesh_shape(const DeviceMesh& mesh) { return graph::MeshShape{mesh.axis_names(), mesh.shape()}; }

graph::ValueSharding to_sharding(const TensorLayout& layout, const DeviceMesh& mesh) {
  graph::ValueSharding sharding = graph::ValueSharding::replicated(static_cast<int32_t>(layout.axes.size()));
  for (size_t dimension = 0; dimension < layout.axes.size(); ++dimension) {
    if (!layout.axes[dimension]) continue;
    const int32_t axis = mesh.axis_index(*layout.axes[dimension]);
    if (axis < 0) {
      throw InvalidArgumentError(fmt::format("layout {}: the mesh has no axis '{}'; its axes are [{}]",
                                             format_layout(layout), *layout.axes[dimension],
                                             fmt::join(mesh.axis_names(), ", ")));
    }
    sharding.dimension_axes[dimension] = axis;
  }
  return sharding;
}

std::string variable_path(const std::string& variable_name) {
  const bool suffixed = variable_name.size() > 2 && variable_name.compare(variable_name.size() - 2, 2, ":0") == 0;
  return suffixed ? variable_name.substr(0, variable_name.size() - 2) : variable_name;
}

ShardingsByStorage variable_shardings(const Distribution& distribution, const std::vector<Variable>& weights,
                                      const Optimizer* optimizer) {
  ShardingsByStorage by_storage;
  std::map<std::string, graph::ValueSharding> by_path;
  for (const Variable& weight : weights) {
    const std::string path = variable_path(weight.name());
    const graph::ValueSharding sharding =
        to_sharding(distribution.variable_layout(path, weight.value().rank()), distribution.mesh());
    by_storage[weight.value().storage().get()] = sharding;
    by_path[path] = sharding;
  }
  if (optimizer == nullptr) return by_storage;
  const std::string prefix = optimizer->name() + "/";
  for (const Variable& slot : optimizer->variables()) {
    // "Adam/dense/kernel/m:0": the slot "m" of "dense/kernel".
    const std::string path = variable_path(slot.name());
    const size_t last = path.rfind('/');
    if (path.rfind(prefix, 0) != 0 || last == std::string::npos || last < prefix.size()) continue;
    const auto variable = by_path.find(path.substr(prefix.size(), last - prefix.size()));
    if (variable != by_path.end()) by_storage[slot.value().storage().get()] = variable->second;
  }
  return by_storage;
}

}  // namespace accel::keras::distribution
