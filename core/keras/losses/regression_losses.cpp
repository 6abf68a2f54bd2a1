// Regression losses (keras.losses.MeanSquaredError).
#include <accel/keras/losses.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "../utils/cast_to.hpp"

namespace accel::keras {

MeanSquaredError::MeanSquaredError(RegressionLossOptions options)
    : Loss(options.name.empty() ? "mean_squared_error" : options.name, options.reduction) {}

Tensor MeanSquaredError::call(const Tensor& y_true, const Tensor& y_pred) const {
  const Tensor labels = detail::cast_to(y_true, y_pred.dtype());
  // Broadcasting as Keras would; only a rank-0 result has no axis to average.
  const Tensor squared_error = ops::square(ops::sub(y_pred, labels));
  if (squared_error.rank() == 0) return squared_error;
  return ops::reduce_mean(squared_error, {-1});
}

}  // namespace accel::keras
