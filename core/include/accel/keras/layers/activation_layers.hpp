// The activation layer classes of keras.layers (Keras 3): ReLU (with its
// slope, cap and threshold), LeakyReLU, ELU and Softmax (along one axis).
// Each computes what the Keras 3 layer's call computes, from primitive ops,
// and owns only its arguments; none has weights.
#pragma once

#include <accel/keras/layer.hpp>

#include <optional>
#include <string>

namespace accel::keras {

struct ReLUOptions {
  std::optional<double> max_value;  // the largest value returned; none: no cap
  double negative_slope = 0.0;      // the slope below the threshold
  double threshold = 0.0;           // values at or below it are damped (or zeroed)
  std::string name;
};

// keras.activations.relu(x, negative_slope, max_value, threshold).
class ReLU final : public Layer {
 public:
  explicit ReLU(ReLUOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }
  const ReLUOptions& options() const noexcept { return options_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  ReLUOptions options_;
};

// x for x >= 0, else negative_slope * x (Keras 3's default slope 0.3).
class LeakyReLU final : public Layer {
 public:
  explicit LeakyReLU(double negative_slope = 0.3, std::string name = "");
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }
  double negative_slope() const noexcept { return negative_slope_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  double negative_slope_;
};

// x for x > 0, else alpha (e^x - 1).
class ELU final : public Layer {
 public:
  explicit ELU(double alpha = 1.0, std::string name = "");
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }
  double alpha() const noexcept { return alpha_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  double alpha_;
};

// Softmax along `axis` (negative counts from the end).
class Softmax final : public Layer {
 public:
  explicit Softmax(int32_t axis = -1, std::string name = "");
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }
  int32_t axis() const noexcept { return axis_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int32_t axis_;
};

}  // namespace accel::keras
