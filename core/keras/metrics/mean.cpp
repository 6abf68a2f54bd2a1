#include <accel/keras/metrics.hpp>

#include <accel/ops.hpp>

#include "../utils/constant_like.hpp"

namespace accel::keras {

void Mean::update_state(double value, double weight) {
  total_ += value * weight;
  count_ += weight;
}

void Mean::update_state(const Tensor& y_true, const Tensor& y_pred) {
  const BatchContribution batch = batch_contribution(y_true, y_pred);
  add_batch(batch.sum, batch.count);
}

Mean::BatchContribution Mean::batch_contribution(const Tensor&, const Tensor& values) const {
  return {ops::reduce_sum(values), static_cast<double>(values.element_count())};
}

void Mean::add_batch(const Tensor& sum, double count) {
  total_ += sum.dtype() == DType::kInt64 ? static_cast<double>(sum.item<int64_t>()) : detail::scalar_to_double(sum);
  count_ += count;
}

}  // namespace accel::keras
