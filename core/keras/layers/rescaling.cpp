// Rescaling: Keras casts the inputs to the compute dtype (integer pixels
// too), then multiplies by scale and adds offset in that dtype.
#include <accel/keras/layers/rescaling.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include <cmath>

#include "../utils/cast_to.hpp"
#include "../utils/constant_like.hpp"

namespace accel::keras {

Rescaling::Rescaling(double scale, double offset, std::string name)
    : Layer("Rescaling", std::move(name)), scale_(scale), offset_(offset) {
  if (!std::isfinite(scale) || !std::isfinite(offset)) {
    throw InvalidArgumentError("Rescaling: scale and offset must be finite numbers");
  }
}

Tensor Rescaling::call(const Tensor& inputs, bool) {
  const Tensor x = detail::cast_to(inputs, compute_dtype());
  return ops::add(ops::mul(x, detail::constant_like(scale_, x)), detail::constant_like(offset_, x));
}

}  // namespace accel::keras
