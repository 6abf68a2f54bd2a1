#include <accel/keras/layers/position_embedding.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "../utils/cast_to.hpp"

namespace accel::keras {

PositionEmbedding::PositionEmbedding(PositionEmbeddingOptions options)
    : Layer("PositionEmbedding", options.name), options_(std::move(options)) {}

LayerShape PositionEmbedding::compute_output_shape(const LayerShape& input_shape) const {
  if (input_shape.size() != 3 || input_shape[1] <= 0 || input_shape[2] <= 0) {
    throw InvalidArgumentError("PositionEmbedding '" + name() +
                               "': expected inputs (batch, length, dim) with known length and dim, got " +
                               format_layer_shape(input_shape));
  }
  return input_shape;
}

void PositionEmbedding::build_weights(const LayerShape& input_shape) {
  compute_output_shape(input_shape);
  embeddings_ = add_weight("embeddings", Shape{input_shape[1], input_shape[2]}, *options_.initializer);
}

Tensor PositionEmbedding::call(const Tensor& inputs, bool) {
  const Shape table = embeddings_.value().shape();
  if (inputs.shape().rank() != 3 || inputs.shape()[1] != table[0] || inputs.shape()[2] != table[1]) {
    throw InvalidArgumentError("PositionEmbedding '" + name() + "': expected inputs (batch, " +
                               std::to_string(table[0]) + ", " + std::to_string(table[1]) + "), got " +
                               inputs.shape().to_string());
  }
  // The (length, dim) table broadcasts over the batch axis.
  const Tensor embeddings = embeddings_.value();  // value() is a new handle: keep it alive here
  return ops::add(inputs, detail::cast_to(embeddings, inputs.dtype()));
}

}  // namespace accel::keras
