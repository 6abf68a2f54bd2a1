// UpSampling2D (keras.layers.UpSampling2D): repeats each row of an NHWC image
// size[0] times and each column size[1] times ("nearest" interpolation).
// No weights.
#pragma once

#include <accel/keras/layer.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace accel::keras {

struct UpSampling2DOptions {
  std::array<int32_t, 2> size{2, 2};  // (rows, columns) factors
  std::string data_format = "channels_last";  // the only one supported
  // Keras's other interpolations ("bilinear", "bicubic", "area", "gaussian",
  // "lanczos3", "lanczos5", "mitchellcubic") are an UnimplementedError.
  std::string interpolation = "nearest";
  std::string name;
};

class UpSampling2D final : public Layer {
 public:
  explicit UpSampling2D(UpSampling2DOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const std::array<int32_t, 2>& size() const noexcept { return size_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::array<int32_t, 2> size_;
};

}  // namespace accel::keras
