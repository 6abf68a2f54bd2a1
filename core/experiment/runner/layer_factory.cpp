// make_layer: one configured layer (schema.cpp's layer calls) as the Keras
// layer of that name, with its arguments; unbuilt.
#include "layer_factory.hpp"

#include "keras_arguments.hpp"

#include <accel/keras/layers.hpp>
#include <accel/keras/layers/conv2d_transpose.hpp>
#include <accel/keras/layers/cropping2d.hpp>
#include <accel/keras/layers/depthwise_conv2d.hpp>
#include <accel/keras/layers/separable_conv2d.hpp>
#include <accel/keras/layers/global_average_pooling1d.hpp>
#include <accel/keras/layers/global_max_pooling1d.hpp>
#include <accel/keras/layers/global_max_pooling2d.hpp>
#include <accel/keras/layers/layer_normalization.hpp>
#include <accel/keras/layers/multi_head_attention.hpp>
#include <accel/keras/layers/permute.hpp>
#include <accel/keras/layers/position_embedding.hpp>
#include <accel/keras/layers/repeat_vector.hpp>
#include <accel/keras/layers/reshape.hpp>
#include <accel/keras/layers/up_sampling2d.hpp>
#include <accel/keras/layers/zero_padding2d.hpp>

#include <string>
#include <vector>

