// Maximum (keras.layers.Maximum): the elementwise largest of its inputs, taken in list order.
#pragma once

#include <accel/keras/layers/merge.hpp>

namespace accel::keras {

class Maximum final : public Merge {
 public:
  explicit Maximum(std::string name = "") : Merge("Maximum", std::move(name)) {}

 protected:
  Tensor merge(const std::vector<Tensor>& inputs) const override;
};

}  // namespace accel::keras
