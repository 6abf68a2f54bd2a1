// LayerNormalization: the axes' checks (Keras's validate_axis) and the
// normalization, composed from primitive ops so that the tape differentiates
// through the mean and variance.
#include <accel/keras/layers/layer_normalization.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "../utils/cast_to.hpp"

#include <set>

namespace accel::keras {

LayerNormalization::LayerNormalization(LayerNormalizationOptions options)
    : Layer("LayerNormalization", options.name), options_(std::move(options)) {
  set_autocast(false);  // Keras 3: computes in float32 from the inputs as given
  if (options_.axis.empty()) {
    throw InvalidArgumentError("LayerNormalization '" + name() + "': axis must name at least one axis");
  }
  if (!(options_.epsilon > 0.0)) {
    throw InvalidArgumentError("LayerNormalization '" + name() + "': epsilon must be positive, got " +
                               std::to_string(options_.epsilon));
  }
}

void LayerNormalization::build_weights(const LayerShape& input_shape) {
  const auto rank = static_cast<int32_t>(input_shape.size());
  std::vector<int32_t> axes;
  std::set<int32_t> seen;
  for (const int32_t requested : options_.axis) {
    const int32_t axis = requested < 0 ? requested + rank : requested;
    if (axis < 0 || axis >= rank) {
      throw InvalidArgumentError("LayerNormalization '" + name() + "': axis " + std::to_string(requested) +
                                 " is out of range for the input " + format_layer_shape(input_shape));
    }
    if (!seen.insert(axis).second) {
      throw InvalidArgumentError("LayerNormalization '" + name() + "': duplicate axis " + std::to_string(requested));
    }
    if (input_shape[static_cast<size_t>(axis)] <= 0) {
      throw InvalidArgumentError("LayerNormalization '" + name() + "': axis " + std::to_string(requested) +
                                 " of the input " + format_layer_shape(input_shape) +
                                 " must have a known size (gamma and beta take it)");
    }
    axes.push_back(axis);
  }
  axes_ = axes;

  // As Keras: the parameters take the axes' sizes in the order given, and a
  // reshape (not a transpose) lays them out along the input's axes.
  std::vector<int64_t> parameter_dims;
  std::vector<int64_t> broadcast_dims(static_cast<size_t>(rank), 1);
  for (const int32_t axis : axes_) {
    parameter_dims.push_back(input_shape[static_cast<size_t>(axis)]);
    broadcast_dims[static_cast<size_t>(axis)] = input_shape[static_cast<size_t>(axis)];
  }
  broadcast_shape_ = Shape(broadcast_dims);
  const Shape parameter_shape(parameter_dims);
  if (options_.scale) gamma_ = add_weight("gamma", parameter_shape, *options_.gamma_initializer);
  if (options_.center) beta_ = add_weight("beta", parameter_shape, *options_.beta_initializer);
}

Tensor LayerNormalization::call(const Tensor& given_inputs, bool) {
  if (given_inputs.shape().rank() != broadcast_shape_.rank()) {
    throw InvalidArgumentError("LayerNormalization '" + name() + "' was built for inputs of rank " +
                               std::to_string(broadcast_shape_.rank()) + ", got " + given_inputs.shape().to_string());
  }
  for (const int32_t axis : axes_) {
    if (given_inputs.shape()[axis] != broadcast_shape_[axis]) {
      throw InvalidArgumentError("LayerNormalization '" + name() + "': axis " + std::to_string(axis) +
                                 " was built with size " + std::to_string(broadcast_shape_[axis]) + ", got input " +
                                 given_inputs.shape().to_string());
    }
  }
  // As Keras 3: computed in float32 at least (inputs are not autocast: a
  // float32 input is not rounded first), the output cast to the compute dtype.
  const DType dtype = is_floating(given_inputs.dtype()) ? DType::kFloat32 : given_inputs.dtype();
  const Tensor inputs = detail::cast_to(given_inputs, dtype);
  auto parameter = [&](const Variable& weight) { return detail::cast_to(weight.value().reshape(broadcast_shape_), dtype); };
  // The biased variance, as tf.nn.moments; arranged as tf.nn.batch_normalization
  // (x * inv + (beta - mean * inv), inv = gamma / sqrt(variance + epsilon)).
  const Tensor mean = ops::reduce_mean(inputs, axes_, /*keep_dims=*/true);
  const Tensor variance = ops::reduce_mean(ops::square(ops::sub(inputs, mean)), axes_, /*keep_dims=*/true);
  Tensor inv = ops::rsqrt(ops::add(variance, ops::fill({}, options_.epsilon, inputs.dtype())));
  if (options_.scale) inv = ops::mul(inv, parameter(gamma_));
  const Tensor mean_times_inv = ops::mul(mean, inv);
  const Tensor shift = options_.center ? ops::sub(parameter(beta_), mean_times_inv) : ops::neg(mean_times_inv);
  const Tensor outputs = ops::add(ops::mul(inputs, inv), shift);
  return detail::cast_to(outputs, compute_dtype());
}

}  // namespace accel::keras
