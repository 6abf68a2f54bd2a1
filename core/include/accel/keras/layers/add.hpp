// Add (keras.layers.Add): the sum of its inputs, added in list order (inputs[0] + inputs[1] + ...).
#pragma once

#include <accel/keras/layers/merge.hpp>

namespace accel::keras {

class Add final : public Merge {
 public:
  explicit Add(std::string name = "") : Merge("Add", std::move(name)) {}

 protected:
  Tensor merge(const std::vector<Tensor>& inputs) const override;
};

}  // namespace accel::keras
