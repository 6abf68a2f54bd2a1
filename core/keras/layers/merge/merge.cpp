// Merge: the list checks and output shapes shared by the elementwise merge
// layers (Keras 2's _Merge.build and compute_output_shape).
#include <accel/keras/layers/merge.hpp>

#include <accel/error.hpp>

#include <set>

namespace accel::keras {
namespace {

// Keras's _compute_elemwise_op_output_shape: aligned at the last axis, an
// unknown axis stays unknown, an axis of 1 takes the other's size.
LayerShape elementwise_shape(const LayerShape& first, const LayerShape& second, const std::string& where) {
  if (first.size() < second.size()) return elementwise_shape(second, first, where);
  LayerShape output(first.begin(), first.end() - static_cast<std::ptrdiff_t>(second.size()));
  const size_t offset = first.size() - second.size();
  for (size_t axis = 0; axis < second.size(); ++axis) {
    const int64_t a = first[offset + axis];
    const int64_t b = second[axis];
    if (a == kUnknownDim || b == kUnknownDim) {
      output.push_back(kUnknownDim);
    } else if (a == 1) {
      output.push_back(b);
    } else if (b == 1 || a == b) {
      output.push_back(a);
    } else {
      throw InvalidArgumentError(where + "inputs have incompatible shapes " + format_layer_shape(first) + " and " +
                                 format_layer_shape(second));
    }
  }
  return output;
}

}  // namespace

LayerShape Merge::compute_output_shape(const LayerShape& input_shape) const {
  throw InvalidArgumentError("A merge layer should be called on a list of inputs ('" + name() + "' got " +
                             format_layer_shape(input_shape) + ")");
}

void Merge::check_input_count(size_t count) const {
  if (count < 1) {
    throw InvalidArgumentError("A merge layer should be called on a list of at least 1 input ('" + name() + "' got " +
                               std::to_string(count) + ")");
  }
}

std::vector<LayerShape> Merge::compute_output_shapes(const std::vector<LayerShape>& input_shapes) const {
  check_input_count(input_shapes.size());
  const std::string where = class_name() + " '" + name() + "': ";
  std::set<int64_t> batch_sizes;
  for (const LayerShape& shape : input_shapes) {
    if (shape.empty()) throw InvalidArgumentError(where + "every input needs a batch axis, got " + format_layer_shapes(input_shapes));
    if (shape.front() != kUnknownDim) batch_sizes.insert(shape.front());
  }
  if (batch_sizes.size() > 1) {
    throw InvalidArgumentError(where + "cannot merge tensors with different batch sizes: " + format_layer_shapes(input_shapes));
  }
  LayerShape output(input_shapes.front().begin() + 1, input_shapes.front().end());
  for (size_t index = 1; index < input_shapes.size(); ++index) {
    output = elementwise_shape(output, LayerShape(input_shapes[index].begin() + 1, input_shapes[index].end()), where);
  }
  output.insert(output.begin(), batch_sizes.size() == 1 ? *batch_sizes.begin() : kUnknownDim);
  return {output};
}

std::vector<Tensor> Merge::call_list(const std::vector<Tensor>& inputs, bool) {
  check_input_count(inputs.size());
  return {merge(inputs)};
}

}  // namespace accel::keras
