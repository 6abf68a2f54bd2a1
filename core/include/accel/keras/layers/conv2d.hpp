// Conv2D (keras.layers.Conv2D): a 2-D convolution over NHWC images with
// Keras 2's defaults, owning its kernel (height, width, in / groups, filters)
// = HWIO and bias (filters) weights. groups > 1 is Keras 2's grouped
// convolution (core/keras/layers/grouped_convolution.hpp says how it is composed).
#pragma once

#include <accel/keras/activations.hpp>
#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>
#include <accel/ops.hpp>

#include <array>
#include <memory>
#include <string>

namespace accel::keras {

struct Conv2DOptions {
  std::array<int32_t, 2> strides{1, 1};
  std::string padding = "valid";  // or "same" (output size ceil(input / stride))
  std::array<int32_t, 2> dilation_rate{1, 1};
  // Input channels and filters split into this many blocks, filter block g
  // seeing only channel block g; both counts must divide by it.
  int64_t groups = 1;
  std::string activation = "linear";
  bool use_bias = true;
  std::shared_ptr<Initializer> kernel_initializer = std::make_shared<GlorotUniform>();
  std::shared_ptr<Initializer> bias_initializer = std::make_shared<Zeros>();
  std::string name;
};

// y = activation(conv2d(x, kernel) + bias); weights "conv2d/kernel:0" and "conv2d/bias:0".
class Conv2D final : public Layer {
 public:
  Conv2D(int64_t filters, std::array<int32_t, 2> kernel_size, Conv2DOptions options = {});
  // A square kernel, as Keras's Conv2D(32, 3).
  Conv2D(int64_t filters, int32_t kernel_size, Conv2DOptions options = {})
      : Conv2D(filters, {kernel_size, kernel_size}, std::move(options)) {}

  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const Variable& kernel() const { return kernel_; }
  const Variable& bias() const { return bias_; }
  // The constructor's arguments (a .keras file's config is written from them).
  int64_t filters() const noexcept { return filters_; }
  const std::array<int32_t, 2>& kernel_size() const noexcept { return kernel_size_; }
  const Conv2DOptions& options() const noexcept { return options_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t filters_;
  std::array<int32_t, 2> kernel_size_;
  Conv2DOptions options_;
  ops::Padding padding_;
  ActivationFunction activation_;
  Variable kernel_;
  Variable bias_;
};

}  // namespace accel::keras
