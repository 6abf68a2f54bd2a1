// The model zoo: the models people compare accelerators on, built with the
// Functional API layer by layer as tools/keras_goldens/zoo_models.py builds
// them in Keras (same layer classes, names, arguments and call order), so
// that their parameter counts and layer tables equal Keras's
// (tests/keras/golden/zoo_*; docs/model-zoo.md describes each model).
// Every model ends in Dense(classes, softmax) named "predictions".
#pragma once

#include <accel/keras/model.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace accel::model_zoo {

struct ImageClassifierOptions {
  std::array<int64_t, 3> input_shape{224, 224, 3};  // height, width, channels
  int64_t classes = 1000;
};

// keras.applications.ResNet50(weights=None, include_top=True).
std::shared_ptr<keras::Model> resnet50(const ImageClassifierOptions& options = {});
// ResNet-50 v1.5 as MLPerf Training trains it: the stride on each
// downsampling block's 3x3 convolution, convolutions without bias, batch
// norm with momentum 0.9 and epsilon 1e-5; keras.applications' names.
std::shared_ptr<keras::Model> resnet50_v1_5(const ImageClassifierOptions& options = {});
// ResNet-18 in keras.applications' layout: ResNet50's stem, 4 stages of 2
// basic blocks (64, 128, 256, 512 filters).
std::shared_ptr<keras::Model> resnet18(const ImageClassifierOptions& options = {});
// A small ResNet for 28x28x1 images (Fashion-MNIST), 10 classes.
std::shared_ptr<keras::Model> resnet_small_28x28(const ImageClassifierOptions& options = {{28, 28, 1}, 10});

struct VisionTransformerOptions {
  int64_t patch_size = 4;  // non-overlapping patch_size x patch_size patches
  std::array<int64_t, 3> input_shape{28, 28, 1};
  int64_t classes = 10;
  int64_t dim = 64;
  int64_t heads = 4;
  int64_t mlp = 128;
  int64_t blocks = 4;
};

// A small pre-norm Vision Transformer (patches, a learned position
// embedding, `blocks` encoder blocks, global average pooling, no class token).
std::shared_ptr<keras::Model> vit_fashion_mnist(const VisionTransformerOptions& options = {});

struct TransformerEncoderOptions {
  int64_t vocabulary = 16;
  int64_t sequence_length = 49;
  int64_t classes = 10;
  int64_t dim = 64;
  int64_t heads = 4;
  int64_t feed_forward = 128;
  int64_t blocks = 2;
};

// Token classifier: Embedding + PositionEmbedding, `blocks` post-norm encoder
// blocks, global average pooling over the sequence, Dense softmax.
std::shared_ptr<keras::Model> transformer_encoder_classifier(const TransformerEncoderOptions& options = {});

// The decoder's MLP: Dense(feed_forward, relu | gelu) then Dense(dim), or
// SwiGLU (Llama's): Dense(dim)(silu(x W_gate) * (x W_up)), without biases.
enum class DecoderMlp { kRelu, kGelu, kSwiGlu };
enum class DecoderNorm { kRms, kLayer };  // RMSNormalization or LayerNormalization(epsilon 1e-6)

struct DecoderLanguageModelOptions {
  int64_t vocabulary = 256;  // bytes
  int64_t sequence_length = 64;
  int64_t dim = 64;
  int64_t heads = 4;
  int64_t feed_forward = 256;
  int64_t blocks = 2;
  DecoderMlp mlp = DecoderMlp::kGelu;
  DecoderNorm norm = DecoderNorm::kRms;
  // false: x + attention(norm1(x)), then x + mlp(norm2(x)) (GPT-2, Llama);
  // true: x + attention(norm1(x)) + mlp(norm1(x)), one Add (GPT-J, PaLM).
  bool parallel_block = false;
  bool causal = true;  // position i attends to positions <= i only
  // Positions: a learned embedding added to the tokens' (GPT-2), or rotary
  // (RoPE, Llama, MaxText): each attention's query and key rotated by their
  // position, wavelengths up to rotary_max_wavelength, no weights.
  bool rotary_positions = false;
  double rotary_max_wavelength = 10000.0;
  // Logits: a Dense of their own (with a bias), or tied to the token
  // embedding (its table transposed, keras_hub's ReversibleEmbedding;
  // GPT-2, MaxText).
  bool tied_logits = false;
  std::string name = "decoder_language_model";
};

// A decoder-only language model: token embeddings plus a learned position
// embedding (or rotary positions in the attention), `blocks` pre-norm blocks (norms, self-attention, an MLP,
// residual adds; the options above), a final norm and logits over the
// vocabulary at every position (the next token's; a Dense of their own, or
// tied to the embedding). int32 [sequence_length] -> float32 [sequence_length, vocabulary].
// tools/keras_goldens/zoo_models.py is its Keras twin, name for name (the
// learned positions; rotary ones are keras_hub's, not in Keras 3 itself).
std::shared_ptr<keras::Model> decoder_language_model(const DecoderLanguageModelOptions& options = {});

// configs/models/decoder_lm.yaml's configuration: SwiGLU MLPs of 192 units,
// named "decoder_lm".
DecoderLanguageModelOptions decoder_lm_options();

// The names of the models above, and one built by name with its defaults
// (NotFoundError for another name, listing these).
const std::vector<std::string>& model_names();
std::shared_ptr<keras::Model> build_model(const std::string& name);

}  // namespace accel::model_zoo
