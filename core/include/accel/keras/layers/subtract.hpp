// Subtract (keras.layers.Subtract): inputs[0] - inputs[1], for exactly two inputs.
#pragma once

#include <accel/keras/layers/merge.hpp>

namespace accel::keras {

class Subtract final : public Merge {
 public:
  explicit Subtract(std::string name = "") : Merge("Subtract", std::move(name)) {}

 protected:
  void check_input_count(size_t count) const override;
  Tensor merge(const std::vector<Tensor>& inputs) const override;
};

}  // namespace accel::keras
