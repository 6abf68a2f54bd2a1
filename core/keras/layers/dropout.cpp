#include <accel/keras/layers/dropout.hpp>

#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/ops.hpp>
#include <accel/plugin/accel_plugin.h>

#include "graph/trace_scopes.hpp"

namespace accel::keras {

Dropout::Dropout(double rate, DropoutOptions options)
    : Layer("Dropout", options.name),
      rate_(rate),
      noise_shape_(std::move(options.noise_shape)),
      seed_(options.seed ? *options.seed : next_seed()) {
  // Keras accepts rate == 1 at construction, but TensorFlow's dropout then
  // fails on the first training call; failing here says so earlier.
  if (!(rate_ >= 0.0 && rate_ < 1.0)) {
    throw InvalidArgumentError("Dropout '" + name() + "': rate must be in [0, 1), got " + std::to_string(rate_));
  }
}

Shape Dropout::noise_shape_for(const Shape& input_shape) const {
  if (noise_shape_.empty()) return input_shape;
  if (noise_shape_.size() != static_cast<size_t>(input_shape.rank())) {
    throw InvalidArgumentError("Dropout '" + name() + "': noise_shape " + format_layer_shape(noise_shape_) +
                               " has a different rank from the input " + input_shape.to_string());
  }
  Shape noise_shape = input_shape;
  for (int32_t axis = 0; axis < input_shape.rank(); ++axis) {
    const int64_t size = noise_shape_[static_cast<size_t>(axis)];
    if (size == kUnknownDim) continue;
    if (size != 1 && size != input_shape[axis]) {
      throw InvalidArgumentError("Dropout '" + name() + "': noise_shape " + format_layer_shape(noise_shape_) +
                                 " does not broadcast to the input " + input_shape.to_string());
    }
    noise_shape[axis] = size;
  }
  return noise_shape;
}

Tensor Dropout::call(const Tensor& inputs, bool training) {
  if (!training || rate_ == 0.0) return inputs;
  const Shape noise_shape = noise_shape_for(inputs.shape());
  const uint64_t draws = static_cast<uint64_t>(noise_shape.element_count());
  const uint64_t stream_offset = next_stream_offset_.fetch_add(draws);
  // A traced call is discarded for the compiled program's first replay, which draws these numbers again.
  graph::undo_on_discard([this, stream_offset] { next_stream_offset_.store(stream_offset); });
  Tensor uniform;
  {
    // A compiled step draws the next numbers of the stream at every replay.
    graph::RefreshedAttributes next_numbers([this, draws](int32_t op, void* attributes) {
      if (op == ACCEL_OP_RANDOM_UNIFORM) {
        static_cast<AccelRandomAttributes*>(attributes)->counter_offset = next_stream_offset_.fetch_add(draws);
      }
    });
    uniform = ops::random_uniform(noise_shape, seed_, 0.0, 1.0, DType::kFloat32, stream_offset);
  }
  // keep / (1 - rate) is exactly 0 or the scale, so x * it rounds as
  // TensorFlow's (x * scale) * keep does. The mask is not differentiable, so
  // the input's gradient is the same mask.
  const Tensor keep = ops::cast(ops::greater_equal(uniform, ops::fill({}, rate_)), inputs.dtype());
  const Tensor scaled_keep = ops::mul(keep, ops::fill({}, 1.0 / (1.0 - rate_), inputs.dtype()));
  return ops::mul(inputs, scaled_keep);
}

}  // namespace accel::keras
