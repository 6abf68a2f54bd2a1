// Conv1D (keras.layers.Conv1D): a 1-D convolution over (batch, steps,
// channels) sequences with Keras 3's defaults, owning its kernel
// (kernel_size, in / groups, filters) and bias (filters) weights. "causal"
// padding pads the start of the sequence only, so that output step t sees
// input steps <= t (WaveNet's convolutions). It runs as a Conv2D over a
// one-row image, so every backend and the compiled steps take it as they
// take Conv2D.
#pragma once

#include <accel/keras/activations.hpp>
#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>
#include <accel/ops.hpp>

#include <memory>
#include <string>

namespace accel::keras {

struct Conv1DOptions {
  int32_t strides = 1;
  std::string padding = "valid";  // "same" (output ceil(steps / stride)) or "causal"
  int32_t dilation_rate = 1;
  // Input channels and filters split into this many blocks, as Conv2D's groups.
  int64_t groups = 1;
  std::string activation = "linear";
  bool use_bias = true;
  std::shared_ptr<Initializer> kernel_initializer = std::make_shared<GlorotUniform>();
  std::shared_ptr<Initializer> bias_initializer = std::make_shared<Zeros>();
  std::string name;
};

// y = activation(conv1d(x, kernel) + bias); weights "conv1d/kernel:0" and "conv1d/bias:0".
class Conv1D final : public Layer {
 public:
  Conv1D(int64_t filters, int32_t kernel_size, Conv1DOptions options = {});

  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const Variable& kernel() const { return kernel_; }
  const Variable& bias() const { return bias_; }
  // The constructor's arguments (a .keras file's config is written from them).
  int64_t filters() const noexcept { return filters_; }
  int32_t kernel_size() const noexcept { return kernel_size_; }
  const Conv1DOptions& options() const noexcept { return options_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::string where() const { return "Conv1D '" + name() + "'"; }
  // The steps added before the sequence by "causal" padding (none otherwise).
  int64_t causal_padding() const noexcept;

  int64_t filters_;
  int32_t kernel_size_;
  Conv1DOptions options_;
  bool causal_;
  ops::Padding padding_;  // of the convolution after the causal padding ("valid" then)
  ActivationFunction activation_;
  Variable kernel_;
  Variable bias_;
};

}  // namespace accel::keras
