// The cross-entropy family (keras.losses probabilistic losses), with Keras 2's
// backend formulas: probabilities are clipped to [epsilon, 1 - epsilon] with
// epsilon = 1e-7 (keras.backend.epsilon()) before any log.
#include <accel/keras/losses.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "../utils/constant_like.hpp"
#include "../utils/cast_to.hpp"

namespace accel::keras {
namespace {

constexpr double kEpsilon = 1e-7;  // keras.backend.epsilon()

using detail::constant_like;

std::string name_or(const std::string& name, const char* keras_name) {
  return name.empty() ? keras_name : name;
}

Tensor clip_probabilities(const Tensor& probabilities) {
  return ops::minimum(ops::maximum(probabilities, constant_like(kEpsilon, probabilities)),
                      constant_like(1.0 - kEpsilon, probabilities));
}

// Labels as the float dtype of the predictions (they may arrive as integers).
Tensor as_dtype_of(const Tensor& labels, const Tensor& predictions) {
  return detail::cast_to(labels, predictions.dtype());
}

void check_same_shape(const std::string& loss, const Tensor& y_true, const Tensor& y_pred) {
  if (y_true.shape() != y_pred.shape()) {
    throw InvalidArgumentError(loss + ": y_true " + y_true.shape().to_string() + " and y_pred " +
                               y_pred.shape().to_string() + " must have the same shape");
  }
}

double checked_label_smoothing(const std::string& loss, double label_smoothing) {
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    throw InvalidArgumentError(loss + ": label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));
  }
  return label_smoothing;
}

// Keras's _smooth_labels: y * (1 - ls) + offset, the offset being ls / classes
// (categorical) or 0.5 * ls (binary). Nothing is computed without smoothing.
Tensor smoothed(const Tensor& labels, double label_smoothing, double offset) {
  if (label_smoothing == 0.0) return labels;
  return ops::add(ops::mul(labels, constant_like(1.0 - label_smoothing, labels)), constant_like(offset, labels));
}

}  // namespace

SparseCategoricalCrossentropy::SparseCategoricalCrossentropy(CrossentropyOptions options)
    : Loss(name_or(options.name, "sparse_categorical_crossentropy"), options.reduction),
      from_logits_(options.from_logits) {
  if (options.label_smoothing != 0.0) {
    throw InvalidArgumentError(name() + ": Keras 2's sparse categorical cross-entropy has no label_smoothing (got " +
                               std::to_string(options.label_smoothing) +
                               "); use one-hot labels with categorical_crossentropy");
  }
}

Tensor SparseCategoricalCrossentropy::call(const Tensor& y_true, const Tensor& y_pred) const {
  if (y_pred.rank() < 1) throw InvalidArgumentError(name() + ": y_pred needs a class axis");
  const int64_t classes = y_pred.shape().dims().back();
  // Keras flattens the labels and the leading axes of the scores.
  Tensor labels = y_true.reshape(Shape{-1});
  if (labels.dtype() != DType::kInt32 && labels.dtype() != DType::kInt64) labels = ops::cast(labels, DType::kInt32);
  Tensor scores = y_pred.reshape(Shape{-1, classes});
  if (labels.element_count() != scores.shape().dim(0)) {
    throw InvalidArgumentError(name() + ": " + std::to_string(labels.element_count()) + " labels for " +
                               std::to_string(scores.shape().dim(0)) + " rows of scores " +
                               y_pred.shape().to_string());
  }
  // From probabilities Keras feeds log(clip(p)) as logits: the op's softmax
  // renormalizes the clipped probabilities.
  const Tensor logits = from_logits_ ? scores : ops::log(clip_probabilities(scores));
  Tensor losses = ops::sparse_softmax_cross_entropy(logits, labels).first;
  std::vector<int64_t> sample_shape = y_pred.shape().dims();
  sample_shape.pop_back();
  return losses.reshape(Shape(std::move(sample_shape)));
}

CategoricalCrossentropy::CategoricalCrossentropy(CrossentropyOptions options)
    : Loss(name_or(options.name, "categorical_crossentropy"), options.reduction),
      from_logits_(options.from_logits),
      label_smoothing_(checked_label_smoothing(name(), options.label_smoothing)) {}

Tensor CategoricalCrossentropy::call(const Tensor& y_true, const Tensor& y_pred) const {
  check_same_shape(name(), y_true, y_pred);
  if (y_pred.rank() < 1) throw InvalidArgumentError(name() + ": y_pred needs a class axis");
  const double classes = static_cast<double>(y_pred.shape().dims().back());
  const Tensor labels = smoothed(as_dtype_of(y_true, y_pred), label_smoothing_, label_smoothing_ / classes);
  if (from_logits_) return ops::neg(ops::reduce_sum(ops::mul(labels, ops::log_softmax(y_pred)), {-1}));
  // Keras normalizes first (a softmax output already sums to 1), then clips.
  const Tensor normalized = ops::div(y_pred, ops::reduce_sum(y_pred, {-1}, /*keep_dims=*/true));
  return ops::neg(ops::reduce_sum(ops::mul(labels, ops::log(clip_probabilities(normalized))), {-1}));
}

BinaryCrossentropy::BinaryCrossentropy(CrossentropyOptions options)
    : Loss(name_or(options.name, "binary_crossentropy"), options.reduction),
      from_logits_(options.from_logits),
      label_smoothing_(checked_label_smoothing(name(), options.label_smoothing)) {}

Tensor BinaryCrossentropy::call(const Tensor& y_true, const Tensor& y_pred) const {
  check_same_shape(name(), y_true, y_pred);
  const Tensor labels = smoothed(as_dtype_of(y_true, y_pred), label_smoothing_, 0.5 * label_smoothing_);
  const Tensor one = constant_like(1.0, y_pred);
  Tensor per_element;
  if (from_logits_) {
    // tf.nn.sigmoid_cross_entropy_with_logits, stable for large |x|.
    const Tensor positive_part = ops::relu(y_pred);
    const Tensor softplus_of_negative_abs = ops::log(ops::add(one, ops::exp(ops::neg(ops::abs(y_pred)))));
    per_element = ops::add(ops::sub(positive_part, ops::mul(y_pred, labels)), softplus_of_negative_abs);
  } else {
    // Keras clips and then still adds epsilon inside both logs.
    const Tensor epsilon = constant_like(kEpsilon, y_pred);
    const Tensor p = clip_probabilities(y_pred);
    const Tensor log_p = ops::log(ops::add(p, epsilon));
    const Tensor log_not_p = ops::log(ops::add(ops::sub(one, p), epsilon));
    per_element = ops::neg(ops::add(ops::mul(labels, log_p), ops::mul(ops::sub(one, labels), log_not_p)));
  }
  return ops::reduce_mean(per_element, {-1});
}

}  // namespace accel::keras
