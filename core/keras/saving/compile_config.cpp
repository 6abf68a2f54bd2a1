#include "compile_config.hpp"

#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/log.hpp>

#include "layer_arguments.hpp"

#include <variant>

namespace accel::keras::saving {
namespace {

using nlohmann::json;

json keras_object(const char* module, const std::string& class_name, json config) {
  return {{"module", module}, {"class_name", class_name}, {"config", std::move(config)}, {"registered_name", nullptr}};
}

json optional_number(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

// The name Keras 3 gives an optimizer of this class ("adam", "rm_sprop"),
// unless accel's was set to another than its class's default.
std::string keras_name(const Optimizer& optimizer, const std::string& class_name) {
  return optimizer.name() == class_name ? to_snake_case(class_name) : optimizer.name();
}

// Keras 3's base optimizer arguments, with accel's rate and clipping.
json base_optimizer_config(const Optimizer& optimizer, const std::string& class_name) {
  return {{"name", keras_name(optimizer, class_name)},
          {"learning_rate", optimizer.learning_rate()},
          {"weight_decay", nullptr},
          {"clipnorm", optional_number(optimizer.clipping().clipnorm)},
          {"global_clipnorm", optional_number(optimizer.clipping().global_clipnorm)},
          {"clipvalue", optional_number(optimizer.clipping().clipvalue)},
          {"use_ema", false},
          {"ema_momentum", 0.99},
          {"ema_overwrite_frequency", nullptr},
          {"loss_scale_factor", nullptr},
          {"gradient_accumulation_steps", nullptr}};
}

std::optional<json> optimizer_config(const Optimizer& optimizer) {
  if (const auto* scaled = dynamic_cast<const LossScaleOptimizer*>(&optimizer)) {
    std::optional<json> inner = optimizer_config(*scaled->inner_optimizer());
    if (!inner) return std::nullopt;
    return keras_object("keras.optimizers", "LossScaleOptimizer",
                        {{"name", "loss_scale_optimizer"},
                         {"inner_optimizer", *inner},
                         {"initial_scale", scaled->initial_scale()},
                         {"dynamic_growth_steps", scaled->dynamic_growth_steps()}});
  }
  if (optimizer.has_learning_rate_schedule()) return std::nullopt;
  if (const auto* adam = dynamic_cast<const Adam*>(&optimizer)) {
    json config = base_optimizer_config(optimizer, "Adam");
    config.update({{"beta_1", adam->beta_1()}, {"beta_2", adam->beta_2()}, {"epsilon", adam->epsilon()}, {"amsgrad", false}});
    return keras_object("keras.optimizers", "Adam", config);
  }
  if (const auto* adamw = dynamic_cast<const AdamW*>(&optimizer)) {
    json config = base_optimizer_config(optimizer, "AdamW");
    config.update({{"weight_decay", adamw->weight_decay()}, {"beta_1", adamw->beta_1()}, {"beta_2", adamw->beta_2()},
                   {"epsilon", adamw->epsilon()}, {"amsgrad", false}});
    return keras_object("keras.optimizers", "AdamW", config);
  }
  if (const auto* sgd = dynamic_cast<const SGD*>(&optimizer)) {
    json config = base_optimizer_config(optimizer, "SGD");
    config.update({{"momentum", sgd->momentum()}, {"nesterov", sgd->nesterov()}});
    return keras_object("keras.optimizers", "SGD", config);
  }
  if (const auto* rmsprop = dynamic_cast<const RMSprop*>(&optimizer)) {
    json config = base_optimizer_config(optimizer, "RMSprop");
    config.update({{"rho", rmsprop->rho()}, {"momentum", rmsprop->momentum()}, {"epsilon", rmsprop->epsilon()},
                   {"centered", rmsprop->centered()}});
    return keras_object("keras.optimizers", "RMSprop", config);
  }
  return std::nullopt;
}

const char* reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::kSum: return "sum";
    case Reduction::kNone: return "none";
    case Reduction::kSumOverBatchSize: break;
  }
  return "sum_over_batch_size";
}

std::optional<json> loss_config(const Loss& loss) {
  json config{{"name", loss.name()}, {"reduction", reduction_name(loss.reduction())}};
  if (const auto* sparse = dynamic_cast<const SparseCategoricalCrossentropy*>(&loss)) {
    config.update({{"from_logits", sparse->from_logits()}, {"ignore_class", nullptr}});
    return keras_object("keras.losses", "SparseCategoricalCrossentropy", config);
  }
  if (const auto* categorical = dynamic_cast<const CategoricalCrossentropy*>(&loss)) {
    config.update({{"from_logits", categorical->from_logits()}, {"label_smoothing", categorical->label_smoothing()},
                   {"axis", -1}});
    return keras_object("keras.losses", "CategoricalCrossentropy", config);
  }
  if (const auto* binary = dynamic_cast<const BinaryCrossentropy*>(&loss)) {
    config.update({{"from_logits", binary->from_logits()}, {"label_smoothing", binary->label_smoothing()},
                   {"axis", -1}});
    return keras_object("keras.losses", "BinaryCrossentropy", config);
  }
  if (dynamic_cast<const MeanSquaredError*>(&loss) != nullptr) {
    return keras_object("keras.losses", "MeanSquaredError", config);
  }
  return std::nullopt;
}

// ---- reading ----

// An optimizer's or a loss's config: LayerArguments, named as what it is.
// (It reads the config in place: `object` must outlive it.)
LayerArguments arguments_of(const json& object, const char* kind, const std::string& source) {
  static const json no_config = json::object();
  const auto config = object.find("config");
  return LayerArguments(config != object.end() ? *config : no_config, object.value("class_name", ""), source, kind);
}

GradientClipping read_clipping(LayerArguments& arguments) {
  GradientClipping clipping;
  clipping.clipnorm = arguments.optional_number("clipnorm");
  clipping.global_clipnorm = arguments.optional_number("global_clipnorm");
  clipping.clipvalue = arguments.optional_number("clipvalue");
  arguments.require("use_ema", false, "accel keeps no moving average of the weights");
  arguments.ignore("ema_momentum");  // used only with use_ema
  arguments.require("ema_overwrite_frequency", nullptr, "accel keeps no moving average of the weights");
  arguments.require("loss_scale_factor", nullptr, "accel scales losses with a LossScaleOptimizer");
  arguments.require("gradient_accumulation_steps", nullptr, "accel applies every step's gradients");
  return clipping;
}

double read_learning_rate(LayerArguments& arguments, double fallback) {
  const json rate = arguments.raw("learning_rate");
  if (rate.is_null()) return fallback;
  if (!rate.is_number()) arguments.fail("a learning-rate schedule (" + rate.dump().substr(0, 80) + ") is not read");
  return rate.get<double>();
}

// Adam's and AdamW's shared arguments (AdamW adds weight_decay).
template <typename Options>
void read_adam_arguments(LayerArguments& arguments, Options& options) {
  options.learning_rate = read_learning_rate(arguments, 0.001);
  options.beta_1 = arguments.number("beta_1", options.beta_1);
  options.beta_2 = arguments.number("beta_2", options.beta_2);
  options.epsilon = arguments.number("epsilon", options.epsilon);
  arguments.require("amsgrad", false, "accel's Adam has no AMSGrad");
  options.clipping = read_clipping(arguments);
}

std::shared_ptr<Optimizer> optimizer_from(const json& object, const std::string& source) {
  if (object.is_string()) return get_optimizer(object.get<std::string>());
  LayerArguments arguments = arguments_of(object, "optimizer", source);
  const std::string& class_name = arguments.class_name();  // its name: Keras 3's snake case; accel keeps its class's
  const char* no_decay = "accel decays weights in AdamW only";
  std::shared_ptr<Optimizer> optimizer;
  if (class_name == "LossScaleOptimizer") {
    std::shared_ptr<Optimizer> inner = optimizer_from(arguments.raw("inner_optimizer"), source);
    LossScaleOptimizerOptions options;
    options.initial_scale = arguments.number("initial_scale", options.initial_scale);
    options.dynamic_growth_steps = arguments.integer("dynamic_growth_steps", options.dynamic_growth_steps);
    optimizer = std::make_shared<LossScaleOptimizer>(std::move(inner), options);
  } else if (class_name == "Adam") {
    AdamOptions options;
    read_adam_arguments(arguments, options);
    arguments.require("weight_decay", nullptr, no_decay);
    optimizer = std::make_shared<Adam>(options);
  } else if (class_name == "AdamW") {
    AdamWOptions options;
    options.weight_decay = arguments.number("weight_decay", options.weight_decay);
    read_adam_arguments(arguments, options);
    optimizer = std::make_shared<AdamW>(options);
  } else if (class_name == "SGD") {
    SGDOptions options;
    options.learning_rate = read_learning_rate(arguments, 0.01);
    options.momentum = arguments.number("momentum", options.momentum);
    options.nesterov = arguments.boolean("nesterov", options.nesterov);
    arguments.require("weight_decay", nullptr, no_decay);
    options.clipping = read_clipping(arguments);
    optimizer = std::make_shared<SGD>(options);
  } else if (class_name == "RMSprop") {
    RMSpropOptions options;
    options.learning_rate = read_learning_rate(arguments, 0.001);
    options.rho = arguments.number("rho", options.rho);
    options.momentum = arguments.number("momentum", options.momentum);
    options.epsilon = arguments.number("epsilon", options.epsilon);
    options.centered = arguments.boolean("centered", options.centered);
    arguments.require("weight_decay", nullptr, no_decay);
    options.clipping = read_clipping(arguments);
    optimizer = std::make_shared<RMSprop>(options);
  } else {
    arguments.fail("not an optimizer accel has (Adam, AdamW, SGD, RMSprop, LossScaleOptimizer)");
  }
  arguments.finish();
  return optimizer;
}

Reduction reduction_from(LayerArguments& arguments) {
  const json value = arguments.raw("reduction");
  if (value.is_null() || value == "sum_over_batch_size" || value == "auto") return Reduction::kSumOverBatchSize;
  if (value == "sum") return Reduction::kSum;
  if (value == "none") return Reduction::kNone;
  arguments.fail("reduction " + value.dump() + " is not one accel has");
}

std::shared_ptr<Loss> loss_from(const json& object, const std::string& source) {
  if (object.is_string()) return get_loss(object.get<std::string>());
  LayerArguments arguments = arguments_of(object, "loss", source);
  const std::string& class_name = arguments.class_name();
  std::shared_ptr<Loss> loss;
  if (class_name == "SparseCategoricalCrossentropy" || class_name == "CategoricalCrossentropy" ||
      class_name == "BinaryCrossentropy") {
    CrossentropyOptions options;
    options.reduction = reduction_from(arguments);
    options.from_logits = arguments.boolean("from_logits", false);
    options.name = arguments.layer_name();
    if (class_name == "SparseCategoricalCrossentropy") {
      arguments.require("ignore_class", nullptr, "accel's labels have no ignored class");
      loss = std::make_shared<SparseCategoricalCrossentropy>(options);
    } else {
      options.label_smoothing = arguments.number("label_smoothing", 0.0);
      arguments.require("axis", -1, "accel's classes are on the last axis");
      loss = class_name == "CategoricalCrossentropy" ? std::shared_ptr<Loss>(std::make_shared<CategoricalCrossentropy>(options))
                                                     : std::make_shared<BinaryCrossentropy>(options);
    }
  } else if (class_name == "MeanSquaredError") {
    RegressionLossOptions options;
    options.reduction = reduction_from(arguments);
    options.name = arguments.layer_name();
    loss = std::make_shared<MeanSquaredError>(options);
  } else {
    arguments.fail("not a loss accel reads (the three crossentropies, MeanSquaredError)");
  }
  arguments.finish();
  return loss;
}

}  // namespace

