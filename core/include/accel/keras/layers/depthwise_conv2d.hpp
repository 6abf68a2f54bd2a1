// DepthwiseConv2D (keras.layers.DepthwiseConv2D): each input channel
// convolved with its own depth_multiplier filters, as TensorFlow's
// depthwise_conv2d, with Keras 2's defaults; owns its depthwise_kernel
// (height, width, in, depth_multiplier) and bias (in * depth_multiplier) weights.
#pragma once

#include <accel/keras/activations.hpp>
#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>
#include <accel/ops.hpp>

#include <array>
#include <memory>
#include <string>

namespace accel::keras {

struct DepthwiseConv2DOptions {
  std::array<int32_t, 2> strides{1, 1};
  std::string padding = "valid";  // or "same" (output size ceil(input / stride))
  int64_t depth_multiplier = 1;
  std::array<int32_t, 2> dilation_rate{1, 1};
  std::string activation = "linear";
  bool use_bias = true;
  std::shared_ptr<Initializer> depthwise_initializer = std::make_shared<GlorotUniform>();
  std::shared_ptr<Initializer> bias_initializer = std::make_shared<Zeros>();
  std::string name;
};

// y[.., c * depth_multiplier + m] = activation(conv2d(x[.., c], depthwise_kernel[.., c, m]) + bias);
// weights "depthwise_conv2d/depthwise_kernel:0" and "depthwise_conv2d/bias:0".
class DepthwiseConv2D final : public Layer {
 public:
  explicit DepthwiseConv2D(std::array<int32_t, 2> kernel_size, DepthwiseConv2DOptions options = {});
  // A square kernel, as Keras's DepthwiseConv2D(3).
  explicit DepthwiseConv2D(int32_t kernel_size, DepthwiseConv2DOptions options = {})
      : DepthwiseConv2D({kernel_size, kernel_size}, std::move(options)) {}

  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const Variable& depthwise_kernel() const { return depthwise_kernel_; }
  const Variable& bias() const { return bias_; }
  // The constructor's arguments (a .keras file's config is written from them).
  const std::array<int32_t, 2>& kernel_size() const noexcept { return kernel_size_; }
  const DepthwiseConv2DOptions& options() const noexcept { return options_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::array<int32_t, 2> kernel_size_;
  DepthwiseConv2DOptions options_;
  ops::Padding padding_;
  ActivationFunction activation_;
  Variable depthwise_kernel_;
  Variable bias_;
};

}  // namespace accel::keras
