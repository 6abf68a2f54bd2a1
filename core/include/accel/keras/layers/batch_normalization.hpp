// BatchNormalization (keras.layers.BatchNormalization): normalizes each
// feature (one index of `axis`) to zero mean and unit variance, then scales
// by gamma and shifts by beta. Training calls use the batch's statistics and
// move the non-trainable moving_mean / moving_variance towards them; inference
// calls use the moving statistics. Owns gamma, beta, moving_mean and
// moving_variance, in Keras's order and with its names.
#pragma once

#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>

#include <memory>
#include <string>
#include <vector>

namespace accel::keras {

struct BatchNormalizationOptions {
  int32_t axis = -1;  // the feature axis; negative counts from the end
  double momentum = 0.99;
  double epsilon = 1e-3;
  bool center = true;  // learn beta
  bool scale = true;   // learn gamma
  std::shared_ptr<Initializer> beta_initializer = std::make_shared<Zeros>();
  std::shared_ptr<Initializer> gamma_initializer = std::make_shared<Ones>();
  std::shared_ptr<Initializer> moving_mean_initializer = std::make_shared<Zeros>();
  std::shared_ptr<Initializer> moving_variance_initializer = std::make_shared<Ones>();
  std::string name;
};

class BatchNormalization final : public Layer {
 public:
  explicit BatchNormalization(BatchNormalizationOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }

  const Variable& gamma() const { return gamma_; }
  const Variable& beta() const { return beta_; }
  const Variable& moving_mean() const { return moving_mean_; }
  const Variable& moving_variance() const { return moving_variance_; }
  const BatchNormalizationOptions& options() const noexcept { return options_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  // Batch statistics only when `training` and the layer is trainable: as in
  // Keras 2, a frozen BatchNormalization runs in inference mode (fine-tuning).
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  // x * inv + (beta - mean * inv) with inv = gamma / sqrt(variance + epsilon),
  // tf.nn.batch_normalization's arrangement; `mean` and `variance` have
  // broadcast_shape_.
  Tensor normalize(const Tensor& inputs, const Tensor& mean, const Tensor& variance) const;
  // The batch variance the moving variance learns from: unbiased for 4-D inputs
  // (Keras's fused kernel), the biased `variance` otherwise.
  Tensor moving_variance_sample(const Tensor& inputs, const Tensor& variance) const;
  // moving -= (moving - batch) * (1 - momentum), Keras's _assign_moving_average.
  void update_moving_statistic(Variable& moving, const Tensor& batch_statistic);

  BatchNormalizationOptions options_;
  int32_t feature_axis_ = 0;                 // `axis` resolved against the input rank
  Shape broadcast_shape_;                    // 1 everywhere but the feature axis
  Variable gamma_;
  Variable beta_;
  Variable moving_mean_;
  Variable moving_variance_;
};

}  // namespace accel::keras
