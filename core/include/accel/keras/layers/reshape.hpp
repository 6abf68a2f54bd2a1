// Reshape (keras.layers.Reshape): (batch, ...) -> (batch,) + target_shape,
// the batch axis kept and at most one entry of target_shape -1, inferred
// from the element count. No weights.
#pragma once

#include <accel/keras/layer.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace accel::keras {

class Reshape final : public Layer {
 public:
  // `target_shape` leaves out the batch axis, as Keras's: Reshape({3, -1}).
  explicit Reshape(std::vector<int64_t> target_shape, std::string name = "");
  // As Keras's: an unknown (None) input axis leaves the -1 entry unknown;
  // otherwise -1 is inferred and the element counts must agree.
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const std::vector<int64_t>& target_shape() const noexcept { return target_shape_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::vector<int64_t> target_shape_;
};

}  // namespace accel::keras
