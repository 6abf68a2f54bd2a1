// SeparableConv2D (keras.layers.SeparableConv2D): a depthwise convolution
// (each input channel with its own depth_multiplier filters, strided and
// dilated) followed by a 1x1 pointwise convolution that mixes the channels,
// as TensorFlow's separable_conv2d; owns its depthwise_kernel (height, width,
// in, depth_multiplier), pointwise_kernel (1, 1, in * depth_multiplier,
// filters) and bias (filters) weights, in that order (Keras's).
#pragma once

#include <accel/keras/activations.hpp>
#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>
#include <accel/ops.hpp>

#include <array>
#include <memory>
#include <string>

namespace accel::keras {

struct SeparableConv2DOptions {
  std::array<int32_t, 2> strides{1, 1};
  std::string padding = "valid";  // or "same" (output size ceil(input / stride))
  std::array<int32_t, 2> dilation_rate{1, 1};
  int64_t depth_multiplier = 1;
  std::string activation = "linear";
  bool use_bias = true;
  std::shared_ptr<Initializer> depthwise_initializer = std::make_shared<GlorotUniform>();
  std::shared_ptr<Initializer> pointwise_initializer = std::make_shared<GlorotUniform>();
  std::shared_ptr<Initializer> bias_initializer = std::make_shared<Zeros>();
  std::string name;
};

class SeparableConv2D final : public Layer {
 public:
  SeparableConv2D(int64_t filters, std::array<int32_t, 2> kernel_size, SeparableConv2DOptions options = {});
  // A square kernel, as Keras's SeparableConv2D(64, 3).
  SeparableConv2D(int64_t filters, int32_t kernel_size, SeparableConv2DOptions options = {})
      : SeparableConv2D(filters, {kernel_size, kernel_size}, std::move(options)) {}

  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  int64_t filters() const noexcept { return filters_; }
  const std::array<int32_t, 2>& kernel_size() const noexcept { return kernel_size_; }
  const SeparableConv2DOptions& options() const noexcept { return options_; }
  const Variable& depthwise_kernel() const { return depthwise_kernel_; }
  const Variable& pointwise_kernel() const { return pointwise_kernel_; }
  const Variable& bias() const { return bias_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t filters_;
  std::array<int32_t, 2> kernel_size_;
  SeparableConv2DOptions options_;
  ops::Padding padding_;
  ActivationFunction activation_;
  Variable depthwise_kernel_;
  Variable pointwise_kernel_;
  Variable bias_;
};

}  // namespace accel::keras
