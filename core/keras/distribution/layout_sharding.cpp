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

}  // namespace accel::keras::distribution
