// The gradient of BATCH_NORM (FusedBatchNormV3 in training): one
// BATCH_NORM_BACKWARD for the normalized output's gradient, plus the plain
// terms of gradients that reach the batch statistics themselves (they are
// outputs too, read by the moving averages, which do not differentiate them).
#include "builtin_gradients.hpp"
#include "gradient_math.hpp"

namespace accel::autodiff {
namespace {

using namespace ops;

std::vector<Tensor> batch_norm_gradient(const GradientContext& context) {
  const Tensor& x = context.input(0);
  const Tensor& scale = context.input(1);
  const Tensor& mean = context.output(1);
  const Tensor& variance = context.output(2);
  const double epsilon = context.op().attributes<AccelBatchNormAttributes>().epsilon;
  const int64_t features = scale.shape().element_count();
  const Shape per_feature{1, features};
  const Shape rows{features == 0 ? 0 : x.shape().element_count() / features, features};

  Tensor dx, dscale, doffset;
  if (const Tensor& dy = context.output_gradient(0); dy.defined()) {
    auto [input_gradient, scale_gradient, offset_gradient] = batch_norm_backward(dy, x, scale, mean, variance, epsilon);
    dx = input_gradient.reshape(rows);
    dscale = scale_gradient;
    doffset = offset_gradient;
  }
  // mean = sum(x) / n, variance = sum((x - mean)^2) / n over the rows, in
  // the statistics' dtype (float32 for a 16-bit x), added to dx in x's.
  const Tensor count = scalar_like(static_cast<double>(rows[0]), mean);
  auto accumulate = [&](const Tensor& statistic_term) {
    const Tensor term = statistic_term.dtype() == x.dtype() ? statistic_term : cast(statistic_term, x.dtype());
    dx = dx.defined() ? add(dx, term) : broadcast_to(term, rows);
  };
  if (const Tensor& dmean = context.output_gradient(1); dmean.defined()) {
    accumulate(div(dmean.reshape(per_feature), count));
  }
  if (const Tensor& dvariance = context.output_gradient(2); dvariance.defined()) {
    const Tensor x_rows = x.dtype() == mean.dtype() ? x.reshape(rows) : cast(x.reshape(rows), mean.dtype());
    const Tensor centered = sub(x_rows, mean.reshape(per_feature));
    accumulate(mul(centered, div(mul(dvariance.reshape(per_feature), scalar_like(2.0, mean)), count)));
  }
  if (dx.defined()) dx = dx.reshape(x.shape());
  return {dx, dscale, doffset};
}

}  // namespace

void register_normalization_gradients(GradientRegistry& registry) {
  registry.register_gradient(ACCEL_OP_BATCH_NORM, "FusedBatchNormV3", batch_norm_gradient);
}

}  // namespace accel::autodiff
