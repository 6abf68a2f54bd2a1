// Pooling2D: the shared base of MaxPooling2D and AveragePooling2D (as Keras's
// keras/layers/pooling/base_pooling2d.py): window, strides (default: the
// window), padding, and the output shape. Subclasses only choose the op.
#pragma once

#include <accel/keras/layer.hpp>
#include <accel/ops.hpp>

#include <array>
#include <optional>
#include <string>

namespace accel::keras {

struct Pooling2DOptions {
  std::array<int32_t, 2> pool_size{2, 2};
  // Keras's strides=None: step by the window, so windows tile without overlap.
  std::optional<std::array<int32_t, 2>> strides;
  std::string padding = "valid";  // or "same"
  std::string name;
};

class Pooling2D : public Layer {
 public:
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  // The window, strides and padding as the pooling ops take them.
  const ops::Pool2DOptions& pool_options() const noexcept { return pool_options_; }

 protected:
  Pooling2D(std::string class_name, Pooling2DOptions options);

 private:
  ops::Pool2DOptions pool_options_;
};

}  // namespace accel::keras
