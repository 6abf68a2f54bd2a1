// The Keras layers: Dense, Activation, Flatten here; one header each under
// accel/keras/layers/ for the others, all included so that this header gives
// every layer.
#pragma once

#include <accel/keras/layers/activation_layers.hpp>
#include <accel/keras/layers/add.hpp>
#include <accel/keras/layers/average.hpp>
#include <accel/keras/layers/average_pooling2d.hpp>
#include <accel/keras/layers/batch_normalization.hpp>
#include <accel/keras/layers/concatenate.hpp>
#include <accel/keras/layers/conv1d.hpp>
#include <accel/keras/layers/conv2d.hpp>
#include <accel/keras/layers/conv2d_transpose.hpp>
#include <accel/keras/layers/cropping2d.hpp>
#include <accel/keras/layers/depthwise_conv2d.hpp>
#include <accel/keras/layers/dropout.hpp>
#include <accel/keras/layers/embedding.hpp>
#include <accel/keras/layers/global_average_pooling1d.hpp>
#include <accel/keras/layers/global_average_pooling2d.hpp>
#include <accel/keras/layers/global_max_pooling1d.hpp>
#include <accel/keras/layers/global_max_pooling2d.hpp>
#include <accel/keras/layers/global_pooling1d.hpp>
#include <accel/keras/layers/layer_normalization.hpp>
#include <accel/keras/layers/margins2d.hpp>
#include <accel/keras/layers/max_pooling2d.hpp>
#include <accel/keras/layers/maximum.hpp>
#include <accel/keras/layers/merge.hpp>
#include <accel/keras/layers/minimum.hpp>
#include <accel/keras/layers/multi_head_attention.hpp>
#include <accel/keras/layers/multiply.hpp>
#include <accel/keras/layers/permute.hpp>
#include <accel/keras/layers/pooling2d.hpp>
#include <accel/keras/layers/position_embedding.hpp>
#include <accel/keras/layers/reversed_embedding.hpp>
#include <accel/keras/layers/prelu.hpp>
#include <accel/keras/layers/repeat_vector.hpp>
#include <accel/keras/layers/reshape.hpp>
#include <accel/keras/layers/rescaling.hpp>
#include <accel/keras/layers/rms_normalization.hpp>
#include <accel/keras/layers/separable_conv2d.hpp>
#include <accel/keras/layers/subtract.hpp>
#include <accel/keras/layers/up_sampling2d.hpp>
#include <accel/keras/layers/zero_padding2d.hpp>

#include <accel/keras/activations.hpp>
#include <accel/keras/initializers.hpp>
#include <accel/keras/input_layer.hpp>
#include <accel/keras/layer.hpp>

#include <memory>
#include <string>

namespace accel::keras {

struct DenseOptions {
  std::string activation = "linear";
  bool use_bias = true;
  std::shared_ptr<Initializer> kernel_initializer = std::make_shared<GlorotUniform>();
  std::shared_ptr<Initializer> bias_initializer = std::make_shared<Zeros>();
  std::string name;
};

// y = activation(x @ kernel + bias) over the last axis; kernel (in, units).
class Dense final : public Layer {
 public:
  explicit Dense(int64_t units, DenseOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const Variable& kernel() const { return kernel_; }
  const Variable& bias() const { return bias_; }
  // The constructor's arguments (a .keras file's config is written from them).
  int64_t units() const noexcept { return units_; }
  const DenseOptions& options() const noexcept { return options_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t units_;
  DenseOptions options_;
  ActivationFunction activation_;
  Variable kernel_;
  Variable bias_;
};

class Activation final : public Layer {
 public:
  explicit Activation(const std::string& activation, std::string name = "");
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }
  const std::string& activation_name() const noexcept { return activation_name_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::string activation_name_;
  ActivationFunction activation_;
};

// (batch, d1, d2, ...) -> (batch, d1 * d2 * ...).
class Flatten final : public Layer {
 public:
  explicit Flatten(std::string name = "") : Layer("Flatten", std::move(name)) {}
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;

 protected:
  Tensor call(const Tensor& inputs, bool training) override;
};

}  // namespace accel::keras
