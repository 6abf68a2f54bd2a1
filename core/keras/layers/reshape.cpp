#include <accel/keras/layers/reshape.hpp>

#include "format_tuple.hpp"

#include <accel/error.hpp>

#include <algorithm>

namespace accel::keras {

Reshape::Reshape(std::vector<int64_t> target_shape, std::string name)
    : Layer("Reshape", std::move(name)), target_shape_(std::move(target_shape)) {
  const auto unknown = std::count(target_shape_.begin(), target_shape_.end(), int64_t{-1});
  const bool negative = std::any_of(target_shape_.begin(), target_shape_.end(), [](int64_t dim) { return dim < -1; });
  if (unknown > 1 || negative) {
    throw InvalidArgumentError("Reshape '" + this->name() + "': target_shape may hold sizes >= 0 and at most one -1 "
                               "(the size to infer), got " + format_tuple(target_shape_));
  }
}

LayerShape Reshape::compute_output_shape(const LayerShape& input_shape) const {
  if (input_shape.empty()) {
    throw InvalidArgumentError("Reshape '" + name() + "' expects inputs with a batch axis, got a scalar shape ()");
  }
  LayerShape output{input_shape[0]};
  const bool input_known = std::none_of(input_shape.begin() + 1, input_shape.end(),
                                        [](int64_t dim) { return dim == kUnknownDim; });
  if (!input_known) {
    // Keras's rule: with a None input axis the -1 stays None (kUnknownDim is -1).
    output.insert(output.end(), target_shape_.begin(), target_shape_.end());
    return output;
  }
  int64_t input_elements = 1;
  for (size_t axis = 1; axis < input_shape.size(); ++axis) input_elements *= input_shape[axis];
  int64_t known_elements = 1;
  for (int64_t dim : target_shape_) {
    if (dim != -1) known_elements *= dim;
  }
  const bool infers = std::find(target_shape_.begin(), target_shape_.end(), int64_t{-1}) != target_shape_.end();
  const bool fits = infers ? known_elements != 0 && input_elements % known_elements == 0
                           : known_elements == input_elements;
  if (!fits) {
    throw InvalidArgumentError("Reshape '" + name() + "': the total size must be unchanged, but an input of shape " +
                               format_layer_shape(input_shape) + " (" + std::to_string(input_elements) +
                               " elements per example) cannot take target_shape " + format_tuple(target_shape_));
  }
  for (int64_t dim : target_shape_) output.push_back(dim == -1 ? input_elements / known_elements : dim);
  return output;
}

Tensor Reshape::call(const Tensor& inputs, bool) {
  // The eager shape is fully known: this infers the -1 and checks the sizes with the layer's own message.
  return inputs.reshape(Shape(compute_output_shape(inputs.shape().dims())));
}

}  // namespace accel::keras
