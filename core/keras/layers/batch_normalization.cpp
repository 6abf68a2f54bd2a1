#include <accel/keras/layers/batch_normalization.hpp>

#include <accel/autodiff/variable_autocast.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "../utils/cast_to.hpp"

#include <algorithm>

namespace accel::keras {

BatchNormalization::BatchNormalization(BatchNormalizationOptions options)
    : Layer("BatchNormalization", options.name), options_(std::move(options)) {
  if (!(options_.epsilon > 0.0)) {
    throw InvalidArgumentError("BatchNormalization '" + name() + "': epsilon must be positive, got " +
                               std::to_string(options_.epsilon));
  }
}

void BatchNormalization::build_weights(const LayerShape& input_shape) {
  const auto rank = static_cast<int32_t>(input_shape.size());
  const int32_t axis = options_.axis < 0 ? options_.axis + rank : options_.axis;
  if (axis < 0 || axis >= rank || input_shape[static_cast<size_t>(axis)] <= 0) {
    throw InvalidArgumentError("BatchNormalization '" + name() + "': axis " + std::to_string(options_.axis) +
                               " is not a known axis of the input " + format_layer_shape(input_shape));
  }
  feature_axis_ = axis;
  const int64_t features = input_shape[static_cast<size_t>(axis)];
  std::vector<int64_t> broadcast_dims(static_cast<size_t>(rank), 1);
  broadcast_dims[static_cast<size_t>(axis)] = features;
  broadcast_shape_ = Shape(broadcast_dims);

  const Shape parameter_shape{features};
  if (options_.scale) gamma_ = add_weight("gamma", parameter_shape, *options_.gamma_initializer);
  if (options_.center) beta_ = add_weight("beta", parameter_shape, *options_.beta_initializer);
  // As Keras: under a strategy each replica updates its own moving
  // statistics from its own batch, and a read outside the replicas (saving,
  // evaluating in one place) is their mean.
  moving_mean_ = add_weight("moving_mean", parameter_shape, *options_.moving_mean_initializer, /*trainable=*/false,
                            VariableSynchronization::kOnRead, VariableAggregation::kMean);
  moving_variance_ = add_weight("moving_variance", parameter_shape, *options_.moving_variance_initializer,
                                /*trainable=*/false, VariableSynchronization::kOnRead, VariableAggregation::kMean);
}

using detail::cast_to;

Tensor BatchNormalization::normalize(const Tensor& inputs, const Tensor& mean, const Tensor& variance) const {
  Tensor inv = ops::rsqrt(ops::add(variance, ops::fill({}, options_.epsilon, inputs.dtype())));
  if (options_.scale) inv = ops::mul(inv, cast_to(gamma_.value(), inputs.dtype()).reshape(broadcast_shape_));
  const Tensor mean_times_inv = ops::mul(mean, inv);
  const Tensor shift = options_.center
                           ? ops::sub(cast_to(beta_.value(), inputs.dtype()).reshape(broadcast_shape_), mean_times_inv)
                           : ops::neg(mean_times_inv);
  return ops::add(ops::mul(inputs, inv), shift);
}

void BatchNormalization::update_moving_statistic(Variable& moving, const Tensor& batch_statistic) {
  const Tensor decay = ops::fill({}, 1.0 - options_.momentum, moving.dtype());
  const Tensor batch = cast_to(batch_statistic, moving.dtype()).reshape(moving.shape());
  moving.assign_sub(ops::mul(ops::sub(moving.value(), batch), decay));
}

// Keras 2 normalizes 4-D inputs with the fused kernel (FusedBatchNormV3),
// which feeds the moving variance the unbiased batch variance, n / (n - 1)
// times the biased one it normalizes with; other ranks take the biased one.
Tensor BatchNormalization::moving_variance_sample(const Tensor& inputs, const Tensor& variance) const {
  if (inputs.shape().rank() != 4) return variance;
  const int64_t count = inputs.shape().element_count() / std::max<int64_t>(variance.shape().element_count(), 1);
  if (count <= 1) return variance;
  const double bessel = static_cast<double>(count) / static_cast<double>(count - 1);
  return ops::mul(variance, ops::fill({}, bessel, variance.dtype()));
}

Tensor BatchNormalization::call(const Tensor& cast_inputs, bool training) {
  if (cast_inputs.shape().rank() != broadcast_shape_.rank()) {
    throw InvalidArgumentError("BatchNormalization '" + name() + "' was built for inputs of rank " +
                               std::to_string(broadcast_shape_.rank()) + ", got " + cast_inputs.shape().to_string());
  }
  // As Keras 3: the statistics overflow in 16 bits, so the layer computes in
  // float32 (its inputs arrive autocast to the compute dtype, then go up to
  // float32), reads its weights as stored, and casts its outputs back.
  const VariableAutocastScope weights_as_stored(std::nullopt);
  const DType dtype = is_floating(cast_inputs.dtype()) ? DType::kFloat32 : cast_inputs.dtype();
  if (!(training && trainable())) {
    return cast_to(normalize(cast_to(cast_inputs, dtype), cast_to(moving_mean_.value(), dtype).reshape(broadcast_shape_),
                              cast_to(moving_variance_.value(), dtype).reshape(broadcast_shape_)),
                    compute_dtype());
  }
  // One fused op where the features are last and the device has it, else the
  // primitive ops; the tape differentiates through the batch statistics either way.
  // A 16-bit input goes to the op as it is, with float32 scale and offset:
  // the op computes in float32 (FusedBatchNormV3's T and U), the same numbers
  // as the casts around it, which a TPU compiler would fuse away.
  const int64_t features = broadcast_shape_[feature_axis_];
  const Tensor scale = options_.scale ? cast_to(gamma_.value(), dtype) : ops::ones(Shape{features}, dtype);
  const Tensor offset = options_.center ? cast_to(beta_.value(), dtype) : ops::zeros(Shape{features}, dtype);
  const ops::BatchNormResult result = ops::batch_norm(cast_inputs, scale, offset, options_.epsilon, feature_axis_);
  update_moving_statistic(moving_mean_, result.mean);
  update_moving_statistic(moving_variance_, moving_variance_sample(cast_inputs, result.variance));
  return cast_to(result.y, compute_dtype());
}

}  // namespace accel::keras
