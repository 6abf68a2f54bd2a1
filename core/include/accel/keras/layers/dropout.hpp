// Dropout (keras.layers.Dropout): while training, zeroes each input element
// with probability `rate` and scales the kept ones by 1 / (1 - rate), so the
// expected output equals the input ("inverted" dropout); at inference it is
// the identity. The mask comes from the stateless Philox generator: the layer
// owns a seed and a stream position, and every training call draws from the
// next unused stretch of the stream, so successive calls get new masks while
// two layers with the same seed give the same sequence of masks on any device.
#pragma once

#include <accel/keras/layer.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace accel::keras {

struct DropoutOptions {
  // The mask's shape, broadcast against the input (Keras's noise_shape): e.g.
  // {kUnknownDim, 1, 1, kUnknownDim} drops whole channels of an image. An
  // entry kUnknownDim takes the input's size; empty means the input's shape.
  LayerShape noise_shape;
  // Without a seed the layer takes the next one of keras::next_seed(), so
  // set_random_seed() before building a model makes its dropout reproducible.
  std::optional<uint64_t> seed;
  std::string name;
};

class Dropout final : public Layer {
 public:
  // `rate` in [0, 1): the fraction of inputs to drop.
  explicit Dropout(double rate, DropoutOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }

  double rate() const noexcept { return rate_; }
  uint64_t seed() const noexcept { return seed_; }
  const LayerShape& noise_shape() const noexcept { return noise_shape_; }

 protected:
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  Shape noise_shape_for(const Shape& input_shape) const;

  double rate_;
  LayerShape noise_shape_;
  uint64_t seed_;
  // The first Philox stream index the next mask uses; advances by the mask's
  // size. Atomic: a strategy's replicas call the layer from their own threads.
  std::atomic<uint64_t> next_stream_offset_ = 0;
};

}  // namespace accel::keras
