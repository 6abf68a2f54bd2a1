// The activation layer classes, as Keras 3.15's layers compute them
// (keras/src/activations/activations.py, ReLU.static_call).
#include <accel/keras/layers/activation_layers.hpp>

#include <accel/error.hpp>
#include <accel/keras/activations.hpp>
#include <accel/ops.hpp>

#include <cmath>

#include "../utils/constant_like.hpp"

namespace accel::keras {

using detail::constant_like;

ReLU::ReLU(ReLUOptions options) : Layer("ReLU", options.name), options_(std::move(options)) {
  if (options_.max_value && !(*options_.max_value >= 0.0)) {
    throw InvalidArgumentError("ReLU: max_value must be >= 0, got " + std::to_string(*options_.max_value));
  }
  if (!(options_.negative_slope >= 0.0) || !std::isfinite(options_.threshold)) {
    throw InvalidArgumentError("ReLU: negative_slope must be >= 0 and threshold finite");
  }
}

// Keras: with a slope (and a cap or a threshold) the negative part is
// relu(threshold - x); the positive part is x above the threshold (or
// relu(x)), capped at max_value; the result is positive - slope * negative.
Tensor ReLU::call(const Tensor& x, bool) {
  const double slope = options_.negative_slope, threshold = options_.threshold;
  if (slope != 0.0 && !options_.max_value && threshold == 0.0) return leaky_relu(x, slope);
  Tensor negative_part;
  if (slope != 0.0) negative_part = ops::relu(threshold != 0.0 ? ops::add(ops::neg(x), constant_like(threshold, x)) : ops::neg(x));
  Tensor y = threshold != 0.0 ? ops::select(ops::greater(x, constant_like(threshold, x)), x, constant_like(0.0, x))
                              : ops::relu(x);
  if (options_.max_value) y = ops::minimum(ops::maximum(y, constant_like(0.0, y)), constant_like(*options_.max_value, y));
  if (slope != 0.0) y = ops::sub(y, ops::mul(constant_like(slope, negative_part), negative_part));
  return y;
}

LeakyReLU::LeakyReLU(double negative_slope, std::string name)
    : Layer("LeakyReLU", std::move(name)), negative_slope_(negative_slope) {
  if (!(negative_slope >= 0.0)) {
    throw InvalidArgumentError("LeakyReLU: negative_slope must be >= 0, got " + std::to_string(negative_slope));
  }
}

Tensor LeakyReLU::call(const Tensor& x, bool) { return leaky_relu(x, negative_slope_); }

ELU::ELU(double alpha, std::string name) : Layer("ELU", std::move(name)), alpha_(alpha) {}

Tensor ELU::call(const Tensor& x, bool) { return elu(x, alpha_); }

Softmax::Softmax(int32_t axis, std::string name) : Layer("Softmax", std::move(name)), axis_(axis) {}

Tensor Softmax::call(const Tensor& x, bool) { return softmax(x, axis_); }

}  // namespace accel::keras
