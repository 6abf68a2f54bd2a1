// LayerNormalization: the axes' checks (Keras's validate_axis) and the
// normalization, composed from primitive ops so that the tape differentiates
// through the mean and variance.
#include <accel/keras/layers/layer_normalization.hpp>

#include <accel/ops.hpp>

#include "../utils/cast_to.hpp"
#include "normalized_axes.hpp"


namespace accel::keras {

LayerNormalization::LayerNormalization(LayerNormalizationOptions options)
    : Layer("LayerNormalization", options.name), options_(std::move(options)) {
  set_autocast(false);  // Keras 3: computes in float32 from the inputs as given
  normalized_axes::check_options(options_.axis, options_.epsilon, "LayerNormalization '" + name() + "'");
}

void LayerNormalization::build_weights(const LayerShape& input_shape) {
  const normalized_axes::Resolved resolved =
      normalized_axes::resolve(options_.axis, input_shape, "LayerNormalization '" + name() + "'");
  axes_ = resolved.axes;
  broadcast_shape_ = resolved.broadcast_shape;
  if (options_.scale) gamma_ = add_weight("gamma", resolved.parameter_shape, *options_.gamma_initializer);
  if (options_.center) beta_ = add_weight("beta", resolved.parameter_shape, *options_.beta_initializer);
}

Tensor LayerNormalization::call(const Tensor& given_inputs, bool) {
  normalized_axes::check_input({axes_, Shape(), broadcast_shape_}, given_inputs.shape(),
                               "LayerNormalization '" + name() + "'");
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
