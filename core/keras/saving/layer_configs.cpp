// One entry per layer class: how its config is written (the keys and
// defaults TensorFlow 2.21's Keras 3.15 writes) and read back (LayerArguments,
// strict). Arguments accel's layers do not have must hold Keras's neutral
// value (no regularizer, no constraint, channels_last).
#include "layer_configs.hpp"

#include <accel/error.hpp>
#include <accel/keras/input_layer.hpp>
#include <accel/keras/layers.hpp>

#include "layer_arguments.hpp"

#include <functional>
#include <map>

namespace accel::keras::saving {
namespace {

using nlohmann::json;

json base_config(const Layer& layer) {
  return {{"name", layer.name()}, {"trainable", layer.trainable()}, {"dtype", dtype_policy_json(layer.dtype_policy())}};
}

json seed_json(const std::optional<uint64_t>& seed) { return seed ? json(*seed) : json(nullptr); }

json initializer_config(const std::shared_ptr<Initializer>& initializer, const Layer& layer) {
  auto object = [](const char* class_name, json config) {
    return json{{"module", "keras.initializers"}, {"class_name", class_name}, {"config", std::move(config)},
                {"registered_name", nullptr}};
  };
  const Initializer* raw = initializer.get();
  if (dynamic_cast<const Zeros*>(raw)) return object("Zeros", json::object());
  if (dynamic_cast<const Ones*>(raw)) return object("Ones", json::object());
  if (const auto* glorot = dynamic_cast<const GlorotUniform*>(raw)) {
    return object("GlorotUniform", {{"seed", seed_json(glorot->seed())}});
  }
  if (const auto* he = dynamic_cast<const HeNormal*>(raw)) return object("HeNormal", {{"seed", seed_json(he->seed())}});
  if (const auto* uniform = dynamic_cast<const RandomUniform*>(raw)) {
    return object("RandomUniform",
                  {{"minval", uniform->minval()}, {"maxval", uniform->maxval()}, {"seed", seed_json(uniform->seed())}});
  }
  throw UnimplementedError("layer '" + layer.name() + "' (" + layer.class_name() +
                           ") has an initializer of its own that a .keras config cannot name");
}

json pair_json(const std::array<int32_t, 2>& pair) { return json::array({pair[0], pair[1]}); }

const char* padding_name(ops::Padding padding) { return padding == ops::Padding::kSame ? "same" : "valid"; }

// The keys of every weighted layer Keras 3 writes as null.
void add_null_regularizers(json& config, std::initializer_list<const char*> keys) {
  for (const char* key : keys) config[key] = nullptr;
}

void require_neutral(LayerArguments& arguments, std::initializer_list<const char*> keys) {
  for (const char* key : keys) arguments.require(key, nullptr, "accel has no regularizers or constraints");
}

void require_channels_last(LayerArguments& arguments) {
  arguments.require("data_format", "channels_last", "accel's images are NHWC");
}

struct LayerCodec {
  std::function<json(const Layer&)> to_config;  // the class's own keys, added to base_config
  std::function<std::shared_ptr<Layer>(LayerArguments&)> from_config;
};

// A merge layer with no arguments of its own (Add, Subtract, Multiply,
// Average, Maximum, Minimum): Keras writes only the base config.
template <typename MergeLayer>
LayerCodec merge_codec() {
  return {[](const Layer&) { return json::object(); },
          [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
            return std::make_shared<MergeLayer>(arguments.layer_name());
          }};
}

json relu_config(const ReLU& relu) {
  const ReLUOptions& options = relu.options();
  return {{"max_value", options.max_value ? json(*options.max_value) : json(nullptr)},
          {"negative_slope", options.negative_slope},
          {"threshold", options.threshold}};
}

std::shared_ptr<Layer> relu_from(LayerArguments& arguments) {
  ReLUOptions options;
  const json max_value = arguments.raw("max_value");
  if (!max_value.is_null()) {
    if (!max_value.is_number()) arguments.fail("argument 'max_value' must be null or a number");
    options.max_value = max_value.get<double>();
  }
  options.negative_slope = arguments.number("negative_slope", 0.0);
  options.threshold = arguments.number("threshold", 0.0);
  options.name = arguments.layer_name();
  return std::make_shared<ReLU>(options);
}

// The global poolings (1D and 2D, average and max): channels_last and keepdims.
template <typename PoolingLayer, typename PoolingOptions>
LayerCodec global_pooling_codec() {
  return {[](const Layer& layer) {
            return json{{"data_format", "channels_last"},
                        {"keepdims", static_cast<const PoolingLayer&>(layer).keepdims()}};
          },
          [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
            require_channels_last(arguments);
            PoolingOptions options;
            options.keepdims = arguments.boolean("keepdims", false);
            options.name = arguments.layer_name();
            return std::make_shared<PoolingLayer>(options);
          }};
}

// The keys every convolution writes and reads alike: activation, use_bias,
// the two initializers, and regularizers and constraints that must be null.
template <typename Options>
void add_kernel_config(json& config, const Options& options, const Layer& layer) {
  config["activation"] = options.activation;
  config["use_bias"] = options.use_bias;
  config["kernel_initializer"] = initializer_config(options.kernel_initializer, layer);
  config["bias_initializer"] = initializer_config(options.bias_initializer, layer);
  add_null_regularizers(config, {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                                 "bias_constraint"});
}

template <typename Options>
void read_kernel_config(LayerArguments& arguments, Options& options) {
  options.activation = arguments.text("activation", options.activation);
  options.use_bias = arguments.boolean("use_bias", options.use_bias);
  options.kernel_initializer = arguments.initializer("kernel_initializer", options.kernel_initializer);
  options.bias_initializer = arguments.initializer("bias_initializer", options.bias_initializer);
  require_neutral(arguments, {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                              "bias_constraint", "lora_rank"});
}

json dense_config(const Dense& dense) {
  json config{{"units", dense.units()},
              {"activation", dense.options().activation},
              {"use_bias", dense.options().use_bias},
              {"kernel_initializer", initializer_config(dense.options().kernel_initializer, dense)},
              {"bias_initializer", initializer_config(dense.options().bias_initializer, dense)}};
  add_null_regularizers(config, {"kernel_regularizer", "bias_regularizer", "kernel_constraint", "bias_constraint",
                                 "quantization_config"});
  return config;
}

std::shared_ptr<Layer> dense_from(LayerArguments& arguments) {
  DenseOptions options;
  const int64_t units = arguments.integer("units", -1);
  if (units <= 0) arguments.fail("argument 'units' is missing or not positive");
  options.activation = arguments.text("activation", "linear");
  options.use_bias = arguments.boolean("use_bias", true);
  options.kernel_initializer = arguments.initializer("kernel_initializer", options.kernel_initializer);
  options.bias_initializer = arguments.initializer("bias_initializer", options.bias_initializer);
  require_neutral(arguments, {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                              "bias_constraint", "quantization_config", "lora_rank"});
  options.name = arguments.layer_name();
  return std::make_shared<Dense>(units, options);
}

json conv2d_config(const Conv2D& conv) {
  const Conv2DOptions& options = conv.options();
  json config{{"filters", conv.filters()},
              {"kernel_size", pair_json(conv.kernel_size())},
              {"strides", pair_json(options.strides)},
              {"padding", options.padding},
              {"data_format", "channels_last"},
              {"dilation_rate", pair_json(options.dilation_rate)},
              {"groups", options.groups}};
  add_kernel_config(config, options, conv);
  return config;
}

std::shared_ptr<Layer> conv2d_from(LayerArguments& arguments) {
  Conv2DOptions options;
  const int64_t filters = arguments.integer("filters", -1);
  if (filters <= 0) arguments.fail("argument 'filters' is missing or not positive");
  const std::array<int32_t, 2> kernel_size = arguments.pair("kernel_size", {0, 0});
  options.strides = arguments.pair("strides", options.strides);
  options.padding = arguments.text("padding", options.padding);
  require_channels_last(arguments);
  options.dilation_rate = arguments.pair("dilation_rate", options.dilation_rate);
  options.groups = arguments.integer("groups", options.groups);
  read_kernel_config(arguments, options);
  options.name = arguments.layer_name();
  return std::make_shared<Conv2D>(filters, kernel_size, options);
}

json separable_conv2d_config(const SeparableConv2D& conv) {
  const SeparableConv2DOptions& options = conv.options();
  json config{{"depth_multiplier", options.depth_multiplier},
              {"filters", conv.filters()},
              {"kernel_size", pair_json(conv.kernel_size())},
              {"strides", pair_json(options.strides)},
              {"padding", options.padding},
              {"data_format", "channels_last"},
              {"dilation_rate", pair_json(options.dilation_rate)},
              {"activation", options.activation},
              {"use_bias", options.use_bias},
              {"depthwise_initializer", initializer_config(options.depthwise_initializer, conv)},
              {"pointwise_initializer", initializer_config(options.pointwise_initializer, conv)},
              {"bias_initializer", initializer_config(options.bias_initializer, conv)}};
  add_null_regularizers(config, {"depthwise_regularizer", "pointwise_regularizer", "bias_regularizer",
                                 "activity_regularizer", "depthwise_constraint", "pointwise_constraint",
                                 "bias_constraint"});
  return config;
}

std::shared_ptr<Layer> separable_conv2d_from(LayerArguments& arguments) {
  SeparableConv2DOptions options;
  const int64_t filters = arguments.integer("filters", -1);
  if (filters <= 0) arguments.fail("argument 'filters' is missing or not positive");
  const std::array<int32_t, 2> kernel_size = arguments.pair("kernel_size", {0, 0});
  options.strides = arguments.pair("strides", options.strides);
  options.padding = arguments.text("padding", options.padding);
  require_channels_last(arguments);
  options.dilation_rate = arguments.pair("dilation_rate", options.dilation_rate);
  options.depth_multiplier = arguments.integer("depth_multiplier", options.depth_multiplier);
  options.activation = arguments.text("activation", options.activation);
  options.use_bias = arguments.boolean("use_bias", options.use_bias);
  options.depthwise_initializer = arguments.initializer("depthwise_initializer", options.depthwise_initializer);
  options.pointwise_initializer = arguments.initializer("pointwise_initializer", options.pointwise_initializer);
  options.bias_initializer = arguments.initializer("bias_initializer", options.bias_initializer);
  require_neutral(arguments, {"depthwise_regularizer", "pointwise_regularizer", "bias_regularizer",
                              "activity_regularizer", "depthwise_constraint", "pointwise_constraint",
                              "bias_constraint"});
  options.name = arguments.layer_name();
  return std::make_shared<SeparableConv2D>(filters, kernel_size, options);
}

json pooling_config(const Pooling2D& pooling) {
  const ops::Pool2DOptions& options = pooling.pool_options();
  return {{"pool_size", pair_json(options.window)},
          {"padding", padding_name(options.padding)},
          {"strides", pair_json(options.strides)},
          {"data_format", "channels_last"}};
}

template <typename PoolingLayer>
std::shared_ptr<Layer> pooling_from(LayerArguments& arguments) {
  Pooling2DOptions options;
  options.pool_size = arguments.pair("pool_size", options.pool_size);
  options.strides = arguments.optional_pair("strides");
  options.padding = arguments.text("padding", options.padding);
  require_channels_last(arguments);
  options.name = arguments.layer_name();
  return std::make_shared<PoolingLayer>(options);
}

json batch_normalization_config(const BatchNormalization& layer) {
  const BatchNormalizationOptions& options = layer.options();
  json config{{"axis", options.axis},
              {"momentum", options.momentum},
              {"epsilon", options.epsilon},
              {"center", options.center},
              {"scale", options.scale},
              {"beta_initializer", initializer_config(options.beta_initializer, layer)},
              {"gamma_initializer", initializer_config(options.gamma_initializer, layer)},
              {"moving_mean_initializer", initializer_config(options.moving_mean_initializer, layer)},
              {"moving_variance_initializer", initializer_config(options.moving_variance_initializer, layer)}};
  add_null_regularizers(config, {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"});
  config["synchronized"] = false;
  config["renorm"] = false;
  config["renorm_clipping"] = nullptr;
  config["renorm_momentum"] = 0.99;
  return config;
}

std::shared_ptr<Layer> batch_normalization_from(LayerArguments& arguments) {
  BatchNormalizationOptions options;
  options.axis = static_cast<int32_t>(arguments.integer("axis", options.axis));
  options.momentum = arguments.number("momentum", options.momentum);
  options.epsilon = arguments.number("epsilon", options.epsilon);
  options.center = arguments.boolean("center", options.center);
  options.scale = arguments.boolean("scale", options.scale);
  options.beta_initializer = arguments.initializer("beta_initializer", options.beta_initializer);
  options.gamma_initializer = arguments.initializer("gamma_initializer", options.gamma_initializer);
  options.moving_mean_initializer = arguments.initializer("moving_mean_initializer", options.moving_mean_initializer);
  options.moving_variance_initializer =
      arguments.initializer("moving_variance_initializer", options.moving_variance_initializer);
  require_neutral(arguments, {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint",
                              "renorm_clipping"});
  arguments.require("synchronized", false, "replicas keep their own batch statistics, as Keras 2");
  arguments.require("renorm", false, "accel has no batch renormalization");
  arguments.ignore("renorm_momentum");  // used only with renorm
  options.name = arguments.layer_name();
  return std::make_shared<BatchNormalization>(options);
}

json dropout_config(const Dropout& dropout) {
  const json noise_shape = dropout.noise_shape().empty() ? json(nullptr) : shape_json(dropout.noise_shape());
  // Keras seeds are Python ints TensorFlow turns into int32; accel's drawn
  // 64-bit seeds do not fit, and its dropout masks differ from Keras's anyway.
  const json seed = dropout.seed() <= 0x7fffffffu ? json(dropout.seed()) : json(nullptr);
  return {{"rate", dropout.rate()}, {"seed", seed}, {"noise_shape", noise_shape}};
}

std::shared_ptr<Layer> dropout_from(LayerArguments& arguments) {
  DropoutOptions options;
  const double rate = arguments.number("rate", -1.0);
  options.seed = arguments.optional_seed("seed");
  if (std::optional<std::vector<int64_t>> noise_shape = arguments.optional_shape("noise_shape")) {
    options.noise_shape = LayerShape(*noise_shape);
  }
  if (rate < 0.0 || rate >= 1.0) arguments.fail("argument 'rate' is missing or not in [0, 1)");
  options.name = arguments.layer_name();
  return std::make_shared<Dropout>(rate, options);
}

// Conv1D's kernel_size, strides and dilation_rate: an int or a one-element list.
int32_t single(LayerArguments& arguments, const std::string& key, int32_t fallback) {
  const json value = arguments.raw(key);
  if (value.is_null()) return fallback;
  if (value.is_number_integer()) return value.get<int32_t>();
  if (value.is_array() && value.size() == 1 && value[0].is_number_integer()) return value[0].get<int32_t>();
  arguments.fail("argument '" + key + "' is " + value.dump() + ", expected an int or a list of one int");
}

json conv1d_config(const Conv1D& conv) {
  const Conv1DOptions& options = conv.options();
  json config{{"filters", conv.filters()},
              {"kernel_size", json::array({conv.kernel_size()})},
              {"strides", json::array({options.strides})},
              {"padding", options.padding},
              {"data_format", "channels_last"},
              {"dilation_rate", json::array({options.dilation_rate})},
              {"groups", options.groups}};
  add_kernel_config(config, options, conv);
  return config;
}

std::shared_ptr<Layer> conv1d_from(LayerArguments& arguments) {
  Conv1DOptions options;
  const int64_t filters = arguments.integer("filters", -1);
  if (filters <= 0) arguments.fail("argument 'filters' is missing or not positive");
  const int32_t kernel_size = single(arguments, "kernel_size", 0);
  options.strides = single(arguments, "strides", options.strides);
  options.padding = arguments.text("padding", options.padding);
  require_channels_last(arguments);
  options.dilation_rate = single(arguments, "dilation_rate", options.dilation_rate);
  options.groups = arguments.integer("groups", options.groups);
  read_kernel_config(arguments, options);
  options.name = arguments.layer_name();
  return std::make_shared<Conv1D>(filters, kernel_size, options);
}

json depthwise_conv2d_config(const DepthwiseConv2D& conv) {
  const DepthwiseConv2DOptions& options = conv.options();
  json config{{"depth_multiplier", options.depth_multiplier},
              {"kernel_size", pair_json(conv.kernel_size())},
              {"strides", pair_json(options.strides)},
              {"padding", options.padding},
              {"data_format", "channels_last"},
              {"dilation_rate", pair_json(options.dilation_rate)},
              {"activation", options.activation},
              {"use_bias", options.use_bias},
              {"depthwise_initializer", initializer_config(options.depthwise_initializer, conv)},
              {"bias_initializer", initializer_config(options.bias_initializer, conv)}};
  add_null_regularizers(config, {"depthwise_regularizer", "bias_regularizer", "activity_regularizer",
                                 "depthwise_constraint", "bias_constraint"});
  return config;
}

std::shared_ptr<Layer> depthwise_conv2d_from(LayerArguments& arguments) {
  DepthwiseConv2DOptions options;
  const std::array<int32_t, 2> kernel_size = arguments.pair("kernel_size", {0, 0});
  options.depth_multiplier = arguments.integer("depth_multiplier", options.depth_multiplier);
  options.strides = arguments.pair("strides", options.strides);
  options.padding = arguments.text("padding", options.padding);
  require_channels_last(arguments);
  options.dilation_rate = arguments.pair("dilation_rate", options.dilation_rate);
  options.activation = arguments.text("activation", options.activation);
  options.use_bias = arguments.boolean("use_bias", options.use_bias);
  options.depthwise_initializer = arguments.initializer("depthwise_initializer", options.depthwise_initializer);
  options.bias_initializer = arguments.initializer("bias_initializer", options.bias_initializer);
  require_neutral(arguments, {"depthwise_regularizer", "bias_regularizer", "activity_regularizer",
                              "depthwise_constraint", "bias_constraint"});
  options.name = arguments.layer_name();
  return std::make_shared<DepthwiseConv2D>(kernel_size, options);
}

json conv2d_transpose_config(const Conv2DTranspose& conv) {
  const Conv2DTransposeOptions& options = conv.options();
  json config{{"filters", conv.filters()},
              {"kernel_size", pair_json(conv.kernel_size())},
              {"strides", pair_json(options.strides)},
              {"padding", options.padding},
              {"output_padding", options.output_padding ? pair_json(*options.output_padding) : json(nullptr)},
              {"data_format", "channels_last"},
              {"dilation_rate", pair_json(options.dilation_rate)}};
  add_kernel_config(config, options, conv);
  return config;
}

std::shared_ptr<Layer> conv2d_transpose_from(LayerArguments& arguments) {
  Conv2DTransposeOptions options;
  const int64_t filters = arguments.integer("filters", -1);
  if (filters <= 0) arguments.fail("argument 'filters' is missing or not positive");
  const std::array<int32_t, 2> kernel_size = arguments.pair("kernel_size", {0, 0});
  options.strides = arguments.pair("strides", options.strides);
  options.padding = arguments.text("padding", options.padding);
  options.output_padding = arguments.optional_pair("output_padding");
  require_channels_last(arguments);
  options.dilation_rate = arguments.pair("dilation_rate", options.dilation_rate);
  read_kernel_config(arguments, options);
  options.name = arguments.layer_name();
  return std::make_shared<Conv2DTranspose>(filters, kernel_size, options);
}

json margins_json(const Margins2D& margins) {
  return json::array({json::array({margins.top, margins.bottom}), json::array({margins.left, margins.right})});
}

// Keras's three spellings of ZeroPadding2D's padding and Cropping2D's
// cropping: an int, (height, width), ((top, bottom), (left, right)).
std::optional<Margins2D> margins_from(LayerArguments& arguments, const std::string& key) {
  const json value = arguments.raw(key);
  auto side = [&](const json& item) -> int64_t {
    if (!item.is_number_integer()) arguments.fail("argument '" + key + "' is " + value.dump() + ", expected integers");
    return item.get<int64_t>();
  };
  if (value.is_null()) return std::nullopt;  // the layer's default
  if (value.is_number_integer()) return Margins2D(side(value));
  if (value.is_array() && value.size() == 2 && value[0].is_array() && value[1].is_array() && value[0].size() == 2 &&
      value[1].size() == 2) {
    return Margins2D({side(value[0][0]), side(value[0][1])}, {side(value[1][0]), side(value[1][1])});
  }
  if (value.is_array() && value.size() == 2) return Margins2D(side(value[0]), side(value[1]));
  arguments.fail("argument '" + key + "' is " + value.dump() + ", expected an int, a pair or a pair of pairs");
}

// LayerNormalization's and RMSNormalization's axis: an int or a list of ints.
std::optional<std::vector<int32_t>> normalized_axes_from(LayerArguments& arguments) {
  const json axis = arguments.raw("axis");
  if (axis.is_null()) return std::nullopt;
  if (axis.is_number_integer()) return std::vector<int32_t>{axis.get<int32_t>()};
  std::vector<int32_t> axes;
  if (!axis.is_array() || axis.empty()) arguments.fail("argument 'axis' is " + axis.dump() + ", expected an int or a list of ints");
  for (const json& item : axis) {
    if (!item.is_number_integer()) arguments.fail("argument 'axis' is " + axis.dump() + ", expected integers");
    axes.push_back(item.get<int32_t>());
  }
  return axes;
}

json layer_normalization_config(const LayerNormalization& layer) {
  const LayerNormalizationOptions& options = layer.options();
  json config{{"axis", options.axis},
              {"epsilon", options.epsilon},
              {"center", options.center},
              {"scale", options.scale},
              {"rms_scaling", false},
              {"beta_initializer", initializer_config(options.beta_initializer, layer)},
              {"gamma_initializer", initializer_config(options.gamma_initializer, layer)}};
  add_null_regularizers(config, {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"});
  return config;
}

std::shared_ptr<Layer> layer_normalization_from(LayerArguments& arguments) {
  LayerNormalizationOptions options;
  if (std::optional<std::vector<int32_t>> axes = normalized_axes_from(arguments)) options.axis = *axes;
  options.epsilon = arguments.number("epsilon", options.epsilon);
  options.center = arguments.boolean("center", options.center);
  options.scale = arguments.boolean("scale", options.scale);
  arguments.require("rms_scaling", false, "accel's LayerNormalization subtracts the mean");
  options.beta_initializer = arguments.initializer("beta_initializer", options.beta_initializer);
  options.gamma_initializer = arguments.initializer("gamma_initializer", options.gamma_initializer);
  require_neutral(arguments, {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"});
  options.name = arguments.layer_name();
  return std::make_shared<LayerNormalization>(options);
}

json embedding_config(const Embedding& layer) {
  json config{{"input_dim", layer.input_dim()},
              {"output_dim", layer.output_dim()},
              {"embeddings_initializer", initializer_config(layer.options().embeddings_initializer, layer)}};
  add_null_regularizers(config, {"embeddings_regularizer", "activity_regularizer", "embeddings_constraint"});
  config["mask_zero"] = false;
  config["quantization_config"] = nullptr;
  return config;
}

std::shared_ptr<Layer> embedding_from(LayerArguments& arguments) {
  EmbeddingOptions options;
  const int64_t input_dim = arguments.integer("input_dim", -1);
  const int64_t output_dim = arguments.integer("output_dim", -1);
  if (input_dim <= 0 || output_dim <= 0) arguments.fail("arguments 'input_dim' and 'output_dim' must be positive");
  options.embeddings_initializer = arguments.initializer("embeddings_initializer", options.embeddings_initializer);
  require_neutral(arguments, {"embeddings_regularizer", "activity_regularizer", "embeddings_constraint",
                              "quantization_config", "lora_rank"});
  arguments.require("mask_zero", false, "accel's tensors carry no masks");
  arguments.ignore("input_length");  // Keras 2's, only a shape hint
  options.name = arguments.layer_name();
  return std::make_shared<Embedding>(input_dim, output_dim, options);
}

json multi_head_attention_config(const MultiHeadAttention& layer) {
  const MultiHeadAttentionOptions& options = layer.options();
  json config{{"num_heads", layer.num_heads()},
              {"key_dim", layer.key_dim()},
              {"value_dim", layer.value_dim()},
              {"dropout", options.dropout},
              {"use_bias", options.use_bias},
              {"use_gate", false},
              {"output_shape", options.output_shape ? json::array({*options.output_shape}) : json(nullptr)},
              {"attention_axes", json::array({1})},
              {"sliding_window", nullptr},
              {"kernel_initializer", initializer_config(options.kernel_initializer, layer)},
              {"bias_initializer", initializer_config(options.bias_initializer, layer)}};
  add_null_regularizers(config, {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
                                 "kernel_constraint", "bias_constraint", "seed"});
  return config;
}

std::shared_ptr<Layer> multi_head_attention_from(LayerArguments& arguments) {
  MultiHeadAttentionOptions options;
  const int64_t num_heads = arguments.integer("num_heads", -1);
  const int64_t key_dim = arguments.integer("key_dim", -1);
  if (num_heads <= 0 || key_dim <= 0) arguments.fail("arguments 'num_heads' and 'key_dim' must be positive");
  if (const json value_dim = arguments.raw("value_dim"); !value_dim.is_null()) {
    if (!value_dim.is_number_integer() || value_dim.get<int64_t>() <= 0) {
      arguments.fail("argument 'value_dim' is " + value_dim.dump() + ", expected null or a positive int");
    }
    options.value_dim = value_dim.get<int64_t>();
  }
  options.dropout = arguments.number("dropout", options.dropout);
  options.use_bias = arguments.boolean("use_bias", options.use_bias);
  if (const json output_shape = arguments.raw("output_shape"); !output_shape.is_null()) {
    const bool one_int = output_shape.is_number_integer();
    const bool list_of_one = output_shape.is_array() && output_shape.size() == 1 && output_shape[0].is_number_integer();
    if (!one_int && !list_of_one) {
      arguments.fail("argument 'output_shape' is " + output_shape.dump() +
                     ", expected null, an int or a list of one int (accel's outputs are (batch, steps, features))");
    }
    options.output_shape = one_int ? output_shape.get<int64_t>() : output_shape[0].get<int64_t>();
  }
  const json attention_axes = arguments.raw("attention_axes");
  if (!attention_axes.is_null() && attention_axes != json(1) && attention_axes != json::array({1})) {
    arguments.fail("argument 'attention_axes' is " + attention_axes.dump() +
                   ", expected null or [1]: accel attends over the steps of (batch, steps, features)");
  }
  arguments.require("use_gate", false, "accel's attention has no gate");
  arguments.require("sliding_window", nullptr, "accel's attention sees the whole sequence");
  options.kernel_initializer = arguments.initializer("kernel_initializer", options.kernel_initializer);
  options.bias_initializer = arguments.initializer("bias_initializer", options.bias_initializer);
  require_neutral(arguments, {"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                              "bias_constraint"});
  arguments.ignore("seed");  // the attention dropout's masks are accel's own anyway
  arguments.ignore("flash_attention");  // a kernel choice, same result
  options.name = arguments.layer_name();
  return std::make_shared<MultiHeadAttention>(num_heads, key_dim, options);
}

json prelu_config(const PReLU& layer) {
  const PReLUOptions& options = layer.options();
  json config{{"alpha_initializer", initializer_config(options.alpha_initializer, layer)},
              {"alpha_regularizer", nullptr},
              {"alpha_constraint", nullptr},
              {"shared_axes", options.shared_axes.empty() ? json(nullptr) : json(options.shared_axes)}};
  return config;
}

std::shared_ptr<Layer> prelu_from(LayerArguments& arguments) {
  PReLUOptions options;
  options.alpha_initializer = arguments.initializer("alpha_initializer", options.alpha_initializer);
  require_neutral(arguments, {"alpha_regularizer", "alpha_constraint"});
  const json shared_axes = arguments.raw("shared_axes");
  if (shared_axes.is_number_integer()) {
    options.shared_axes = {shared_axes.get<int32_t>()};
  } else if (shared_axes.is_array()) {
    for (const json& axis : shared_axes) {
      if (!axis.is_number_integer()) arguments.fail("argument 'shared_axes' is " + shared_axes.dump() + ", expected ints");
      options.shared_axes.push_back(axis.get<int32_t>());
    }
  } else if (!shared_axes.is_null()) {
    arguments.fail("argument 'shared_axes' is " + shared_axes.dump() + ", expected null, an int or a list of ints");
  }
  options.name = arguments.layer_name();
  return std::make_shared<PReLU>(options);
}

const std::map<std::string, LayerCodec>& codecs() {
  static const std::map<std::string, LayerCodec> table{
      {"Dense", {[](const Layer& layer) { return dense_config(static_cast<const Dense&>(layer)); }, dense_from}},
      {"Conv2D", {[](const Layer& layer) { return conv2d_config(static_cast<const Conv2D&>(layer)); }, conv2d_from}},
      {"Conv1D", {[](const Layer& layer) { return conv1d_config(static_cast<const Conv1D&>(layer)); }, conv1d_from}},
      {"DepthwiseConv2D",
       {[](const Layer& layer) { return depthwise_conv2d_config(static_cast<const DepthwiseConv2D&>(layer)); },
        depthwise_conv2d_from}},
      {"Conv2DTranspose",
       {[](const Layer& layer) { return conv2d_transpose_config(static_cast<const Conv2DTranspose&>(layer)); },
        conv2d_transpose_from}},
      {"Cropping2D",
       {[](const Layer& layer) {
          return json{{"cropping", margins_json(static_cast<const Cropping2D&>(layer).cropping())},
                      {"data_format", "channels_last"}};
        },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          Cropping2DOptions options;
          if (std::optional<Margins2D> cropping = margins_from(arguments, "cropping")) options.cropping = *cropping;
          require_channels_last(arguments);
          options.name = arguments.layer_name();
          return std::make_shared<Cropping2D>(options);
        }}},
      {"UpSampling2D",
       {[](const Layer& layer) {
          return json{{"size", pair_json(static_cast<const UpSampling2D&>(layer).size())},
                      {"data_format", "channels_last"},
                      {"interpolation", "nearest"}};
        },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          UpSampling2DOptions options;
          options.size = arguments.pair("size", options.size);
          require_channels_last(arguments);
          options.interpolation = arguments.text("interpolation", options.interpolation);
          options.name = arguments.layer_name();
          return std::make_shared<UpSampling2D>(options);
        }}},
      {"LayerNormalization",
       {[](const Layer& layer) { return layer_normalization_config(static_cast<const LayerNormalization&>(layer)); },
        layer_normalization_from}},
      {"RMSNormalization",
       {[](const Layer& layer) {
          const RMSNormalizationOptions& options = static_cast<const RMSNormalization&>(layer).options();
          return json{{"axis", options.axis.size() == 1 ? json(options.axis.front()) : json(options.axis)},
                      {"epsilon", options.epsilon}};
        },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          RMSNormalizationOptions options;
          if (std::optional<std::vector<int32_t>> axes = normalized_axes_from(arguments)) options.axis = *axes;
          options.epsilon = arguments.number("epsilon", options.epsilon);
          options.name = arguments.layer_name();
          return std::make_shared<RMSNormalization>(options);
        }}},
      {"Embedding",
       {[](const Layer& layer) { return embedding_config(static_cast<const Embedding&>(layer)); }, embedding_from}},
      {"MultiHeadAttention",
       {[](const Layer& layer) { return multi_head_attention_config(static_cast<const MultiHeadAttention&>(layer)); },
        multi_head_attention_from}},
      // accel's own (a Keras layer registered as accel>PositionEmbedding, as
      // tools/keras_goldens/zoo_models.py defines it for TensorFlow).
      {"PositionEmbedding",
       {[](const Layer& layer) {
          const auto& embedding = static_cast<const PositionEmbedding&>(layer);
          return json{{"initializer", initializer_config(embedding.options().initializer, layer)}};
        },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          PositionEmbeddingOptions options;
          options.initializer = arguments.initializer("initializer", options.initializer);
          options.name = arguments.layer_name();
          return std::make_shared<PositionEmbedding>(options);
        }}},
      {"PReLU", {[](const Layer& layer) { return prelu_config(static_cast<const PReLU&>(layer)); }, prelu_from}},
      {"SeparableConv2D",
       {[](const Layer& layer) { return separable_conv2d_config(static_cast<const SeparableConv2D&>(layer)); },
        separable_conv2d_from}},
      {"MaxPooling2D",
       {[](const Layer& layer) { return pooling_config(static_cast<const Pooling2D&>(layer)); },
        pooling_from<MaxPooling2D>}},
      {"AveragePooling2D",
       {[](const Layer& layer) { return pooling_config(static_cast<const Pooling2D&>(layer)); },
        pooling_from<AveragePooling2D>}},
      {"BatchNormalization",
       {[](const Layer& layer) { return batch_normalization_config(static_cast<const BatchNormalization&>(layer)); },
        batch_normalization_from}},
      {"Dropout", {[](const Layer& layer) { return dropout_config(static_cast<const Dropout&>(layer)); }, dropout_from}},
      {"Activation",
       {[](const Layer& layer) { return json{{"activation", static_cast<const Activation&>(layer).activation_name()}}; },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          return std::make_shared<Activation>(arguments.text("activation", "linear"), arguments.layer_name());
        }}},
      {"Flatten",
       {[](const Layer&) { return json{{"data_format", "channels_last"}}; },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          require_channels_last(arguments);
          return std::make_shared<Flatten>(arguments.layer_name());
        }}},
      {"ReLU", {[](const Layer& layer) { return relu_config(static_cast<const ReLU&>(layer)); }, relu_from}},
      {"LeakyReLU",
       {[](const Layer& layer) { return json{{"negative_slope", static_cast<const LeakyReLU&>(layer).negative_slope()}}; },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          return std::make_shared<LeakyReLU>(arguments.number("negative_slope", 0.3), arguments.layer_name());
        }}},
      {"ELU",
       {[](const Layer& layer) { return json{{"alpha", static_cast<const ELU&>(layer).alpha()}}; },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          return std::make_shared<ELU>(arguments.number("alpha", 1.0), arguments.layer_name());
        }}},
      {"Softmax",
       {[](const Layer& layer) { return json{{"axis", static_cast<const Softmax&>(layer).axis()}}; },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          const json axis = arguments.raw("axis");
          if (!axis.is_null() && !axis.is_number_integer()) {
            arguments.fail("argument 'axis' is " + axis.dump() + ", expected one axis (an integer)");
          }
          return std::make_shared<Softmax>(axis.is_null() ? -1 : axis.get<int32_t>(), arguments.layer_name());
        }}},
      {"Rescaling",
       {[](const Layer& layer) {
          const auto& rescaling = static_cast<const Rescaling&>(layer);
          return json{{"scale", rescaling.scale()}, {"offset", rescaling.offset()}};
        },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          const json scale = arguments.raw("scale"), offset = arguments.raw("offset");
          if (!scale.is_number() || !(offset.is_number() || offset.is_null())) {
            arguments.fail("arguments 'scale' and 'offset' are " + scale.dump() + " and " + offset.dump() +
                           ", expected numbers (accel has no per-channel rescaling)");
          }
          return std::make_shared<Rescaling>(scale.get<double>(), offset.is_null() ? 0.0 : offset.get<double>(),
                                             arguments.layer_name());
        }}},
      {"GlobalMaxPooling2D", global_pooling_codec<GlobalMaxPooling2D, GlobalMaxPooling2DOptions>()},
      {"GlobalAveragePooling1D", global_pooling_codec<GlobalAveragePooling1D, GlobalAveragePooling1DOptions>()},
      {"GlobalMaxPooling1D", global_pooling_codec<GlobalMaxPooling1D, GlobalMaxPooling1DOptions>()},
      {"Permute",
       {[](const Layer& layer) { return json{{"dims", static_cast<const Permute&>(layer).dims()}}; },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          const std::vector<int64_t> dims = arguments.shape("dims");
          return std::make_shared<Permute>(std::vector<int32_t>(dims.begin(), dims.end()), arguments.layer_name());
        }}},
      {"RepeatVector",
       {[](const Layer& layer) { return json{{"n", static_cast<const RepeatVector&>(layer).n()}}; },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          const int64_t n = arguments.integer("n", 0);
          if (n < 1) arguments.fail("argument 'n' is missing or below 1");
          return std::make_shared<RepeatVector>(n, arguments.layer_name());
        }}},
      {"Add", merge_codec<Add>()},
      {"Subtract", merge_codec<Subtract>()},
      {"Multiply", merge_codec<Multiply>()},
      {"Average", merge_codec<Average>()},
      {"Maximum", merge_codec<Maximum>()},
      {"Minimum", merge_codec<Minimum>()},
      {"Concatenate",
       {[](const Layer& layer) { return json{{"axis", static_cast<const Concatenate&>(layer).axis()}}; },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          const auto axis = static_cast<int32_t>(arguments.integer("axis", -1));
          return std::make_shared<Concatenate>(axis, arguments.layer_name());
        }}},
      {"Reshape",
       {[](const Layer& layer) { return json{{"target_shape", static_cast<const Reshape&>(layer).target_shape()}}; },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          std::vector<int64_t> target_shape = arguments.shape("target_shape");
          return std::make_shared<Reshape>(std::move(target_shape), arguments.layer_name());
        }}},
      {"ZeroPadding2D",
       {[](const Layer& layer) {
          const Margins2D& padding = static_cast<const ZeroPadding2D&>(layer).padding();
          return json{{"padding", margins_json(padding)}, {"data_format", "channels_last"}};
        },
        [](LayerArguments& arguments) -> std::shared_ptr<Layer> {
          ZeroPadding2DOptions options;
          if (std::optional<Margins2D> padding = margins_from(arguments, "padding")) options.padding = *padding;
          require_channels_last(arguments);
          options.name = arguments.layer_name();
          return std::make_shared<ZeroPadding2D>(options);
        }}},
      {"GlobalAveragePooling2D", global_pooling_codec<GlobalAveragePooling2D, GlobalAveragePooling2DOptions>()},
  };
  return table;
}

}  // namespace

