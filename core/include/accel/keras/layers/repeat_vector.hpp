// RepeatVector (keras.layers.RepeatVector): (batch, features) ->
// (batch, n, features), each example's vector repeated n times. No weights.
#pragma once

#include <accel/keras/layer.hpp>

#include <cstdint>
#include <string>

namespace accel::keras {

class RepeatVector final : public Layer {
 public:
  // `n` must be at least 1.
  explicit RepeatVector(int64_t n, std::string name = "");
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  int64_t n() const noexcept { return n_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t n_;
};

}  // namespace accel::keras
