#include <accel/keras/layers/repeat_vector.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

namespace accel::keras {

RepeatVector::RepeatVector(int64_t n, std::string name) : Layer("RepeatVector", std::move(name)), n_(n) {
  if (n_ < 1) {
    throw InvalidArgumentError("RepeatVector '" + this->name() + "': n must be at least 1, got " + std::to_string(n_));
  }
}

LayerShape RepeatVector::compute_output_shape(const LayerShape& input_shape) const {
  if (input_shape.size() != 2) {
    throw InvalidArgumentError("RepeatVector '" + name() + "' expects inputs of shape (batch, features), got " +
                               format_layer_shape(input_shape));
  }
  return {input_shape[0], n_, input_shape[1]};
}

Tensor RepeatVector::call(const Tensor& inputs, bool) {
  const LayerShape output = compute_output_shape(inputs.shape().dims());
  // Keras's backend.repeat: a new axis of 1 after the batch, tiled n times (here broadcast).
  return ops::broadcast_to(inputs.reshape(Shape{output[0], 1, output[2]}), Shape(output));
}

}  // namespace accel::keras
