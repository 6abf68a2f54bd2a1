// Minimum (keras.layers.Minimum): the elementwise smallest of its inputs, taken in list order.
#pragma once

#include <accel/keras/layers/merge.hpp>

namespace accel::keras {

class Minimum final : public Merge {
 public:
  explicit Minimum(std::string name = "") : Merge("Minimum", std::move(name)) {}

 protected:
  Tensor merge(const std::vector<Tensor>& inputs) const override;
};

}  // namespace accel::keras
