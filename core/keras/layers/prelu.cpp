#include <accel/keras/layers/prelu.hpp>

#include <accel/error.hpp>
#include <accel/keras/layer_shape.hpp>
#include <accel/ops.hpp>

namespace accel::keras {

PReLU::PReLU(PReLUOptions options) : Layer("PReLU", options.name), options_(std::move(options)) {
  for (int32_t axis : options_.shared_axes) {
    if (axis < 1) {
      throw InvalidArgumentError("PReLU '" + name() + "': shared_axes holds " + std::to_string(axis) +
                                 "; axes count from 1 (the batch axis 0 is always shared)");
    }
  }
}

void PReLU::build_weights(const LayerShape& input_shape) {
  std::vector<int64_t> alpha_shape(input_shape.begin() + 1, input_shape.end());
  for (int32_t axis : options_.shared_axes) {
    if (static_cast<size_t>(axis) > alpha_shape.size()) {
      throw InvalidArgumentError("PReLU '" + name() + "': shared axis " + std::to_string(axis) +
                                 " is not an axis of the input " + format_layer_shape(input_shape));
    }
    alpha_shape[axis - 1] = 1;
  }
  for (int64_t dim : alpha_shape) {
    if (dim == kUnknownDim) {
      throw InvalidArgumentError("PReLU '" + name() + "': the input " + format_layer_shape(input_shape) +
                                 " has an axis of unknown size that shared_axes does not share");
    }
  }
  alpha_ = add_weight("alpha", Shape(alpha_shape), *options_.alpha_initializer);
}

Tensor PReLU::call(const Tensor& x, bool) {
  const Tensor positive = ops::relu(x);
  const Tensor negative = ops::mul(ops::neg(alpha_.value()), ops::relu(ops::neg(x)));
  return ops::add(positive, negative);
}

}  // namespace accel::keras
