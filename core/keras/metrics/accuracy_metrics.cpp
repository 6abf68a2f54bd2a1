// The accuracy metrics (keras.metrics.*Accuracy) with Keras 2's formulas, and
// the resolution of "accuracy" from the shapes of labels and predictions.
#include <accel/keras/metrics.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "../utils/constant_like.hpp"
#include "../utils/cast_to.hpp"

namespace accel::keras {
namespace {

// The number of true elements of a boolean tensor, counted on its device.
Tensor count_true(const Tensor& matches) { return ops::reduce_sum(ops::cast(matches, DType::kInt64)); }

}  // namespace

Mean::BatchContribution SparseCategoricalAccuracy::batch_contribution(const Tensor& y_true, const Tensor& y_pred) const {
  // Labels of y_pred's rank carry a trailing axis of 1 that Keras squeezes.
  const Tensor labels = y_true.reshape(Shape{-1});
  const Tensor predicted = ops::argmax(y_pred, -1).reshape(Shape{-1});
  if (labels.element_count() != predicted.element_count()) {
    throw InvalidArgumentError(name() + ": " + std::to_string(labels.element_count()) + " labels for predictions " +
                               y_pred.shape().to_string());
  }
  const Tensor labels_as_int64 = detail::cast_to(labels, DType::kInt64);
  return {count_true(ops::equal(labels_as_int64, predicted)), static_cast<double>(labels.element_count())};
}

Mean::BatchContribution CategoricalAccuracy::batch_contribution(const Tensor& y_true, const Tensor& y_pred) const {
  const Tensor matches = ops::equal(ops::argmax(y_true, -1), ops::argmax(y_pred, -1));
  return {count_true(matches), static_cast<double>(matches.element_count())};
}

Mean::BatchContribution BinaryAccuracy::batch_contribution(const Tensor& y_true, const Tensor& y_pred) const {
  const Tensor predicted = ops::cast(ops::greater(y_pred, detail::constant_like(threshold_, y_pred)), y_pred.dtype());
  const Tensor labels = detail::cast_to(y_true, y_pred.dtype());
  const Tensor matches = ops::cast(ops::equal(labels.reshape(predicted.shape()), predicted), DType::kFloat32);
  // Keras averages each sample over the last axis, then the samples.
  const Tensor per_sample = matches.rank() == 0 ? matches : ops::reduce_mean(matches, {-1});
  return {ops::reduce_sum(per_sample), static_cast<double>(per_sample.element_count())};
}

std::shared_ptr<Metric> get_metric(std::string_view name, const Shape& y_true_shape, const Shape& y_pred_shape) {
  const std::string metric_name(name);
  if (name == "accuracy" || name == "acc") {
    const int64_t true_last = y_true_shape.rank() > 0 ? y_true_shape.dims().back() : 1;
    const int64_t pred_last = y_pred_shape.rank() > 0 ? y_pred_shape.dims().back() : 1;
    const bool binary = pred_last == 1;
    const bool sparse = y_true_shape.rank() < y_pred_shape.rank() || (true_last == 1 && pred_last > 1);
    if (binary) return std::make_shared<BinaryAccuracy>(metric_name);
    if (sparse) return std::make_shared<SparseCategoricalAccuracy>(metric_name);
    return std::make_shared<CategoricalAccuracy>(metric_name);
  }
  if (name == "binary_accuracy") return std::make_shared<BinaryAccuracy>();
  if (name == "categorical_accuracy") return std::make_shared<CategoricalAccuracy>();
  if (name == "sparse_categorical_accuracy") return std::make_shared<SparseCategoricalAccuracy>();
  throw InvalidArgumentError("unknown metric '" + metric_name +
                             "'; expected one of accuracy, acc, binary_accuracy, categorical_accuracy, "
                             "sparse_categorical_accuracy");
}

}  // namespace accel::keras
