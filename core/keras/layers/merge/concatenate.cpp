// Concatenate: Keras 2's checks (one rank, equal sizes off the axis, None
// matching anything) and output shape (the axis summed, None if any is None).
#include <accel/keras/layers/concatenate.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

namespace accel::keras {

Concatenate::Concatenate(int32_t axis, std::string name) : Layer("Concatenate", std::move(name)), axis_(axis) {}

LayerShape Concatenate::compute_output_shape(const LayerShape& input_shape) const {
  throw InvalidArgumentError("A `Concatenate` layer should be called on a list of inputs ('" + name() + "' got " +
                             format_layer_shape(input_shape) + ")");
}

std::vector<LayerShape> Concatenate::compute_output_shapes(const std::vector<LayerShape>& input_shapes) const {
  if (input_shapes.empty()) {
    throw InvalidArgumentError("A `Concatenate` layer should be called on a list of at least 1 input ('" + name() +
                               "' got 0)");
  }
  const auto rank = static_cast<int64_t>(input_shapes.front().size());
  const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
  const std::string problem = "A `Concatenate` layer requires inputs with matching shapes except for the concatenation "
                              "axis. Received: input_shape=" + format_layer_shapes(input_shapes) + " ('" + name() + "')";
  if (axis < 0 || axis >= rank) throw InvalidArgumentError(problem + ": axis " + std::to_string(axis_) + " out of range");
  for (const LayerShape& shape : input_shapes) {
    if (static_cast<int64_t>(shape.size()) != rank) throw InvalidArgumentError(problem);
    for (int64_t dim = 0; dim < rank; ++dim) {
      if (dim == axis) continue;
      const int64_t a = input_shapes.front()[static_cast<size_t>(dim)];
      const int64_t b = shape[static_cast<size_t>(dim)];
      if (a != kUnknownDim && b != kUnknownDim && a != b) throw InvalidArgumentError(problem);
    }
  }
  LayerShape output = input_shapes.front();
  for (size_t index = 1; index < input_shapes.size(); ++index) {
    const int64_t size = input_shapes[index][static_cast<size_t>(axis)];
    int64_t& joined = output[static_cast<size_t>(axis)];
    if (joined == kUnknownDim || size == kUnknownDim) {
      joined = kUnknownDim;
      break;
    }
    joined += size;
  }
  return {output};
}

std::vector<Tensor> Concatenate::call_list(const std::vector<Tensor>& inputs, bool) {
  if (inputs.empty()) {
    throw InvalidArgumentError("A `Concatenate` layer should be called on a list of at least 1 input ('" + name() +
                               "' got 0)");
  }
  const int32_t axis = axis_ < 0 ? axis_ + inputs.front().rank() : axis_;
  return {inputs.size() == 1 ? inputs.front() : ops::concat(inputs, axis)};
}

}  // namespace accel::keras
