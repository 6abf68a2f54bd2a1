// Concatenate (keras.layers.Concatenate): its inputs joined along `axis`
// (default -1, the last), every other axis of one size (or None).
#pragma once

#include <accel/keras/layer.hpp>

#include <string>
#include <vector>

namespace accel::keras {

class Concatenate final : public Layer {
 public:
  explicit Concatenate(int32_t axis = -1, std::string name = "");

  int32_t axis() const noexcept { return axis_; }
  bool takes_list_input() const override { return true; }
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  std::vector<LayerShape> compute_output_shapes(const std::vector<LayerShape>& input_shapes) const override;

 protected:
  std::vector<Tensor> call_list(const std::vector<Tensor>& inputs, bool training) override;

 private:
  int32_t axis_;
};

}  // namespace accel::keras
