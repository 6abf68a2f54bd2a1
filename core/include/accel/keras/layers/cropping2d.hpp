// Cropping2D (keras.layers.Cropping2D): removes rows at the top and bottom and
// columns at the left and right of an NHWC image. No weights.
#pragma once

#include <accel/keras/layer.hpp>
#include <accel/keras/layers/margins2d.hpp>

#include <string>

namespace accel::keras {

struct Cropping2DOptions {
  Margins2D cropping = 0;  // Keras's ((0, 0), (0, 0)): nothing removed
  std::string data_format = "channels_last";  // the only one supported
  std::string name;
};

class Cropping2D final : public Layer {
 public:
  explicit Cropping2D(Cropping2DOptions options = {});
  // At least one row and one column must remain (Keras 3's check; Keras 2
  // lets a known size go to zero or below and fails later).
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const Margins2D& cropping() const noexcept { return cropping_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  Margins2D cropping_;
};

}  // namespace accel::keras
