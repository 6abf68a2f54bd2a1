// ReversedEmbedding: a language model's logits tied to its token embedding,
// as keras_hub's ReversibleEmbedding(tie_weights=True) gives them when
// called with reverse=True: (batch, ..., output_dim) ->
// (batch, ..., input_dim), inputs @ embeddings^T. It owns no weight: it
// reads the Embedding it is given, so the table stays one variable, trained
// by the gradients of both its uses (GPT-2, PaLM and MaxText's decoders tie
// their logits so).
#pragma once

#include <accel/keras/layer.hpp>
#include <accel/keras/layers/embedding.hpp>

#include <memory>
#include <string>

namespace accel::keras {

class ReversedEmbedding final : public Layer {
 public:
  // Throws InvalidArgumentError for a null embedding.
  explicit ReversedEmbedding(std::shared_ptr<Embedding> embedding, std::string name = "");
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const Embedding& embedding() const noexcept { return *embedding_; }

 protected:
  // Checks the embedding is built (called first, as a model calls it on its
  // tokens) and that the inputs' last axis is its output_dim.
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  std::shared_ptr<Embedding> embedding_;
};

}  // namespace accel::keras
