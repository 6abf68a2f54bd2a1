// Conv2DTranspose (keras.layers.Conv2DTranspose): the transposed 2-D
// convolution (the gradient of Conv2D with respect to its input, as
// TensorFlow's conv2d_transpose) over NHWC images, with Keras 2's defaults and
// output size (deconv_output_length); owns its kernel (height, width, filters,
// in) and bias (filters) weights.
#pragma once

#include <accel/keras/activations.hpp>
#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>
#include <accel/ops.hpp>

#include <array>
#include <memory>
#include <optional>
#include <string>

namespace accel::keras {

struct Conv2DTransposeOptions {
  std::array<int32_t, 2> strides{1, 1};
  std::string padding = "valid";  // or "same"
  // Extra rows / columns after the output, each below its stride; unset uses
  // Keras's inferred size (input * stride, plus the overhang for "valid").
  std::optional<std::array<int32_t, 2>> output_padding;
  std::array<int32_t, 2> dilation_rate{1, 1};
  std::string activation = "linear";
  bool use_bias = true;
  std::shared_ptr<Initializer> kernel_initializer = std::make_shared<GlorotUniform>();
  std::shared_ptr<Initializer> bias_initializer = std::make_shared<Zeros>();
  std::string name;
};

// y = activation(conv2d_backward_input(x, kernel) + bias), the output shaped
// so that a Conv2D of the same kernel, strides and padding maps it back to x's
// spatial shape; weights "conv2d_transpose/kernel:0" and "conv2d_transpose/bias:0".
class Conv2DTranspose final : public Layer {
 public:
  Conv2DTranspose(int64_t filters, std::array<int32_t, 2> kernel_size, Conv2DTransposeOptions options = {});
  // A square kernel, as Keras's Conv2DTranspose(32, 3).
  Conv2DTranspose(int64_t filters, int32_t kernel_size, Conv2DTransposeOptions options = {})
      : Conv2DTranspose(filters, {kernel_size, kernel_size}, std::move(options)) {}

  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const Variable& kernel() const { return kernel_; }
  const Variable& bias() const { return bias_; }
  // The constructor's arguments (a .keras file's config is written from them).
  int64_t filters() const noexcept { return filters_; }
  const std::array<int32_t, 2>& kernel_size() const noexcept { return kernel_size_; }
  const Conv2DTransposeOptions& options() const noexcept { return options_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  // deconv_output_length along `axis`, checked to map back to `input_length`.
  int64_t output_length(size_t axis, int64_t input_length) const;
  std::string where() const { return "Conv2DTranspose '" + name() + "'"; }

  int64_t filters_;
  std::array<int32_t, 2> kernel_size_;
  Conv2DTransposeOptions options_;
  ops::Padding padding_;
  ActivationFunction activation_;
  Variable kernel_;
  Variable bias_;
};

}  // namespace accel::keras
