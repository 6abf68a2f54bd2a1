// Multiply (keras.layers.Multiply): the product of its inputs, multiplied in list order.
#pragma once

#include <accel/keras/layers/merge.hpp>

namespace accel::keras {

class Multiply final : public Merge {
 public:
  explicit Multiply(std::string name = "") : Merge("Multiply", std::move(name)) {}

 protected:
  Tensor merge(const std::vector<Tensor>& inputs) const override;
};

}  // namespace accel::keras
