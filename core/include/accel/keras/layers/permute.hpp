// Permute (keras.layers.Permute): reorders the axes after the batch axis by
// `dims`, 1-based as Keras's (Permute({2, 1}) swaps the two axes of a
// (batch, a, b) input). No weights.
#pragma once

#include <accel/keras/layer.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace accel::keras {

class Permute final : public Layer {
 public:
  // `dims` must be a permutation of 1..len(dims); inputs have rank len(dims) + 1.
  explicit Permute(std::vector<int32_t> dims, std::string name = "");
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const std::vector<int32_t>& dims() const noexcept { return dims_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::vector<int32_t> dims_;
};

}  // namespace accel::keras
