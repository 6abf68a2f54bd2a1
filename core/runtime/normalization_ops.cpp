// ops::batch_norm and ops::batch_norm_backward: a training step's batch
// normalization as the fused BATCH_NORM op where the device claims it, and as
// the primitive ops it stands for where it does not (or where the features are
// not the last axis), so that every device and every layout trains the same.
#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "runtime/dispatch.hpp"
#include "runtime/logical_device.hpp"
#include "runtime/op_arguments.hpp"

#include <fmt/format.h>

namespace accel::ops {
namespace {

using arguments::invalid;
using arguments::make_attributes;
using arguments::normalize_axis;
using arguments::require_float;
using detail::OutputSpec;

AccelBatchNormAttributes attributes_for(double epsilon) {
  auto attributes = make_attributes<AccelBatchNormAttributes>();
  attributes.epsilon = epsilon;
  return attributes;
}

bool is_16_bit(DType dtype) { return dtype == DType::kBFloat16 || dtype == DType::kFloat16; }

// x[..., features] with float elements, and per-feature operands [features]
// of x's dtype or, for a 16-bit x, float32 (FusedBatchNormV3's U); returns
// the per-feature dtype.
DType check_operands(AccelOp op, const Tensor& x, int32_t axis, std::initializer_list<const Tensor*> per_feature) {
  require_float(op, x);
  if (x.rank() < 1) invalid(op, "x must have at least one axis");
  const int64_t features = x.shape()[axis];
  const DType feature_dtype =
      is_16_bit(x.dtype()) && (*per_feature.begin())->dtype() == DType::kFloat32 ? DType::kFloat32 : x.dtype();
  for (const Tensor* operand : per_feature) {
    if (operand->dtype() != feature_dtype || operand->shape() != Shape{features}) {
      invalid(op, fmt::format("expected {}[{}] beside x {}{}{}, got {}{}", dtype_name(feature_dtype), features,
                              dtype_name(x.dtype()), x.shape().to_string(),
                              is_16_bit(x.dtype()) ? " (or float32 throughout)" : "", dtype_name(operand->dtype()),
                              operand->shape().to_string()));
    }
  }
  return feature_dtype;
}

// The fused op where the device the op would run on claims it; with float32
// per-feature operands beside a 16-bit x, only on a plugin of API 1.7 or later.
bool fused_on_device(AccelOp op, std::span<const Tensor> inputs, DType feature_dtype) {
  const detail::LogicalDevice* device = detail::place_op(inputs);
  if (feature_dtype != inputs[0].dtype() && device->plugin().api->api_minor < 7) return false;
  return device->supports(op, static_cast<AccelDType>(inputs[0].dtype()));
}

// The same normalization from primitive ops, the features on any axis.
BatchNormResult compose_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, double epsilon,
                                   int32_t axis) {
  std::vector<int32_t> reduced;
  std::vector<int64_t> kept(static_cast<size_t>(x.rank()), 1);
  kept[static_cast<size_t>(axis)] = x.shape()[axis];
  for (int32_t other = 0; other < x.rank(); ++other) {
    if (other != axis) reduced.push_back(other);
  }
  const Shape per_feature(kept);
  const Tensor mean = reduce_mean(x, reduced, /*keep_dims=*/true);
  const Tensor variance = reduce_mean(square(sub(x, mean)), reduced, /*keep_dims=*/true);
  const Tensor inverse = mul(rsqrt(add(variance, fill({}, epsilon, x.dtype()))), scale.reshape(per_feature));
  const Tensor shift = sub(offset.reshape(per_feature), mul(mean, inverse));
  const Shape statistics{x.shape()[axis]};
  return {add(mul(x, inverse), shift), mean.reshape(statistics), variance.reshape(statistics)};
}

}  // namespace

BatchNormResult batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, double epsilon,
                           int32_t axis) {
  constexpr AccelOp op = ACCEL_OP_BATCH_NORM;
  const int32_t rank = x.rank();
  const int32_t resolved = normalize_axis(op, axis, rank);
  const DType feature_dtype = check_operands(op, x, resolved, {&scale, &offset});
  if (!(epsilon > 0.0)) invalid(op, fmt::format("epsilon must be positive, got {}", epsilon));
  const std::vector<Tensor> inputs = {x, scale, offset};
  if (resolved != rank - 1 || !fused_on_device(op, inputs, feature_dtype)) {
    if (feature_dtype == x.dtype()) return compose_batch_norm(x, scale, offset, epsilon, resolved);
    BatchNormResult result = compose_batch_norm(cast(x, feature_dtype), scale, offset, epsilon, resolved);
    result.y = cast(result.y, x.dtype());
    return result;
  }
  const AccelBatchNormAttributes attributes = attributes_for(epsilon);
  const Shape statistics{x.shape()[resolved]};
  const std::vector<OutputSpec> outputs = {
      {x.shape(), x.dtype()}, {statistics, feature_dtype}, {statistics, feature_dtype}};
  std::vector<Tensor> results = detail::run_op(op, inputs, outputs, &attributes);
  return {results[0], results[1], results[2]};
}

std::array<Tensor, 3> batch_norm_backward(const Tensor& output_gradient, const Tensor& x, const Tensor& scale,
                                          const Tensor& mean, const Tensor& variance, double epsilon) {
  constexpr AccelOp op = ACCEL_OP_BATCH_NORM_BACKWARD;
  const DType feature_dtype = check_operands(op, x, x.rank() - 1, {&scale, &mean, &variance});
  if (output_gradient.dtype() != x.dtype() || output_gradient.shape() != x.shape()) {
    invalid(op, fmt::format("the output gradient {}{} must match x {}{}", dtype_name(output_gradient.dtype()),
                            output_gradient.shape().to_string(), dtype_name(x.dtype()), x.shape().to_string()));
  }
  const AccelBatchNormAttributes attributes = attributes_for(epsilon);
  const std::vector<Tensor> inputs = {output_gradient, x, scale, mean, variance};
  const std::vector<OutputSpec> outputs = {{x.shape(), x.dtype()}, {scale.shape(), feature_dtype},
                                           {scale.shape(), feature_dtype}};
  std::vector<Tensor> results = detail::run_op(op, inputs, outputs, &attributes);
  return {results[0], results[1], results[2]};
}

}  // namespace accel::ops
