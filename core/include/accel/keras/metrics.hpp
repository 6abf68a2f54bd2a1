// Keras metrics (keras.metrics): stateful accumulators with update_state /
// result / reset_state. The totals are kept on the host in double; each update
// reduces its batch on the device and reads back one number. A Mean splits an
// update in two, so that a compiled step (compile's jit_compile) computes the
// device part inside its graph: batch_contribution (ops) and add_batch (host).
#pragma once

#include <accel/keras/losses.hpp>
#include <accel/tensor.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace accel::keras {

class Metric {
 public:
  explicit Metric(std::string name) : name_(std::move(name)) {}
  virtual ~Metric() = default;

  // Accumulates one batch of labels and predictions.
  virtual void update_state(const Tensor& y_true, const Tensor& y_pred) = 0;
  // The value over everything accumulated since the last reset.
  virtual double result() const = 0;
  virtual void reset_state() = 0;

  const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
};

// keras.metrics.Mean: the weighted mean of the values given. fit's "loss"
// is one, fed each batch's loss weighted by the batch size, as Keras does.
class Mean : public Metric {
 public:
  explicit Mean(std::string name = "mean") : Metric(std::move(name)) {}
  void update_state(double value, double weight = 1.0);
  // add_batch(batch_contribution(y_true, y_pred)).
  void update_state(const Tensor& y_true, const Tensor& y_pred) final;
  double result() const override { return count_ == 0 ? 0.0 : total_ / count_; }
  void reset_state() override { total_ = count_ = 0.0; }

  // One batch's share of the mean: `sum`, a scalar computed by device ops,
  // over `count` values (known from the shapes alone). Mean's own: every
  // element of y_pred with weight 1 (y_true is ignored).
  struct BatchContribution {
    Tensor sum;
    double count = 0.0;
  };
  virtual BatchContribution batch_contribution(const Tensor& y_true, const Tensor& y_pred) const;
  // Reads `sum` back and adds it.
  void add_batch(const Tensor& sum, double count);

 protected:
  double total_ = 0.0;
  double count_ = 0.0;
};

// Fraction of samples whose argmax(y_pred) equals the integer label y_true
// ([B] or [B, 1]).
class SparseCategoricalAccuracy final : public Mean {
 public:
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy")
      : Mean(std::move(name)) {}
  BatchContribution batch_contribution(const Tensor& y_true, const Tensor& y_pred) const override;
};

// Fraction of samples whose argmax(y_pred) equals argmax(y_true) (one-hot labels).
class CategoricalAccuracy final : public Mean {
 public:
  explicit CategoricalAccuracy(std::string name = "categorical_accuracy") : Mean(std::move(name)) {}
  BatchContribution batch_contribution(const Tensor& y_true, const Tensor& y_pred) const override;
};

// Per sample, the mean over the last axis of (y_pred > threshold) == y_true.
class BinaryAccuracy final : public Mean {
 public:
  explicit BinaryAccuracy(std::string name = "binary_accuracy", double threshold = 0.5)
      : Mean(std::move(name)), threshold_(threshold) {}
  BatchContribution batch_contribution(const Tensor& y_true, const Tensor& y_pred) const override;

 private:
  double threshold_;
};

// A metric by Keras name for labels and predictions of these shapes.
// "accuracy" / "acc" resolve as tf.keras's compile_utils does, and keep the
// name the user gave: binary when y_pred's last axis is 1, sparse categorical
// when y_true has fewer axes than y_pred (or a last axis of 1 against
// several classes), categorical otherwise. Also "binary_accuracy",
// "categorical_accuracy", "sparse_categorical_accuracy". Throws
// InvalidArgumentError listing the names for an unknown one.
std::shared_ptr<Metric> get_metric(std::string_view name, const Shape& y_true_shape, const Shape& y_pred_shape);

}  // namespace accel::keras
