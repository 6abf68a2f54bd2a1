#include "model_factory.hpp"

#include <accel/error.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/optimizers/adam.hpp>
#include <accel/keras/optimizers/adamw.hpp>
#include <accel/keras/optimizers/rmsprop.hpp>
#include <accel/keras/optimizers/schedules.hpp>
#include <accel/keras/optimizers/sgd.hpp>

#include <fmt/format.h>

#include <array>
#include <string>

namespace accel::experiment {
namespace {

[[noreturn]] void unsupported(const std::string& kind, const std::string& name) {
  throw UnimplementedError(fmt::format("{} '{}' is not implemented by accel's Keras yet", kind, name));
}

const Value* set_argument(const KerasObject& object, const std::string& key) {
  const Value* value = object.argument(key);
  return value != nullptr && value->is_set() ? value : nullptr;
}

std::string text_or(const KerasObject& object, const std::string& key, std::string fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_text() : fallback;
}

double number_or(const KerasObject& object, const std::string& key, double fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_number() : fallback;
}

bool bool_or(const KerasObject& object, const std::string& key, bool fallback) {
  const Value* value = set_argument(object, key);
  return value ? value->as_bool() : fallback;
}

// 3 -> {3, 3}; [3, 2] -> {3, 2}.
std::array<int32_t, 2> pair_or(const KerasObject& object, const std::string& key, std::array<int32_t, 2> fallback) {
  const Value* value = set_argument(object, key);
  if (!value) return fallback;
  const std::vector<int64_t> ints = value->as_ints();
  if (ints.size() == 1) return {static_cast<int32_t>(ints[0]), static_cast<int32_t>(ints[0])};
  return {static_cast<int32_t>(ints.at(0)), static_cast<int32_t>(ints.at(1))};
}

std::shared_ptr<keras::Initializer> initializer_or_default(const KerasObject& object, const std::string& key,
                                                           std::shared_ptr<keras::Initializer> fallback) {
  const Value* value = set_argument(object, key);
  if (!value || value->defaulted) return fallback;
  return keras::get_initializer(value->as_text());
}

keras::Pooling2DOptions pooling_options(const KerasObject& layer) {
  keras::Pooling2DOptions options;
  options.pool_size = pair_or(layer, "pool_size", {2, 2});
  if (set_argument(layer, "strides")) options.strides = pair_or(layer, "strides", options.pool_size);
  options.padding = text_or(layer, "padding", "valid");
  options.name = text_or(layer, "name", "");
  return options;
}

std::shared_ptr<keras::Layer> make_layer(const KerasObject& layer) {
  const std::string& kind = layer.name;
  const std::string name = text_or(layer, "name", "");
  if (kind == "dense") {
    keras::DenseOptions options;
    options.activation = text_or(layer, "activation", "linear");
    options.use_bias = bool_or(layer, "use_bias", true);
    options.kernel_initializer = initializer_or_default(layer, "kernel_initializer", options.kernel_initializer);
    options.bias_initializer = initializer_or_default(layer, "bias_initializer", options.bias_initializer);
    options.name = name;
    return std::make_shared<keras::Dense>(set_argument(layer, "units")->as_int(), options);
  }
  if (kind == "conv2d") {
    keras::Conv2DOptions options;
    options.strides = pair_or(layer, "strides", {1, 1});
    options.padding = text_or(layer, "padding", "valid");
    options.dilation_rate = pair_or(layer, "dilation_rate", {1, 1});
    options.activation = text_or(layer, "activation", "linear");
    options.use_bias = bool_or(layer, "use_bias", true);
    options.kernel_initializer = initializer_or_default(layer, "kernel_initializer", options.kernel_initializer);
    options.bias_initializer = initializer_or_default(layer, "bias_initializer", options.bias_initializer);
    options.name = name;
    return std::make_shared<keras::Conv2D>(set_argument(layer, "filters")->as_int(),
                                           pair_or(layer, "kernel_size", {3, 3}), options);
  }
  if (kind == "max_pooling2d") return std::make_shared<keras::MaxPooling2D>(pooling_options(layer));
  if (kind == "average_pooling2d") return std::make_shared<keras::AveragePooling2D>(pooling_options(layer));
  if (kind == "global_average_pooling2d") {
    return std::make_shared<keras::GlobalAveragePooling2D>(keras::GlobalAveragePooling2DOptions{.keepdims = false, .name = name});
  }
  if (kind == "flatten") return std::make_shared<keras::Flatten>(name);
  if (kind == "activation") return std::make_shared<keras::Activation>(text_or(layer, "activation", "linear"), name);
  if (kind == "dropout") {
    keras::DropoutOptions options;
    if (const Value* seed = set_argument(layer, "seed")) options.seed = static_cast<uint64_t>(seed->as_int());
    options.name = name;
    return std::make_shared<keras::Dropout>(number_or(layer, "rate", 0.0), options);
  }
  if (kind == "batch_normalization") {
    keras::BatchNormalizationOptions options;
    options.axis = static_cast<int32_t>(number_or(layer, "axis", -1));
    options.momentum = number_or(layer, "momentum", 0.99);
    options.epsilon = number_or(layer, "epsilon", 1e-3);
    options.center = bool_or(layer, "center", true);
    options.scale = bool_or(layer, "scale", true);
    options.name = name;
    return std::make_shared<keras::BatchNormalization>(options);
  }
  if (kind == "embedding") {
    keras::EmbeddingOptions options;
    options.name = name;
    return std::make_shared<keras::Embedding>(set_argument(layer, "input_dim")->as_int(),
                                              set_argument(layer, "output_dim")->as_int(), options);
  }
  unsupported("layer", kind);
}

keras::GradientClipping clipping_of(const KerasObject& optimizer) {
  keras::GradientClipping clipping;
  if (const Value* value = set_argument(optimizer, "clipvalue")) clipping.clipvalue = value->as_number();
  if (const Value* value = set_argument(optimizer, "clipnorm")) clipping.clipnorm = value->as_number();
  if (const Value* value = set_argument(optimizer, "global_clipnorm")) clipping.global_clipnorm = value->as_number();
  return clipping;
}

std::vector<int64_t> integers_of(const Value& list) {
  std::vector<int64_t> integers;
  for (const std::string& text : list.as_texts()) integers.push_back(std::stoll(text));
  return integers;
}

std::vector<double> numbers_of(const Value& list) {
  std::vector<double> numbers;
  for (const std::string& text : list.as_texts()) numbers.push_back(std::stod(text));
  return numbers;
}

// keras.optimizers.schedules by their YAML names (schema.cpp's schedule_spec).
keras::LearningRate make_schedule(const KerasObject& schedule) {
  const std::string& name = schedule.name;
  if (name == "cosine_decay") {
    keras::CosineDecayOptions options;
    options.alpha = number_or(schedule, "alpha", 0.0);
    if (const Value* target = set_argument(schedule, "warmup_target")) options.warmup_target = target->as_number();
    options.warmup_steps = static_cast<int64_t>(number_or(schedule, "warmup_steps", 0));
    return keras::CosineDecay(set_argument(schedule, "initial_learning_rate")->as_number(),
                              set_argument(schedule, "decay_steps")->as_int(), options);
  }
  if (name == "exponential_decay") {
    return keras::ExponentialDecay(set_argument(schedule, "initial_learning_rate")->as_number(),
                                   set_argument(schedule, "decay_steps")->as_int(),
                                   set_argument(schedule, "decay_rate")->as_number(),
                                   {.staircase = bool_or(schedule, "staircase", false)});
  }
  if (name == "piecewise_constant_decay") {
    return keras::PiecewiseConstantDecay(integers_of(*set_argument(schedule, "boundaries")),
                                         numbers_of(*set_argument(schedule, "values")));
  }
  unsupported("learning-rate schedule", name);
}

// A number or a schedule ({cosine_decay: {...}}).
keras::LearningRate learning_rate_of(const KerasObject& optimizer, double fallback) {
  const Value* value = set_argument(optimizer, "learning_rate");
  if (value == nullptr) return fallback;
  if (value->is_object()) return make_schedule(value->as_object());
  return value->as_number();
}

}  // namespace

std::vector<int64_t> model_input_shape(const ModelConfig& model, const std::vector<int64_t>& data_shape) {
  if (!model.layers.empty()) {
    if (const Value* shape = set_argument(model.layers.front(), "input_shape")) return shape->as_ints();
  }
  return data_shape;
}

std::shared_ptr<keras::Sequential> make_sequential(const ModelConfig& model, const std::vector<int64_t>& example_shape) {
  std::vector<std::shared_ptr<keras::Layer>> layers;
  for (const KerasObject& layer : model.layers) layers.push_back(make_layer(layer));
  auto sequential = std::make_shared<keras::Sequential>(std::move(layers), model.name);
  keras::LayerShape input{keras::kUnknownDim};
  input.insert(input.end(), example_shape.begin(), example_shape.end());
  sequential->build(input);
  return sequential;
}

std::shared_ptr<keras::Optimizer> make_optimizer(const KerasObject& optimizer) {
  const std::string& name = optimizer.name;
  if (name == "sgd") {
    keras::SGDOptions options;
    options.learning_rate = learning_rate_of(optimizer, 0.01);
    options.momentum = number_or(optimizer, "momentum", 0.0);
    options.nesterov = bool_or(optimizer, "nesterov", false);
    options.clipping = clipping_of(optimizer);
    return std::make_shared<keras::SGD>(options);
  }
  if (name == "adam") {
    if (bool_or(optimizer, "amsgrad", false)) unsupported("optimizer option", "adam.amsgrad");
    keras::AdamOptions options;
    options.learning_rate = learning_rate_of(optimizer, 0.001);
    options.beta_1 = number_or(optimizer, "beta_1", 0.9);
    options.beta_2 = number_or(optimizer, "beta_2", 0.999);
    options.epsilon = number_or(optimizer, "epsilon", 1e-7);
    options.clipping = clipping_of(optimizer);
    return std::make_shared<keras::Adam>(options);
  }
  if (name == "adamw") {
    keras::AdamWOptions options;
    options.learning_rate = learning_rate_of(optimizer, 0.001);
    options.weight_decay = number_or(optimizer, "weight_decay", 0.004);
    options.beta_1 = number_or(optimizer, "beta_1", 0.9);
    options.beta_2 = number_or(optimizer, "beta_2", 0.999);
    options.epsilon = number_or(optimizer, "epsilon", 1e-7);
    options.clipping = clipping_of(optimizer);
    auto adamw = std::make_shared<keras::AdamW>(options);
    if (const Value* names = set_argument(optimizer, "exclude_from_weight_decay")) {
      adamw->exclude_from_weight_decay({}, names->as_texts());
    }
    return adamw;
  }
  if (name == "rmsprop") {
    keras::RMSpropOptions options;
    options.learning_rate = learning_rate_of(optimizer, 0.001);
    options.rho = number_or(optimizer, "rho", 0.9);
    options.momentum = number_or(optimizer, "momentum", 0.0);
    options.epsilon = number_or(optimizer, "epsilon", 1e-7);
    options.centered = bool_or(optimizer, "centered", false);
    options.clipping = clipping_of(optimizer);
    return std::make_shared<keras::RMSprop>(options);
  }
  unsupported("optimizer", name);
}

std::shared_ptr<keras::Loss> make_loss(const KerasObject& loss) {
  const std::string& name = loss.name;
  keras::CrossentropyOptions crossentropy;
  crossentropy.from_logits = bool_or(loss, "from_logits", false);
  if (name == "sparse_categorical_crossentropy") {
    return std::make_shared<keras::SparseCategoricalCrossentropy>(crossentropy);
  }
  if (name == "categorical_crossentropy" || name == "binary_crossentropy") {
    crossentropy.label_smoothing = number_or(loss, "label_smoothing", 0.0);
    if (name == "categorical_crossentropy") return std::make_shared<keras::CategoricalCrossentropy>(crossentropy);
    return std::make_shared<keras::BinaryCrossentropy>(crossentropy);
  }
  if (name == "mean_squared_error" || name == "mse") return std::make_shared<keras::MeanSquaredError>();
  unsupported("loss", name);
}

std::vector<keras::MetricArgument> make_metrics(const std::vector<KerasObject>& metrics) {
  std::vector<keras::MetricArgument> names;
  for (const KerasObject& metric : metrics) {
    if (!metric.arguments.empty()) {
      for (const auto& [key, value] : metric.arguments) {
        if (!value.defaulted) unsupported("metric argument", metric.name + "." + key);
      }
    }
    names.emplace_back(metric.name);
  }
  return names;
}

}  // namespace accel::experiment
