// LayerNormalization (keras.layers.LayerNormalization): normalizes each
// example over `axis` (by default its last axis) to zero mean and unit
// variance, then scales by gamma and shifts by beta, which have the shape of
// the normalized axes. Unlike BatchNormalization it keeps no statistics: the
// same computation in training and inference. Owns gamma and beta, in Keras's
// order and with its names.
#pragma once

#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>

#include <memory>
#include <string>
#include <vector>

namespace accel::keras {

struct LayerNormalizationOptions {
  // The axes to normalize over (Keras's int or list: `.axis = {1, 2}`);
  // negative ones count from the end.
  std::vector<int32_t> axis = {-1};
  double epsilon = 1e-3;
  bool center = true;  // learn beta
  bool scale = true;   // learn gamma
  std::shared_ptr<Initializer> beta_initializer = std::make_shared<Zeros>();
  std::shared_ptr<Initializer> gamma_initializer = std::make_shared<Ones>();
  std::string name;
};

class LayerNormalization final : public Layer {
 public:
  explicit LayerNormalization(LayerNormalizationOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }

  const Variable& gamma() const { return gamma_; }
  const Variable& beta() const { return beta_; }
  const LayerNormalizationOptions& options() const noexcept { return options_; }
  // `axis` resolved against the built input's rank, in the given order.
  const std::vector<int32_t>& axes() const noexcept { return axes_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  LayerNormalizationOptions options_;
  std::vector<int32_t> axes_;
  // 1 everywhere but the normalized axes: gamma and beta reshaped to it
  // broadcast against the input, as Keras's _broadcast.
  Shape broadcast_shape_;
  Variable gamma_;
  Variable beta_;
};

}  // namespace accel::keras
