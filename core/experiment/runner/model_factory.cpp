#include "model_factory.hpp"

#include "keras_arguments.hpp"
#include "layer_factory.hpp"

#include <accel/keras/input_layer.hpp>
#include <accel/keras/saving/keras_file.hpp>
#include <accel/keras/layers/multi_head_attention.hpp>
#include <accel/keras/optimizers/adam.hpp>
#include <accel/keras/optimizers/adamw.hpp>
#include <accel/keras/optimizers/rmsprop.hpp>
#include <accel/keras/optimizers/schedules.hpp>
#include <accel/keras/optimizers/sgd.hpp>

#include <map>
#include <string>

namespace accel::experiment {
namespace {

// model.graph as Keras's Functional API: an Input per graph input, each layer
// called on the tensors it names (in file order, which lists a layer after
// its inputs), Model(inputs, outputs).
std::shared_ptr<keras::Model> make_functional(const ModelConfig& model) {
  const ModelGraph& graph = *model.graph;
  std::map<std::string, keras::KerasTensor> tensors;
  std::vector<keras::KerasTensor> inputs;
  for (const GraphInput& input : graph.inputs) {
    const keras::LayerShape shape(input.shape.begin(), input.shape.end());
    const DType dtype = input.dtype == "int32" ? DType::kInt32 : DType::kFloat32;
    inputs.push_back(keras::Input(shape, keras::InputOptions{.name = input.name, .dtype = dtype}));
    tensors[input.name] = inputs.back();
  }
  std::map<std::string, std::shared_ptr<keras::Layer>> made;
  const EarlierLayer earlier_layer = [&](const std::string& name) {
    const auto found = made.find(name);
    return found == made.end() ? nullptr : found->second;
  };
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const KerasObject& config = model.layers[i];
    const std::shared_ptr<keras::Layer> layer = make_layer(config, earlier_layer);
    made[layer->name()] = layer;
    std::vector<keras::KerasTensor> arguments;
    for (const GraphReference& reference : graph.calls[i].inputs) arguments.push_back(tensors.at(reference.name));
    keras::KerasTensor output;
    if (auto* attention = dynamic_cast<keras::MultiHeadAttention*>(layer.get())) {
      keras::AttentionArguments<keras::KerasTensor> call;
      if (arguments.size() > 2) call.key = arguments[2];
      call.use_causal_mask = bool_or(config, "use_causal_mask", false);
      output = (*attention)(arguments.at(0), arguments.at(1), call);
    } else if (graph.calls[i].list_input) {
      output = (*layer)(arguments);
    } else {
      output = (*layer)(arguments.at(0));
    }
    tensors[layer->name()] = output;
  }
  std::vector<keras::KerasTensor> outputs;
  for (const GraphReference& output : graph.outputs) outputs.push_back(tensors.at(output.name));
  // One tensor each, as keras.Model(x, y): fit and predict then take and give tensors, not lists.
  keras::KerasTensors model_inputs = inputs.size() == 1 ? keras::KerasTensors(inputs.front()) : keras::KerasTensors(inputs);
  keras::KerasTensors model_outputs =
      outputs.size() == 1 ? keras::KerasTensors(outputs.front()) : keras::KerasTensors(outputs);
  return std::make_shared<keras::Model>(std::move(model_inputs), std::move(model_outputs), model.name);
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
  if (model.keras_file && !model.keras_file_input_shape.empty()) return model.keras_file_input_shape;
  if (model.graph) return model.graph->inputs.front().shape;
  if (!model.layers.empty()) {
    if (const Value* shape = set_argument(model.layers.front(), "input_shape")) return shape->as_ints();
  }
  return data_shape;
}

namespace {

std::shared_ptr<keras::Model> make_architecture(const ModelConfig& model, const std::vector<int64_t>& example_shape) {
  if (model.keras_file) return keras::saving::load_model(*model.keras_file);
  if (model.graph) return make_functional(model);
  std::vector<std::shared_ptr<keras::Layer>> layers;
  for (const KerasObject& layer : model.layers) layers.push_back(make_layer(layer));
  auto sequential = std::make_shared<keras::Sequential>(std::move(layers), model.name);
  keras::LayerShape input{keras::kUnknownDim};
  input.insert(input.end(), example_shape.begin(), example_shape.end());
  sequential->build(input);
  return sequential;
}

}  // namespace

std::shared_ptr<keras::Model> make_model(const ModelConfig& model, const std::vector<int64_t>& example_shape) {
  std::shared_ptr<keras::Model> built = make_architecture(model, example_shape);
  if (model.initial_weights) built->load_weights(*model.initial_weights);
  return built;
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
