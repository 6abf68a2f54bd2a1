// Embedding (keras.layers.Embedding): maps integer ids in [0, input_dim) to
// rows of a trainable (input_dim, output_dim) table, "embedding/embeddings:0".
// (batch, ...) ids -> (batch, ..., output_dim). Its gradient is autodiff's
// scatter-add of the output gradient into the rows that were looked up.
#pragma once

#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>

#include <memory>
#include <string>

namespace accel::keras {

struct EmbeddingOptions {
  // Keras's "uniform": U(-0.05, 0.05).
  std::shared_ptr<Initializer> embeddings_initializer = std::make_shared<RandomUniform>();
  std::string name;
};

class Embedding final : public Layer {
 public:
  Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  const Variable& embeddings() const { return embeddings_; }
  // The constructor's arguments (a .keras file's config is written from them).
  int64_t input_dim() const noexcept { return input_dim_; }
  int64_t output_dim() const noexcept { return output_dim_; }
  const EmbeddingOptions& options() const noexcept { return options_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  // Ids of an integer dtype are used as they are; others are cast to int32
  // first (Keras does the same), so float ids are truncated.
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  int64_t input_dim_;
  int64_t output_dim_;
  EmbeddingOptions options_;
  Variable embeddings_;
};

}  // namespace accel::keras