std::optional<json> compile_config(const Model& model) {
  if (!model.compiled()) return std::nullopt;
  const std::optional<json> optimizer = optimizer_config(model.optimizer());
  const std::optional<json> loss = loss_config(model.loss());
  if (!optimizer || !loss) {
    log::warning("saving model '" + model.name() + "': its " + (optimizer ? "loss" : "optimizer") +
                 " has no Keras 3 config here, so the file holds no compile_config (it loads uncompiled)");
    return std::nullopt;
  }
  json metrics = json::array();
  for (const MetricArgument& metric : model.metric_arguments()) {
    metrics.push_back(std::holds_alternative<std::string>(metric) ? std::get<std::string>(metric)
                                                                   : std::get<std::shared_ptr<Metric>>(metric)->name());
  }
  return json{{"optimizer", *optimizer},
              {"loss", *loss},
              {"loss_weights", nullptr},
              {"metrics", metrics.empty() ? json(nullptr) : metrics},
              {"weighted_metrics", nullptr},
              {"run_eagerly", false},
              {"steps_per_execution", model.steps_per_execution()},
              {"jit_compile", model.jit_compile()}};
}

void compile_from_config(Model& model, const json& config, const std::string& source) {
  try {
    if (!config.is_object()) throw InvalidArgumentError("compile_config is " + config.dump().substr(0, 80));
    LayerArguments arguments(config, "compile_config", source, "compile_config");
    std::shared_ptr<Optimizer> optimizer = optimizer_from(arguments.raw("optimizer"), source);
    std::shared_ptr<Loss> loss = loss_from(arguments.raw("loss"), source);
    arguments.require("loss_weights", nullptr, "accel trains one output with one loss");
    arguments.require("weighted_metrics", nullptr, "accel's metrics are unweighted");
    std::vector<MetricArgument> metrics;
    const json metric_list = arguments.raw("metrics");
    if (metric_list.is_array()) {
      for (const json& metric : metric_list) {
        if (metric.is_string()) {
          metrics.emplace_back(metric.get<std::string>());
        } else if (metric.is_object() && metric.contains("config") && metric["config"].contains("name")) {
          metrics.emplace_back(metric["config"]["name"].get<std::string>());  // accel's metric of that name
        } else {
          arguments.fail("metric " + metric.dump().substr(0, 80) + " is not read");
        }
      }
    }
    arguments.ignore("run_eagerly");
    CompileOptions options;
    options.steps_per_execution = arguments.integer("steps_per_execution", options.steps_per_execution);
    const json jit_compile = arguments.raw("jit_compile");
    // Keras's "auto" compiles where it can, as accel's compiled steps do.
    options.jit_compile = jit_compile == true || jit_compile == "auto";
    arguments.ignore("auto_scale_loss");
    arguments.finish();
    model.compile(optimizer, loss, metrics, options);
  } catch (const Error& error) {
    // The arguments' errors name the file already; the others (an unknown metric) get it here.
    const std::string what = error.what();
    log::warning("model '" + model.name() + "' loads uncompiled (compile it yourself): " +
                 (what.starts_with(source) ? what : source + ": " + what));
  } catch (const json::exception& error) {
    log::warning(source + ": model '" + model.name() + "' loads uncompiled: malformed compile_config: " + error.what());
  }
}

}  // namespace accel::keras::saving
