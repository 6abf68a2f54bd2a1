#include <accel/keras/layers/reversed_embedding.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

namespace accel::keras {

ReversedEmbedding::ReversedEmbedding(std::shared_ptr<Embedding> embedding, std::string name)
    : Layer("ReversedEmbedding", std::move(name)), embedding_(std::move(embedding)) {
  if (embedding_ == nullptr) {
    throw InvalidArgumentError("ReversedEmbedding '" + this->name() + "': needs the Embedding whose table it reverses");
  }
}

LayerShape ReversedEmbedding::compute_output_shape(const LayerShape& input_shape) const {
  LayerShape output = input_shape;
  if (!output.empty()) output.back() = embedding_->input_dim();
  return output;
}

void ReversedEmbedding::build_weights(const LayerShape& input_shape) {
  if (!embedding_->built()) {
    throw FailedPreconditionError("ReversedEmbedding '" + name() + "': its embedding '" + embedding_->name() +
                                  "' is not built yet; call it on the tokens first");
  }
  if (input_shape.empty() || input_shape.back() != embedding_->output_dim()) {
    throw InvalidArgumentError("ReversedEmbedding '" + name() + "': inputs of shape " + format_layer_shape(input_shape) +
                               "; expected a last axis of " + std::to_string(embedding_->output_dim()) +
                               " (the output_dim of embedding '" + embedding_->name() + "')");
  }
}

Tensor ReversedEmbedding::call(const Tensor& inputs, bool) {
  // The table is read in the compute dtype (autocast), as a Dense kernel is.
  return ops::matmul(inputs, embedding_->embeddings().value(), /*transpose_a=*/false, /*transpose_b=*/true);
}

}  // namespace accel::keras
