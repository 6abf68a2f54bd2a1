// The Transformers of the zoo: a small Vision Transformer over image patches
// (pre-norm blocks) and a Transformer encoder over token ids (post-norm
// blocks, as the original Transformer and Keras's text-classification
// example), both without a class token: global average pooling feeds the
// head; and a decoder-only language model (pre-norm blocks, sequential or
// parallel, with causal self-attention and a ReLU, GELU or SwiGLU MLP, logits
// at every position).
#include "model_zoo.hpp"

#include <accel/error.hpp>
#include <accel/keras/input_layer.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/layers/global_average_pooling1d.hpp>
#include <accel/keras/layers/layer_normalization.hpp>
#include <accel/keras/layers/multi_head_attention.hpp>
#include <accel/keras/layers/multiply.hpp>
#include <accel/keras/layers/position_embedding.hpp>
#include <accel/keras/layers/reshape.hpp>
#include <accel/keras/layers/rms_normalization.hpp>

#include <string>

namespace accel::model_zoo {
namespace {

using keras::KerasTensor;

constexpr double kLayerNormEpsilon = 1e-6;

KerasTensor layer_norm(const KerasTensor& x, const std::string& name) {
  return (*std::make_shared<keras::LayerNormalization>(
      keras::LayerNormalizationOptions{.epsilon = kLayerNormEpsilon, .name = name}))(x);
}

KerasTensor self_attention(const KerasTensor& x, int64_t dim, int64_t heads, const std::string& name,
                           bool causal = false, std::optional<double> rotary_max_wavelength = std::nullopt) {
  if (dim % heads != 0) {
    throw InvalidArgumentError("dim " + std::to_string(dim) + " is not a multiple of heads " + std::to_string(heads));
  }
  auto attention = std::make_shared<keras::MultiHeadAttention>(
      heads, dim / heads,
      keras::MultiHeadAttentionOptions{.rotary_max_wavelength = rotary_max_wavelength, .name = name});
  return (*attention)(x, x, {.use_causal_mask = causal});
}

KerasTensor rms_norm(const KerasTensor& x, const std::string& name) {
  return (*std::make_shared<keras::RMSNormalization>(keras::RMSNormalizationOptions{.name = name}))(x);
}

KerasTensor dense(const KerasTensor& x, int64_t units, const std::string& activation, const std::string& name,
                  bool use_bias = true) {
  return (*std::make_shared<keras::Dense>(
      units, keras::DenseOptions{.activation = activation, .use_bias = use_bias, .name = name}))(x);
}

KerasTensor add(const KerasTensor& a, const KerasTensor& b, const std::string& name) {
  return (*std::make_shared<keras::Add>(name))({a, b});
}

KerasTensor position_embedding(const KerasTensor& x) {
  return (*std::make_shared<keras::PositionEmbedding>(keras::PositionEmbeddingOptions{.name = "position_embedding"}))(x);
}

KerasTensor average_pool_and_classify(const KerasTensor& x, int64_t classes) {
  const KerasTensor pooled =
      (*std::make_shared<keras::GlobalAveragePooling1D>(keras::GlobalPooling1DOptions{.name = "avg_pool"}))(x);
  return dense(pooled, classes, "softmax", "predictions");
}

}  // namespace

std::shared_ptr<keras::Model> vit_fashion_mnist(const VisionTransformerOptions& options) {
  const auto& [height, width, channels] = options.input_shape;
  if (options.patch_size <= 0 || height % options.patch_size != 0 || width % options.patch_size != 0) {
    throw InvalidArgumentError("patch_size " + std::to_string(options.patch_size) + " does not divide the image size " +
                               std::to_string(height) + "x" + std::to_string(width));
  }
  const int64_t patches = (height / options.patch_size) * (width / options.patch_size);
  const auto patch = static_cast<int32_t>(options.patch_size);

  const KerasTensor inputs = keras::Input({height, width, channels}, keras::InputOptions{.name = "input_1"});
  KerasTensor x = (*std::make_shared<keras::Conv2D>(
      options.dim, patch, keras::Conv2DOptions{.strides = {patch, patch}, .name = "patch_embedding"}))(inputs);
  x = (*std::make_shared<keras::Reshape>(std::vector<int64_t>{patches, options.dim}, "patch_reshape"))(x);
  x = position_embedding(x);
  for (int64_t index = 1; index <= options.blocks; ++index) {
    const std::string name = "encoder" + std::to_string(index);
    KerasTensor y = self_attention(layer_norm(x, name + "_ln1"), options.dim, options.heads, name + "_mha");
    x = add(x, y, name + "_add1");
    y = dense(layer_norm(x, name + "_ln2"), options.mlp, "gelu", name + "_mlp_dense1");
    y = dense(y, options.dim, "linear", name + "_mlp_dense2");
    x = add(x, y, name + "_add2");
  }
  x = layer_norm(x, "final_ln");
  return std::make_shared<keras::Model>(inputs, average_pool_and_classify(x, options.classes),
                                        "vit_fashion_mnist_p" + std::to_string(options.patch_size));
}

std::shared_ptr<keras::Model> transformer_encoder_classifier(const TransformerEncoderOptions& options) {
  const KerasTensor inputs =
      keras::Input({options.sequence_length}, keras::InputOptions{.name = "input_1", .dtype = DType::kInt32});
  KerasTensor x = (*std::make_shared<keras::Embedding>(options.vocabulary, options.dim,
                                                       keras::EmbeddingOptions{.name = "token_embedding"}))(inputs);
  x = position_embedding(x);
  for (int64_t index = 1; index <= options.blocks; ++index) {
    const std::string name = "encoder" + std::to_string(index);
    KerasTensor y = self_attention(x, options.dim, options.heads, name + "_mha");
    x = layer_norm(add(x, y, name + "_add1"), name + "_ln1");
    y = dense(x, options.feed_forward, "relu", name + "_ffn_dense1");
    y = dense(y, options.dim, "linear", name + "_ffn_dense2");
    x = layer_norm(add(x, y, name + "_add2"), name + "_ln2");
  }
  return std::make_shared<keras::Model>(inputs, average_pool_and_classify(x, options.classes),
                                        "transformer_encoder_classifier");
}

std::shared_ptr<keras::Model> decoder_language_model(const DecoderLanguageModelOptions& options) {
  const KerasTensor inputs =
      keras::Input({options.sequence_length}, keras::InputOptions{.name = "tokens", .dtype = DType::kInt32});
  const auto token_embedding =
      std::make_shared<keras::Embedding>(options.vocabulary, options.dim, keras::EmbeddingOptions{.name = "token_embedding"});
  KerasTensor x = (*token_embedding)(inputs);
  if (!options.rotary_positions) x = position_embedding(x);
  const std::optional<double> rotary =
      options.rotary_positions ? std::optional<double>(options.rotary_max_wavelength) : std::nullopt;
  auto normalize = [&](const KerasTensor& y, const std::string& name) {
    return options.norm == DecoderNorm::kRms ? rms_norm(y, name) : layer_norm(y, name);
  };
  auto feed = [&](const KerasTensor& y, const std::string& prefix) {
    if (options.mlp == DecoderMlp::kSwiGlu) {
      const KerasTensor gate = dense(y, options.feed_forward, "silu", prefix + "_mlp_gate", /*use_bias=*/false);
      const KerasTensor up = dense(y, options.feed_forward, "linear", prefix + "_mlp_up", /*use_bias=*/false);
      const KerasTensor product = (*std::make_shared<keras::Multiply>(prefix + "_mlp_product"))({gate, up});
      return dense(product, options.dim, "linear", prefix + "_mlp_out", /*use_bias=*/false);
    }
    const KerasTensor hidden =
        dense(y, options.feed_forward, options.mlp == DecoderMlp::kRelu ? "relu" : "gelu", prefix + "_mlp_in");
    return dense(hidden, options.dim, "linear", prefix + "_mlp_out");
  };
  for (int64_t index = 1; index <= options.blocks; ++index) {
    const std::string prefix = "block" + std::to_string(index);
    const KerasTensor h = normalize(x, prefix + "_norm1");
    const KerasTensor attention =
        self_attention(h, options.dim, options.heads, prefix + "_attention", options.causal, rotary);
    if (options.parallel_block) {
      x = (*std::make_shared<keras::Add>(prefix + "_add"))({x, attention, feed(h, prefix)});
      continue;
    }
    x = add(x, attention, prefix + "_add1");
    x = add(x, feed(normalize(x, prefix + "_norm2"), prefix), prefix + "_add2");
  }
  x = normalize(x, "final_norm");
  const KerasTensor logits = options.tied_logits
                                 ? (*std::make_shared<keras::ReversedEmbedding>(token_embedding, "logits"))(x)
                                 : dense(x, options.vocabulary, "linear", "logits");
  return std::make_shared<keras::Model>(inputs, logits, options.name);
}

DecoderLanguageModelOptions decoder_lm_options() {
  return {.feed_forward = 192, .mlp = DecoderMlp::kSwiGlu, .name = "decoder_lm"};
}

}  // namespace accel::model_zoo
