// GlobalMaxPooling1D (keras.layers.GlobalMaxPooling1D): the maximum over the
// steps axis of a sequence, (batch, steps, features) -> (batch, features),
// or (batch, 1, features) with keepdims. No weights.
#pragma once

#include <accel/keras/layers/global_pooling1d.hpp>

#include <utility>

namespace accel::keras {

using GlobalMaxPooling1DOptions = GlobalPooling1DOptions;

class GlobalMaxPooling1D final : public GlobalPooling1D {
 public:
  explicit GlobalMaxPooling1D(GlobalMaxPooling1DOptions options = {})
      : GlobalPooling1D("GlobalMaxPooling1D", std::move(options)) {}

 protected:
  Tensor call(const Tensor& inputs, bool training) override;
};

}  // namespace accel::keras
