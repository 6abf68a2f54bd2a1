// Average (keras.layers.Average): the mean of its inputs: their sum in list order divided by their number.
#pragma once

#include <accel/keras/layers/merge.hpp>

namespace accel::keras {

class Average final : public Merge {
 public:
  explicit Average(std::string name = "") : Merge("Average", std::move(name)) {}

 protected:
  Tensor merge(const std::vector<Tensor>& inputs) const override;
};

}  // namespace accel::keras
