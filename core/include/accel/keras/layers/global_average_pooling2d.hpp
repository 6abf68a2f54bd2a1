// GlobalAveragePooling2D (keras.layers.GlobalAveragePooling2D): the mean over
// height and width of an NHWC image, (batch, H, W, C) -> (batch, C), or
// (batch, 1, 1, C) with keepdims. No weights.
#pragma once

#include <accel/keras/layer.hpp>

#include <string>

namespace accel::keras {

struct GlobalAveragePooling2DOptions {
  bool keepdims = false;
  std::string name;
};

class GlobalAveragePooling2D final : public Layer {
 public:
  explicit GlobalAveragePooling2D(GlobalAveragePooling2DOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  bool keepdims() const noexcept { return keepdims_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  bool keepdims_;
};

}  // namespace accel::keras
