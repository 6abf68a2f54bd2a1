// ZeroPadding2D (keras.layers.ZeroPadding2D): adds rows of zeros at the top
// and bottom and columns at the left and right of an NHWC image. No weights.
#pragma once

#include <accel/keras/layer.hpp>
#include <accel/keras/layers/margins2d.hpp>

#include <string>

namespace accel::keras {

struct ZeroPadding2DOptions {
  Margins2D padding = 1;  // Keras's (1, 1): one row and column of zeros on every side
  std::string data_format = "channels_last";  // the only one supported
  std::string name;
};

class ZeroPadding2D final : public Layer {
 public:
  explicit ZeroPadding2D(ZeroPadding2DOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const Margins2D& padding() const noexcept { return padding_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  Margins2D padding_;
};

}  // namespace accel::keras