json dtype_policy_json(const DTypePolicy& policy) {
  return {{"module", "keras"}, {"class_name", "DTypePolicy"}, {"config", {{"name", policy.name()}}},
          {"registered_name", nullptr}};
}

json shape_json(const LayerShape& shape) {
  json dims = json::array();
  for (int64_t dim : shape) dims.push_back(dim == kUnknownDim ? json(nullptr) : json(dim));
  return dims;
}

std::optional<std::string> registered_name(const std::string& class_name) {
  if (class_name == "PositionEmbedding") return "accel>PositionEmbedding";
  return std::nullopt;
}

std::string supported_layer_classes() {
  std::string names = "InputLayer";
  for (const auto& [name, codec] : codecs()) names += ", " + name;
  return names;
}

json layer_config(const Layer& layer) {
  const auto codec = codecs().find(layer.class_name());
  if (codec == codecs().end()) {
    throw UnimplementedError("layer '" + layer.name() + "' (" + layer.class_name() +
                             ") cannot be written to a .keras file yet; accel writes " + supported_layer_classes());
  }
  json config = base_config(layer);
  config.update(codec->second.to_config(layer));
  return config;
}

std::shared_ptr<Layer> layer_from_config(const std::string& class_name, const json& config,
                                         const std::string& source) {
  const auto codec = codecs().find(class_name);
  if (codec == codecs().end()) {
    const std::string name = config.is_object() && config.contains("name") ? config["name"].dump() : "(unnamed)";
    throw InvalidArgumentError(source + ": layer " + name + " is of class '" + class_name +
                               "', which accel cannot load; it loads " + supported_layer_classes());
  }
  LayerArguments arguments(config, class_name, source);
  std::shared_ptr<Layer> layer = codec->second.from_config(arguments);
  arguments.finish();
  if (config.contains("trainable") && config["trainable"].is_boolean()) layer->set_trainable(config["trainable"]);
  if (const std::optional<DTypePolicy>& policy = arguments.dtype_policy()) layer->set_dtype_policy(*policy);
  return layer;
}

}  // namespace accel::keras::saving
