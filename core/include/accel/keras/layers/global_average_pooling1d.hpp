// GlobalAveragePooling1D (keras.layers.GlobalAveragePooling1D): the mean over the
// steps axis of a sequence, (batch, steps, features) -> (batch, features),
// or (batch, 1, features) with keepdims. No weights.
#pragma once

#include <accel/keras/layers/global_pooling1d.hpp>

#include <utility>

namespace accel::keras {

using GlobalAveragePooling1DOptions = GlobalPooling1DOptions;

class GlobalAveragePooling1D final : public GlobalPooling1D {
 public:
  explicit GlobalAveragePooling1D(GlobalAveragePooling1DOptions options = {})
      : GlobalPooling1D("GlobalAveragePooling1D", std::move(options)) {}

 protected:
  Tensor call(const Tensor& inputs, bool training) override;
};

}  // namespace accel::keras
