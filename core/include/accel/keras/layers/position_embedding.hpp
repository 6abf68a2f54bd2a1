// PositionEmbedding (KerasHub's keras_hub.layers.PositionEmbedding, which
// Keras 2 itself lacks): adds a learned embedding per position to a sequence,
// (batch, length, dim) -> the same shape. Owns one weight, "embeddings", of
// shape (length, dim), taken from the built input: the sequence length is
// fixed when the layer is built, as in KerasHub with sequence_length given.
// The Vision Transformer and the Transformer encoder of the model zoo use it.
#pragma once

#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>

#include <memory>
#include <string>

namespace accel::keras {

struct PositionEmbeddingOptions {
  // Keras's "uniform": U(-0.05, 0.05).
  std::shared_ptr<Initializer> initializer = std::make_shared<RandomUniform>();
  std::string name;
};

class PositionEmbedding final : public Layer {
 public:
  explicit PositionEmbedding(PositionEmbeddingOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const Variable& embeddings() const { return embeddings_; }
  const PositionEmbeddingOptions& options() const noexcept { return options_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  PositionEmbeddingOptions options_;
  Variable embeddings_;
};

}  // namespace accel::keras
