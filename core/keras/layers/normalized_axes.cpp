#include "normalized_axes.hpp"

#include <accel/error.hpp>

#include <set>

namespace accel::keras::normalized_axes {

void check_options(const std::vector<int32_t>& axis, double epsilon, const std::string& layer) {
  if (axis.empty()) throw InvalidArgumentError(layer + ": axis must name at least one axis");
  if (!(epsilon > 0.0)) throw InvalidArgumentError(layer + ": epsilon must be positive, got " + std::to_string(epsilon));
}

Resolved resolve(const std::vector<int32_t>& axis, const LayerShape& input_shape, const std::string& layer) {
  if (axis.empty()) throw InvalidArgumentError(layer + ": axis must name at least one axis");
  const auto rank = static_cast<int32_t>(input_shape.size());
  Resolved resolved;
  std::set<int32_t> seen;
  std::vector<int64_t> parameter_dims;
  std::vector<int64_t> broadcast_dims(static_cast<size_t>(rank), 1);
  for (const int32_t requested : axis) {
    const int32_t resolved_axis = requested < 0 ? requested + rank : requested;
    if (resolved_axis < 0 || resolved_axis >= rank) {
      throw InvalidArgumentError(layer + ": axis " + std::to_string(requested) + " is out of range for the input " +
                                 format_layer_shape(input_shape));
    }
    if (!seen.insert(resolved_axis).second) {
      throw InvalidArgumentError(layer + ": duplicate axis " + std::to_string(requested));
    }
    const int64_t size = input_shape[static_cast<size_t>(resolved_axis)];
    if (size <= 0) {
      throw InvalidArgumentError(layer + ": axis " + std::to_string(requested) + " of the input " +
                                 format_layer_shape(input_shape) + " must have a known size (its parameters take it)");
    }
    resolved.axes.push_back(resolved_axis);
    parameter_dims.push_back(size);
    broadcast_dims[static_cast<size_t>(resolved_axis)] = size;
  }
  resolved.parameter_shape = Shape(parameter_dims);
  resolved.broadcast_shape = Shape(broadcast_dims);
  return resolved;
}

void check_input(const Resolved& resolved, const Shape& inputs, const std::string& layer) {
  if (inputs.rank() != resolved.broadcast_shape.rank()) {
    throw InvalidArgumentError(layer + " was built for inputs of rank " +
                               std::to_string(resolved.broadcast_shape.rank()) + ", got " + inputs.to_string());
  }
  for (const int32_t axis : resolved.axes) {
    if (inputs[axis] != resolved.broadcast_shape[axis]) {
      throw InvalidArgumentError(layer + ": axis " + std::to_string(axis) + " was built with size " +
                                 std::to_string(resolved.broadcast_shape[axis]) + ", got input " + inputs.to_string());
    }
  }
}

}  // namespace accel::keras::normalized_axes
