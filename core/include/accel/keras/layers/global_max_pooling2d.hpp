// GlobalMaxPooling2D (keras.layers.GlobalMaxPooling2D): the maximum over
// height and width of an NHWC image, (batch, H, W, C) -> (batch, C), or
// (batch, 1, 1, C) with keepdims. No weights.
#pragma once

#include <accel/keras/layer.hpp>

#include <string>

namespace accel::keras {

struct GlobalMaxPooling2DOptions {
  std::string data_format = "channels_last";  // the only one supported
  bool keepdims = false;
  std::string name;
};

class GlobalMaxPooling2D final : public Layer {
 public:
  explicit GlobalMaxPooling2D(GlobalMaxPooling2DOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  bool keepdims() const noexcept { return keepdims_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  bool keepdims_;
};

}  // namespace accel::keras
