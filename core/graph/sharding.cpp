#include "graph/sharding.hpp"

#include <accel/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace accel::graph {

int64_t MeshShape::device_count() const noexcept {
  int64_t count = 1;
  for (int64_t size : axis_sizes) count *= size;
  return count;
}

int32_t MeshShape::axis_index(std::string_view name) const noexcept {
  for (size_t axis = 0; axis < axis_names.size(); ++axis) {
    if (axis_names[axis] == name) return static_cast<int32_t>(axis);
  }
  return -1;
}

bool ValueSharding::is_replicated() const noexcept { return sharded_axes() == 0 && partial_axes == 0; }

uint32_t ValueSharding::sharded_axes() const noexcept {
  uint32_t axes = 0;
  for (int32_t axis : dimension_axes) {
    if (axis != kReplicated) axes |= 1u << axis;
  }
  return axes;
}

namespace {

const char* reduction_name(PartialReduction reduction) {
  switch (reduction) {
    case PartialReduction::kSum: return "sum";
    case PartialReduction::kMean: return "mean";
    case PartialReduction::kMax: return "max";
    case PartialReduction::kMin: return "min";
    case PartialReduction::kNone: break;
  }
  return "none";
}

std::string axis_name(const MeshShape& mesh, int32_t axis) {
  return axis >= 0 && axis < mesh.rank() ? mesh.axis_names[static_cast<size_t>(axis)] : fmt::format("axis{}", axis);
}

}  // namespace

std::string describe(const ValueSharding& sharding, const MeshShape& mesh) {
  std::string text = "[";
  for (size_t dimension = 0; dimension < sharding.dimension_axes.size(); ++dimension) {
    if (dimension > 0) text += ", ";
    const int32_t axis = sharding.dimension_axes[dimension];
    text += axis == kReplicated ? "-" : axis_name(mesh, axis);
  }
  text += "]";
  if (sharding.is_partial()) {
    std::vector<std::string> axes;
    for (int32_t axis = 0; axis < 32; ++axis) {
      if ((sharding.partial_axes >> axis) & 1u) axes.push_back(axis_name(mesh, axis));
    }
    text += fmt::format(" partial {} over {{{}}}", reduction_name(sharding.reduction), fmt::join(axes, ", "));
  }
  return text;
}

Shape local_shape(const Shape& global, const ValueSharding& sharding, const MeshShape& mesh, std::string_view what) {
  std::vector<int64_t> dims = global.dims();
  for (size_t dimension = 0; dimension < dims.size() && dimension < sharding.dimension_axes.size(); ++dimension) {
    const int32_t axis = sharding.dimension_axes[dimension];
    if (axis == kReplicated) continue;
    const int64_t devices = mesh.axis_sizes[static_cast<size_t>(axis)];
    if (dims[dimension] % devices != 0) {
      throw InvalidArgumentError(fmt::format(
          "SPMD partitioning: dimension {} of {} (size {}, shape {}) does not split over mesh axis '{}' of {} "
          "devices; expected a multiple of {} (change the layout or the size)",
          dimension, what, dims[dimension], global.to_string(), axis_name(mesh, axis), devices, devices));
    }
    dims[dimension] /= devices;
  }
  return Shape(std::move(dims));
}

const char* collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather: return "AllGather";
    case CollectiveKind::kReduceScatter: return "ReduceScatter";
    case CollectiveKind::kAllReduce: return "AllReduce";
    case CollectiveKind::kAllToAll: return "AllToAll";
    case CollectiveKind::kLocalSlice: return "LocalSlice";
  }
  return "Collective";
}

}  // namespace accel::graph
