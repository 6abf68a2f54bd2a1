// Rescaling (keras.layers.Rescaling): inputs * scale + offset, e.g.
// Rescaling(1 / 255) for pixels. A scalar scale and offset.
#pragma once

#include <accel/keras/layer.hpp>

#include <string>

namespace accel::keras {

class Rescaling final : public Layer {
 public:
  explicit Rescaling(double scale, double offset = 0.0, std::string name = "");
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }
  double scale() const noexcept { return scale_; }
  double offset() const noexcept { return offset_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  double scale_;
  double offset_;
};

}  // namespace accel::keras
