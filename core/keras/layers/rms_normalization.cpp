#include <accel/keras/layers/rms_normalization.hpp>

#include <accel/ops.hpp>

#include "../utils/cast_to.hpp"
#include "normalized_axes.hpp"

namespace accel::keras {

RMSNormalization::RMSNormalization(RMSNormalizationOptions options)
    : Layer("RMSNormalization", options.name), options_(std::move(options)) {
  normalized_axes::check_options(options_.axis, options_.epsilon, "RMSNormalization '" + name() + "'");
}

void RMSNormalization::build_weights(const LayerShape& input_shape) {
  const normalized_axes::Resolved resolved =
      normalized_axes::resolve(options_.axis, input_shape, "RMSNormalization '" + name() + "'");
  axes_ = resolved.axes;
  broadcast_shape_ = resolved.broadcast_shape;
  scale_ = add_weight("scale", resolved.parameter_shape, Ones());
}

Tensor RMSNormalization::call(const Tensor& given_inputs, bool) {
  normalized_axes::check_input({axes_, Shape(), broadcast_shape_}, given_inputs.shape(),
                               "RMSNormalization '" + name() + "'");
  // Keras's ops.rms_normalization: in float32 at least, x * rrms, then * scale,
  // cast back to the input's dtype.
  const DType dtype = is_floating(given_inputs.dtype()) ? DType::kFloat32 : given_inputs.dtype();
  const Tensor x = detail::cast_to(given_inputs, dtype);
  const Tensor mean_square = ops::reduce_mean(ops::square(x), axes_, /*keep_dims=*/true);
  const Tensor reciprocal_rms = ops::rsqrt(ops::add(mean_square, ops::fill({}, options_.epsilon, dtype)));
  const Tensor scale = detail::cast_to(scale_.value().reshape(broadcast_shape_), dtype);
  return detail::cast_to(ops::mul(ops::mul(x, reciprocal_rms), scale), given_inputs.dtype());
}

}  // namespace accel::keras