namespace accel::experiment {
namespace {

keras::Pooling2DOptions pooling_options(const KerasObject& layer) {
  keras::Pooling2DOptions options;
  options.pool_size = pair_or(layer, "pool_size", {2, 2});
  if (set_argument(layer, "strides")) options.strides = pair_or(layer, "strides", options.pool_size);
  options.padding = text_or(layer, "padding", "valid");
  options.name = text_or(layer, "name", "");
  return options;
}

// n, [rows, columns] or [top, bottom, left, right] (schema_check's kMargins2D).
keras::Margins2D margins_or(const KerasObject& layer, const std::string& key, int64_t fallback) {
  const Value* value = set_argument(layer, key);
  if (!value) return fallback;
  const std::vector<int64_t> ints = value->as_ints();
  if (ints.size() == 1) return ints[0];
  if (ints.size() == 2) return {ints[0], ints[1]};
  return {std::pair{ints.at(0), ints.at(1)}, std::pair{ints.at(2), ints.at(3)}};
}

// The arguments every kernel layer takes (weight_arguments() in the schema):
// activation, use_bias and the two initializers.
template <typename Options>
void set_kernel_options(const KerasObject& layer, Options& options) {
  options.activation = text_or(layer, "activation", "linear");
  options.use_bias = bool_or(layer, "use_bias", true);
  options.kernel_initializer = initializer_or_default(layer, "kernel_initializer", options.kernel_initializer);
  options.bias_initializer = initializer_or_default(layer, "bias_initializer", options.bias_initializer);
}

std::shared_ptr<keras::Layer> make_convolution(const KerasObject& layer, const std::string& name) {
  const std::string& kind = layer.name;
  const std::array<int32_t, 2> kernel_size = pair_or(layer, "kernel_size", {3, 3});
  if (kind == "conv2d") {
    keras::Conv2DOptions options;
    options.strides = pair_or(layer, "strides", {1, 1});
    options.padding = text_or(layer, "padding", "valid");
    options.dilation_rate = pair_or(layer, "dilation_rate", {1, 1});
    options.groups = int_or(layer, "groups", 1);
    set_kernel_options(layer, options);
    options.name = name;
    return std::make_shared<keras::Conv2D>(set_argument(layer, "filters")->as_int(), kernel_size, options);
  }
  if (kind == "depthwise_conv2d") {
    keras::DepthwiseConv2DOptions options;
    options.strides = pair_or(layer, "strides", {1, 1});
    options.padding = text_or(layer, "padding", "valid");
    options.depth_multiplier = int_or(layer, "depth_multiplier", 1);
    options.dilation_rate = pair_or(layer, "dilation_rate", {1, 1});
    options.activation = text_or(layer, "activation", "linear");
    options.use_bias = bool_or(layer, "use_bias", true);
    options.depthwise_initializer = initializer_or_default(layer, "depthwise_initializer", options.depthwise_initializer);
    options.bias_initializer = initializer_or_default(layer, "bias_initializer", options.bias_initializer);
    options.name = name;
    return std::make_shared<keras::DepthwiseConv2D>(kernel_size, options);
  }
  if (kind == "separable_conv2d") {
    keras::SeparableConv2DOptions options;
    options.strides = pair_or(layer, "strides", {1, 1});
    options.padding = text_or(layer, "padding", "valid");
    options.dilation_rate = pair_or(layer, "dilation_rate", {1, 1});
    options.depth_multiplier = int_or(layer, "depth_multiplier", 1);
    options.activation = text_or(layer, "activation", "linear");
    options.use_bias = bool_or(layer, "use_bias", true);
    options.depthwise_initializer = initializer_or_default(layer, "depthwise_initializer", options.depthwise_initializer);
    options.pointwise_initializer = initializer_or_default(layer, "pointwise_initializer", options.pointwise_initializer);
    options.bias_initializer = initializer_or_default(layer, "bias_initializer", options.bias_initializer);
    options.name = name;
    return std::make_shared<keras::SeparableConv2D>(set_argument(layer, "filters")->as_int(), kernel_size, options);
  }
  keras::Conv2DTransposeOptions options;
  options.strides = pair_or(layer, "strides", {1, 1});
  options.padding = text_or(layer, "padding", "valid");
  if (const Value* output_padding = set_argument(layer, "output_padding")) options.output_padding = pair_of(*output_padding);
  options.dilation_rate = pair_or(layer, "dilation_rate", {1, 1});
  set_kernel_options(layer, options);
  options.name = name;
  return std::make_shared<keras::Conv2DTranspose>(set_argument(layer, "filters")->as_int(), kernel_size, options);
}

std::shared_ptr<keras::Layer> make_multi_head_attention(const KerasObject& layer, const std::string& name) {
  keras::MultiHeadAttentionOptions options;
  if (const Value* value_dim = set_argument(layer, "value_dim")) options.value_dim = value_dim->as_int();
  options.dropout = number_or(layer, "dropout", 0.0);
  options.use_bias = bool_or(layer, "use_bias", true);
  if (const Value* output_shape = set_argument(layer, "output_shape")) options.output_shape = output_shape->as_int();
  if (const Value* wavelength = set_argument(layer, "rotary_max_wavelength")) {
    options.rotary_max_wavelength = wavelength->as_number();
  }
  options.kernel_initializer = initializer_or_default(layer, "kernel_initializer", options.kernel_initializer);
  options.bias_initializer = initializer_or_default(layer, "bias_initializer", options.bias_initializer);
  options.name = name;
  return std::make_shared<keras::MultiHeadAttention>(set_argument(layer, "num_heads")->as_int(),
                                                     set_argument(layer, "key_dim")->as_int(), options);
}

// The layers without weights that pool, reshape or pad; nullptr for another kind.
std::shared_ptr<keras::Layer> make_shaping_layer(const KerasObject& layer, const std::string& name) {
  const std::string& kind = layer.name;
  const bool keepdims = bool_or(layer, "keepdims", false);
  if (kind == "max_pooling2d") return std::make_shared<keras::MaxPooling2D>(pooling_options(layer));
  if (kind == "average_pooling2d") return std::make_shared<keras::AveragePooling2D>(pooling_options(layer));
  if (kind == "global_average_pooling2d") {
    return std::make_shared<keras::GlobalAveragePooling2D>(
        keras::GlobalAveragePooling2DOptions{.keepdims = keepdims, .name = name});
  }
  if (kind == "global_max_pooling2d") {
    return std::make_shared<keras::GlobalMaxPooling2D>(keras::GlobalMaxPooling2DOptions{.keepdims = keepdims, .name = name});
  }
  if (kind == "global_average_pooling1d") {
    return std::make_shared<keras::GlobalAveragePooling1D>(keras::GlobalPooling1DOptions{.keepdims = keepdims, .name = name});
  }
  if (kind == "global_max_pooling1d") {
    return std::make_shared<keras::GlobalMaxPooling1D>(keras::GlobalPooling1DOptions{.keepdims = keepdims, .name = name});
  }
  if (kind == "flatten") return std::make_shared<keras::Flatten>(name);
  if (kind == "reshape") return std::make_shared<keras::Reshape>(set_argument(layer, "target_shape")->as_ints(), name);
  if (kind == "permute") {
    std::vector<int32_t> dims;
    for (int64_t d : set_argument(layer, "dims")->as_ints()) dims.push_back(static_cast<int32_t>(d));
    return std::make_shared<keras::Permute>(std::move(dims), name);
  }
  if (kind == "repeat_vector") return std::make_shared<keras::RepeatVector>(set_argument(layer, "n")->as_int(), name);
  if (kind == "zero_padding2d") {
    return std::make_shared<keras::ZeroPadding2D>(
        keras::ZeroPadding2DOptions{.padding = margins_or(layer, "padding", 1), .name = name});
  }
  if (kind == "cropping2d") {
    return std::make_shared<keras::Cropping2D>(
        keras::Cropping2DOptions{.cropping = margins_or(layer, "cropping", 0), .name = name});
  }
  if (kind == "up_sampling2d") {
    keras::UpSampling2DOptions options;
    options.size = pair_or(layer, "size", {2, 2});
    options.interpolation = text_or(layer, "interpolation", "nearest");
    options.name = name;
    return std::make_shared<keras::UpSampling2D>(options);
  }
  return nullptr;
}

// The merge layers; nullptr for another kind.
std::shared_ptr<keras::Layer> make_merge_layer(const KerasObject& layer, const std::string& name) {
  const std::string& kind = layer.name;
  if (kind == "add") return std::make_shared<keras::Add>(name);
  if (kind == "subtract") return std::make_shared<keras::Subtract>(name);
  if (kind == "multiply") return std::make_shared<keras::Multiply>(name);
  if (kind == "average") return std::make_shared<keras::Average>(name);
  if (kind == "maximum") return std::make_shared<keras::Maximum>(name);
  if (kind == "minimum") return std::make_shared<keras::Minimum>(name);
  if (kind == "concatenate") return std::make_shared<keras::Concatenate>(static_cast<int32_t>(int_or(layer, "axis", -1)), name);
  return nullptr;
}

std::shared_ptr<keras::Layer> make_layer_of_kind(const KerasObject& layer, const EarlierLayer& earlier_layer) {
  const std::string& kind = layer.name;
  const std::string name = text_or(layer, "name", "");
  if (kind == "reversed_embedding") {
    const std::string embedding = text_or(layer, "embedding", "");
    auto table = std::dynamic_pointer_cast<keras::Embedding>(earlier_layer ? earlier_layer(embedding) : nullptr);
    if (table == nullptr) {
      throw InvalidArgumentError("reversed_embedding '" + name + "': '" + embedding +
                                 "' is not an embedding layer made before it (model.graph)");
    }
    return std::make_shared<keras::ReversedEmbedding>(std::move(table), name);
  }
  if (kind == "dense") {
    keras::DenseOptions options;
    options.activation = text_or(layer, "activation", "linear");
    options.use_bias = bool_or(layer, "use_bias", true);
    options.kernel_initializer = initializer_or_default(layer, "kernel_initializer", options.kernel_initializer);
    options.bias_initializer = initializer_or_default(layer, "bias_initializer", options.bias_initializer);
    options.name = name;
    return std::make_shared<keras::Dense>(set_argument(layer, "units")->as_int(), options);
  }
  if (kind == "conv2d" || kind == "depthwise_conv2d" || kind == "separable_conv2d" || kind == "conv2d_transpose") {
    return make_convolution(layer, name);
  }
  if (kind == "conv1d") {
    keras::Conv1DOptions options;
    options.strides = static_cast<int32_t>(int_or(layer, "strides", 1));
    options.padding = text_or(layer, "padding", "valid");
    options.dilation_rate = static_cast<int32_t>(int_or(layer, "dilation_rate", 1));
    options.groups = int_or(layer, "groups", 1);
    set_kernel_options(layer, options);
    options.name = name;
    return std::make_shared<keras::Conv1D>(set_argument(layer, "filters")->as_int(),
                                           static_cast<int32_t>(set_argument(layer, "kernel_size")->as_int()), options);
  }
  if (kind == "prelu") {
    keras::PReLUOptions options;
    options.alpha_initializer = initializer_or_default(layer, "alpha_initializer", options.alpha_initializer);
    if (const Value* shared_axes = set_argument(layer, "shared_axes")) {
      for (int64_t axis : shared_axes->as_ints()) options.shared_axes.push_back(static_cast<int32_t>(axis));
    }
    options.name = name;
    return std::make_shared<keras::PReLU>(options);
  }
  if (kind == "multi_head_attention") return make_multi_head_attention(layer, name);
  if (auto shaping = make_shaping_layer(layer, name)) return shaping;
  if (auto merge = make_merge_layer(layer, name)) return merge;
  if (kind == "activation") return std::make_shared<keras::Activation>(text_or(layer, "activation", "linear"), name);
  if (kind == "relu") {
    keras::ReLUOptions options;
    if (const Value* max_value = set_argument(layer, "max_value")) options.max_value = max_value->as_number();
    options.negative_slope = number_or(layer, "negative_slope", 0.0);
    options.threshold = number_or(layer, "threshold", 0.0);
    options.name = name;
    return std::make_shared<keras::ReLU>(options);
  }
  if (kind == "leaky_relu") return std::make_shared<keras::LeakyReLU>(number_or(layer, "negative_slope", 0.3), name);
  if (kind == "elu") return std::make_shared<keras::ELU>(number_or(layer, "alpha", 1.0), name);
  if (kind == "softmax") return std::make_shared<keras::Softmax>(static_cast<int32_t>(int_or(layer, "axis", -1)), name);
  if (kind == "rescaling") {
    return std::make_shared<keras::Rescaling>(set_argument(layer, "scale")->as_number(),
                                              number_or(layer, "offset", 0.0), name);
  }
  if (kind == "dropout") {
    keras::DropoutOptions options;
    if (const Value* seed = set_argument(layer, "seed")) options.seed = static_cast<uint64_t>(seed->as_int());
    options.name = name;
    return std::make_shared<keras::Dropout>(number_or(layer, "rate", 0.0), options);
  }
  if (kind == "batch_normalization") {
    keras::BatchNormalizationOptions options;
    options.axis = static_cast<int32_t>(int_or(layer, "axis", -1));
    options.momentum = number_or(layer, "momentum", 0.99);
    options.epsilon = number_or(layer, "epsilon", 1e-3);
    options.center = bool_or(layer, "center", true);
    options.scale = bool_or(layer, "scale", true);
    options.name = name;
    return std::make_shared<keras::BatchNormalization>(options);
  }
  if (kind == "layer_normalization") {
    keras::LayerNormalizationOptions options;
    options.axis = {static_cast<int32_t>(int_or(layer, "axis", -1))};
    options.epsilon = number_or(layer, "epsilon", 1e-3);
    options.center = bool_or(layer, "center", true);
    options.scale = bool_or(layer, "scale", true);
    options.name = name;
    return std::make_shared<keras::LayerNormalization>(options);
  }
  if (kind == "rms_normalization") {
    keras::RMSNormalizationOptions options;
    options.axis = {static_cast<int32_t>(int_or(layer, "axis", -1))};
    options.epsilon = number_or(layer, "epsilon", 1e-6);
    options.name = name;
    return std::make_shared<keras::RMSNormalization>(options);
  }
  if (kind == "embedding") {
    keras::EmbeddingOptions options;
    options.embeddings_initializer =
        initializer_or_default(layer, "embeddings_initializer", options.embeddings_initializer);
    options.name = name;
    return std::make_shared<keras::Embedding>(set_argument(layer, "input_dim")->as_int(),
                                              set_argument(layer, "output_dim")->as_int(), options);
  }
  if (kind == "position_embedding") {
    keras::PositionEmbeddingOptions options;
    options.initializer = initializer_or_default(layer, "initializer", options.initializer);
    options.name = name;
    return std::make_shared<keras::PositionEmbedding>(options);
  }
  unsupported("layer", kind);
}

}  // namespace

std::shared_ptr<keras::Layer> make_layer(const KerasObject& config, const EarlierLayer& earlier_layer) {
  std::shared_ptr<keras::Layer> layer = make_layer_of_kind(config, earlier_layer);
  if (!bool_or(config, "trainable", true)) layer->set_trainable(false);
  // Before the layer is built: its weights are made in the policy's variable dtype.
  if (set_argument(config, "dtype") != nullptr) layer->set_dtype_policy(keras::DTypePolicy(text_or(config, "dtype", "float32")));
  return layer;
}

}  // namespace accel::experiment
