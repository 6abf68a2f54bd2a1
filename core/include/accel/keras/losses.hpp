// Keras losses (keras.losses): a Loss maps (y_true, y_pred) to per-sample
// values and reduces them as Keras's default SUM_OVER_BATCH_SIZE does. The
// formulas are Keras 2's (keras/backend.py), composed of primitive ops so the
// GradientTape differentiates them.
#pragma once

#include <accel/tensor.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace accel::keras {

// keras.losses.Reduction.
enum class Reduction {
  kSumOverBatchSize,  // sum of the per-sample losses / their count (the default)
  kSum,
  kNone,  // the per-sample losses themselves
};

class Loss {
 public:
  Loss(std::string name, Reduction reduction) : name_(std::move(name)), reduction_(reduction) {}
  virtual ~Loss() = default;

  // The reduced loss of a batch: a float scalar unless the reduction is kNone.
  // As Keras's LossFunctionWrapper, a y_pred of rank(y_true) + 1 whose last axis
  // is 1 is squeezed (and the other way round) before the loss is computed.
  Tensor operator()(const Tensor& y_true, const Tensor& y_pred) const;

  // Per-sample losses before the reduction.
  virtual Tensor call(const Tensor& y_true, const Tensor& y_pred) const = 0;

  const std::string& name() const noexcept { return name_; }
  Reduction reduction() const noexcept { return reduction_; }
  // True for the sparse losses, whose labels are class indices (what
  // "accuracy" resolves against).
  virtual bool sparse_labels() const { return false; }

 private:
  std::string name_;
  Reduction reduction_;
};

struct CrossentropyOptions {
  // y_pred holds logits (unnormalized) rather than probabilities.
  bool from_logits = false;
  Reduction reduction = Reduction::kSumOverBatchSize;
  std::string name;  // empty: the Keras name ("sparse_categorical_crossentropy", ...)
  // In [0, 1]: the labels are moved towards uniform before the loss, as Keras:
  // y * (1 - ls) + ls / classes (categorical), y * (1 - ls) + 0.5 * ls
  // (binary). SparseCategoricalCrossentropy has none in Keras 2 and refuses a
  // nonzero value.
  double label_smoothing = 0.0;
};

// Integer labels [B] (or [B, 1]) against class scores [B, C]. From logits it
// runs the fused ops::sparse_softmax_cross_entropy; from probabilities it is
// Keras's log(clip(p, 1e-7, 1 - 1e-7)) fed to that op as logits (which
// renormalizes the clipped probabilities, exactly as Keras does).
// InvalidArgumentError for a nonzero label_smoothing (Keras 2 has none here).
class SparseCategoricalCrossentropy final : public Loss {
 public:
  explicit SparseCategoricalCrossentropy(CrossentropyOptions options = {});
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
  bool sparse_labels() const override { return true; }
  bool from_logits() const noexcept { return from_logits_; }

 private:
  bool from_logits_;
};

// One-hot (or soft) labels [B, C]. From probabilities: p / sum(p), clipped to
// [1e-7, 1 - 1e-7], then -sum(y * log(p)); from logits: -sum(y * log_softmax).
// label_smoothing: y * (1 - ls) + ls / C first.
class CategoricalCrossentropy final : public Loss {
 public:
  explicit CategoricalCrossentropy(CrossentropyOptions options = {});
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
  bool from_logits() const noexcept { return from_logits_; }
  double label_smoothing() const noexcept { return label_smoothing_; }

 private:
  bool from_logits_;
  double label_smoothing_;
};

// Labels in {0, 1} (or soft), averaged over the last axis. From probabilities:
// p clipped to [1e-7, 1 - 1e-7], -(y log(p + 1e-7) + (1 - y) log(1 - p + 1e-7));
// from logits: TensorFlow's stable max(x, 0) - x y + log(1 + exp(-|x|)).
// label_smoothing: y * (1 - ls) + 0.5 * ls first.
class BinaryCrossentropy final : public Loss {
 public:
  explicit BinaryCrossentropy(CrossentropyOptions options = {});
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
  bool from_logits() const noexcept { return from_logits_; }
  double label_smoothing() const noexcept { return label_smoothing_; }

 private:
  bool from_logits_;
  double label_smoothing_;
};

struct RegressionLossOptions {
  Reduction reduction = Reduction::kSumOverBatchSize;
  std::string name;  // empty: "mean_squared_error"
};

// mean((y_pred - y_true)^2) over the last axis.
class MeanSquaredError final : public Loss {
 public:
  explicit MeanSquaredError(RegressionLossOptions options = {});
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
};

// A loss by Keras name: "sparse_categorical_crossentropy",
// "categorical_crossentropy", "binary_crossentropy", "mse" /
// "mean_squared_error". Throws InvalidArgumentError listing them otherwise.
std::shared_ptr<Loss> get_loss(std::string_view name);

}  // namespace accel::keras
