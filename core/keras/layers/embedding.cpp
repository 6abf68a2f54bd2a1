#include <accel/keras/layers/embedding.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "../utils/cast_to.hpp"

namespace accel::keras {

Embedding::Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options)
    : Layer("Embedding", options.name), input_dim_(input_dim), output_dim_(output_dim), options_(std::move(options)) {
  set_autocast(false);  // Keras 3: gathers from the stored table, then casts the rows
  if (input_dim_ <= 0 || output_dim_ <= 0) {
    throw InvalidArgumentError("Embedding '" + name() + "': input_dim and output_dim must be positive, got " +
                               std::to_string(input_dim_) + " and " + std::to_string(output_dim_));
  }
}

LayerShape Embedding::compute_output_shape(const LayerShape& input_shape) const {
  LayerShape output = input_shape;
  output.push_back(output_dim_);
  return output;
}

void Embedding::build_weights(const LayerShape&) {
  embeddings_ = add_weight("embeddings", Shape{input_dim_, output_dim_}, *options_.embeddings_initializer);
}

Tensor Embedding::call(const Tensor& inputs, bool) {
  const bool integer_ids = inputs.dtype() == DType::kInt32 || inputs.dtype() == DType::kInt64;
  const Tensor ids = integer_ids ? inputs : ops::cast(inputs, DType::kInt32);
  return detail::cast_to(ops::gather(embeddings_.value(), ids, /*axis=*/0), compute_dtype());
}

}  // namespace accel::keras
