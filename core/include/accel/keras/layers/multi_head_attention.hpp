// MultiHeadAttention (keras.layers.MultiHeadAttention, Keras 2): scaled
// dot-product attention of a query sequence (batch, T, d_q) over a value
// sequence (batch, S, d_v), with num_heads heads. Projects query and key to
// (heads, key_dim) and value to (heads, value_dim) per position, attends with
// softmax(q k^T / sqrt(key_dim)) per head, and projects the heads' outputs
// back to (batch, T, d_out). Owns the four projections' kernels and biases,
// with Keras's names, shapes and order; the attention dropout is a Dropout
// it owns.
//
// Eager: mha(query, value, {.key, .attention_mask, .use_causal_mask}, training),
// and call_with_attention_scores for Keras's return_attention_scores=True.
// Functional API: the same on KerasTensors (self-attention is mha(x, x)); the
// node records the list [query, value(, key(, attention_mask))], which is also
// what the list form (*mha)({query, value, ...}) takes.
#pragma once

#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>
#include <accel/keras/layers/dropout.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accel::keras {

struct MultiHeadAttentionOptions {
  std::optional<int64_t> value_dim;  // per head; unset: key_dim
  double dropout = 0.0;              // on the attention scores, when training
  bool use_bias = true;
  // The size of the output's last axis (Keras's output_shape as an int);
  // unset: the query's last axis.
  std::optional<int64_t> output_shape;
  // Rotary positions (RoPE, as keras_hub's RotaryEmbedding and MaxText apply
  // them): the projected query and key rotated by their position before the
  // dot product, pair (i, i + d/2) of a head's d features by position x
  // max_wavelength^(-2i/d) radians, so that a score depends on how far apart
  // two positions are. Unset: none.
  std::optional<double> rotary_max_wavelength;
  std::shared_ptr<Initializer> kernel_initializer = std::make_shared<GlorotUniform>();
  std::shared_ptr<Initializer> bias_initializer = std::make_shared<Zeros>();
  std::string name;
};

// The keyword arguments of a call besides query and value, for Tensors
// (eager) and KerasTensors (Functional API).
template <typename TensorType>
struct AttentionArguments {
  TensorType key;  // (batch, S, d_k); undefined: the value, as Keras's key=None
  // (batch, T, S), bool or 0/1 (any axis may be 1 to broadcast), shared by
  // the heads; where false the query does not attend. Undefined: no mask.
  TensorType attention_mask;
  // Each query position i attends only to positions j <= i (and-ed with attention_mask).
  bool use_causal_mask = false;
};

// The output (batch, T, d_out) and the attention scores (batch, heads, T, S)
// before dropout, as Keras returns them with return_attention_scores=True.
struct AttentionOutputs {
  Tensor output;
  Tensor scores;
};

class MultiHeadAttention final : public Layer {
 public:
  MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions options = {});

  // The list forms of Layer (Tensors and KerasTensors); a one-tensor call is an error.
  using Layer::operator();

  Tensor operator()(const Tensor& query, const Tensor& value, const AttentionArguments<Tensor>& arguments = {},
                    bool training = false);
  AttentionOutputs call_with_attention_scores(const Tensor& query, const Tensor& value,
                                              const AttentionArguments<Tensor>& arguments = {},
                                              bool training = false);

  // A Functional model replays a layer without per-call arguments, so every
  // symbolic call of one layer must agree on use_causal_mask and on returning
  // the scores (UnimplementedError otherwise, while the earlier calls' graphs live).
  KerasTensor operator()(const KerasTensor& query, const KerasTensor& value,
                         const AttentionArguments<KerasTensor>& arguments = {});
  // {output, scores}.
  std::vector<KerasTensor> call_with_attention_scores(const KerasTensor& query, const KerasTensor& value,
                                                      const AttentionArguments<KerasTensor>& arguments = {});

  bool takes_list_input() const override { return true; }
  // Called on a list: InvalidArgumentError.
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  // [query, value(, key(, attention_mask))] -> [output] or [output, scores].
  std::vector<LayerShape> compute_output_shapes(const std::vector<LayerShape>& input_shapes) const override;

  int64_t num_heads() const noexcept { return num_heads_; }
  int64_t key_dim() const noexcept { return key_dim_; }
  int64_t value_dim() const noexcept { return value_dim_; }
  const MultiHeadAttentionOptions& options() const noexcept { return options_; }
  // What the Functional model's calls of the layer asked for (one setting for all of them).
  bool symbolic_use_causal_mask() const noexcept { return list_call_settings_.use_causal_mask; }
  bool symbolic_return_attention_scores() const noexcept { return list_call_settings_.return_attention_scores; }

 protected:
  void build_weights_for_list(const std::vector<LayerShape>& input_shapes) override;
  // The list form, with the symbolic calls' use_causal_mask and return_attention_scores.
  std::vector<Tensor> call_list(const std::vector<Tensor>& inputs, bool training) override;
  std::vector<DType> compute_output_dtypes(const std::vector<DType>& input_dtypes) const override;

 private:
  // One projection (Keras's EinsumDense): x (batch, N, d) with kernel (d, heads, dim) -> (batch, N, heads, dim).
  struct Projection {
    Variable kernel;
    Variable bias;
  };
  struct ListCallSettings {
    bool use_causal_mask = false;
    bool return_attention_scores = false;
    bool operator==(const ListCallSettings&) const = default;
  };

  std::string where() const;
  void build_if_needed(const std::vector<LayerShape>& input_shapes);
  Projection add_projection(const std::string& prefix, const Shape& kernel_shape, const Shape& bias_shape);
  Tensor project(const Tensor& x, const Projection& projection, const std::string& role) const;
  // The projected query or key (batch, N, heads, key_dim) with rotary positions, if asked.
  Tensor rotated(const Tensor& x) const;
  // 1 where query position t may attend to key position s, as (batch or 1, 1, T, S); undefined if all may.
  Tensor attention_mask_for(const Tensor& attention_mask, bool use_causal_mask, const Shape& query_shape,
                            const Shape& value_shape) const;
  AttentionOutputs attend(const Tensor& query, const Tensor& value, const Tensor& key,
                          const Tensor& attention_mask, bool use_causal_mask, bool training);
  std::vector<KerasTensor> call_symbolic(const KerasTensor& query, const KerasTensor& value,
                                         const AttentionArguments<KerasTensor>& arguments,
                                         bool return_attention_scores);

  int64_t num_heads_;
  int64_t key_dim_;
  int64_t value_dim_;
  MultiHeadAttentionOptions options_;
  // Rotary positions' cosines and sines (1, N, 1, key_dim), per length and dtype: made once.
  mutable std::map<std::pair<int64_t, DType>, std::pair<Tensor, Tensor>> rotary_tables_;
  ListCallSettings list_call_settings_;
  std::unique_ptr<Dropout> dropout_;  // only for a dropout rate above 0
  Projection query_;
  Projection key_;
  Projection value_;
  Projection output_;
};

}  // namespace accel::keras
