// The training options the model zoo writes: the adamw optimizer with its
// arguments, a learning_rate that is a number or a schedule
// ({cosine_decay: {...}}, exponential_decay, piecewise_constant_decay), and
// label_smoothing on the categorical and binary cross-entropies. Values are
// read with their defaults and made into the Keras objects; a wrong value is
// one error at its file:line:column.
#include "test_support.hpp"

#include "runner/model_factory.hpp"

#include <accel/error.hpp>
#include <accel/keras/optimizers/adamw.hpp>

#include <gtest/gtest.h>

#include <string>

namespace accel::experiment {
namespace {

using testing::error_of;
using testing::offline_options;

// Line 8 is the optimizer; `training` lines follow it.
std::string with_training(const std::string& optimizer, const std::string& rest = "") {
  return R"(name: zoo
model:
  layers:
    - flatten: {input_shape: [28, 28]}
    - dense: {units: 10}
data: {source: fashion_mnist, one_hot: true}
training:
  optimizer: )" + optimizer + R"(
  loss: {categorical_crossentropy: {from_logits: true, label_smoothing: 0.1}}
)" + rest;
}

TrainingConfig training_of(const std::string& yaml) {
  return *load_experiment_text(yaml, "zoo.yaml", offline_options()).runs.at(0).training;
}

void expect_error_at(const std::string& yaml, int line, int column, const std::string& message,
                     const std::string& expected = "") {
  const ExperimentError error = error_of(yaml);
  EXPECT_EQ(error.where().file, "inline.yaml");
  EXPECT_EQ(error.where().line, line) << error.what();
  EXPECT_EQ(error.where().column, column) << error.what();
  EXPECT_NE(std::string(error.what()).find(message), std::string::npos) << error.what();
  if (!expected.empty()) EXPECT_NE(error.expected().find(expected), std::string::npos) << error.expected();
}

TEST(OptimizerOptions, AdamwArgumentsAndDefaults) {
  const TrainingConfig training = training_of(with_training(
      "{adamw: {learning_rate: 0.002, weight_decay: 0.05, exclude_from_weight_decay: [bias, layer_normalization]}}"));
  EXPECT_EQ(training.optimizer.name, "adamw");
  EXPECT_EQ(training.optimizer.argument("learning_rate")->as_number(), 0.002);
  EXPECT_EQ(training.optimizer.argument("weight_decay")->as_number(), 0.05);
  EXPECT_EQ(training.optimizer.argument("exclude_from_weight_decay")->as_texts(),
            (std::vector<std::string>{"bias", "layer_normalization"}));
  EXPECT_EQ(training.optimizer.argument("beta_2")->as_number(), 0.999);

  const std::shared_ptr<keras::Optimizer> optimizer = make_optimizer(training.optimizer);
  const auto* adamw = dynamic_cast<const keras::AdamW*>(optimizer.get());
  ASSERT_NE(adamw, nullptr);
  EXPECT_EQ(adamw->name(), "AdamW");
  EXPECT_EQ(adamw->weight_decay(), 0.05);
  EXPECT_EQ(adamw->learning_rate(), 0.002);
  EXPECT_FALSE(adamw->uses_weight_decay(Variable(Tensor::scalar<float>(0), "dense/bias")));
  EXPECT_TRUE(adamw->uses_weight_decay(Variable(Tensor::scalar<float>(0), "dense/kernel")));

  // Keras's defaults when only the name is written.
  const auto plain = make_optimizer(training_of(with_training("adamw")).optimizer);
  EXPECT_EQ(dynamic_cast<const keras::AdamW&>(*plain).weight_decay(), 0.004);
  EXPECT_EQ(plain->learning_rate(), 0.001);
}

TEST(OptimizerOptions, ALearningRateScheduleIsReadAndMade) {
  const TrainingConfig training = training_of(with_training(
      "{adamw: {learning_rate: {cosine_decay: {initial_learning_rate: 0.0, decay_steps: 100, warmup_target: 0.01, "
      "warmup_steps: 10}}}}"));
  const Value& rate = *training.optimizer.argument("learning_rate");
  ASSERT_TRUE(rate.is_object());
  EXPECT_EQ(rate.as_object().name, "cosine_decay");
  EXPECT_EQ(rate.as_object().argument("decay_steps")->as_int(), 100);
  EXPECT_EQ(rate.as_object().argument("alpha")->as_number(), 0.0);  // the default
  EXPECT_EQ(rate.where.line, 8);

  const auto optimizer = make_optimizer(training.optimizer);
  EXPECT_DOUBLE_EQ(optimizer->learning_rate(), 0.0);  // step 0 of the warmup

  // Every optimizer takes a schedule; exponential and piecewise too.
  const auto sgd = make_optimizer(training_of(with_training(
      "{sgd: {learning_rate: {exponential_decay: {initial_learning_rate: 0.1, decay_steps: 10, decay_rate: 0.5}}}}"))
                                      .optimizer);
  EXPECT_DOUBLE_EQ(sgd->learning_rate(), 0.1);
  const auto adam = make_optimizer(training_of(with_training(
      "{adam: {learning_rate: {piecewise_constant_decay: {boundaries: [0, 5], values: [0.01, 0.005, 0.001]}}}}"))
                                       .optimizer);
  EXPECT_DOUBLE_EQ(adam->learning_rate(), 0.01);
}

TEST(OptimizerOptions, LabelSmoothingIsPassedToTheLoss) {
  const TrainingConfig training = training_of(with_training("adam"));
  EXPECT_EQ(training.loss.argument("label_smoothing")->as_number(), 0.1);
  EXPECT_NO_THROW((void)make_loss(training.loss));
  // Keras 2's sparse cross-entropy has no label_smoothing: an unknown key.
  std::string sparse = with_training("adam");
  sparse.replace(sparse.find("{categorical_crossentropy: {from_logits: true, label_smoothing: 0.1}}"),
                 std::string("{categorical_crossentropy: {from_logits: true, label_smoothing: 0.1}}").size(),
                 "{sparse_categorical_crossentropy: {label_smoothing: 0.1}}");
  sparse.replace(sparse.find("one_hot: true"), std::string("one_hot: true").size(), "one_hot: false");
  expect_error_at(sparse, 9, 44, "unknown key 'training.loss.sparse_categorical_crossentropy.label_smoothing'");
}

TEST(OptimizerOptions, BadValuesAreErrorsAtTheirPlace) {
  // Line 8: "  optimizer: " is 13 characters, so the value starts at column 14.
  expect_error_at(with_training("{adamw: {weight_decay: -0.1}}"), 8, 37, "'training.optimizer.adamw.weight_decay' is '-0.1'",
                  "a number in [0, 1]");
  expect_error_at(with_training("{adamw: {learning_rate: fast}}"), 8, 38,
                  "'training.optimizer.adamw.learning_rate' is 'fast'",
                  "a number > 0 or a learning-rate schedule: 'cosine_decay', 'exponential_decay' or "
                  "'piecewise_constant_decay'");
  expect_error_at(with_training("{adamw: {learning_rate: 0}}"), 8, 38, "'0', out of range");
  expect_error_at(with_training("{adamw: {learning_rate: {cosine: {decay_steps: 10}}}}"), 8, 39,
                  "unknown learning-rate schedule 'cosine' (did you mean 'cosine_decay'?)");
  expect_error_at(with_training("{adamw: {learning_rate: {cosine_decay: {initial_learning_rate: 0.1, decay_steps: 0}}}}"),
                  8, 95, "'training.optimizer.adamw.learning_rate.cosine_decay.decay_steps' is 0, out of range",
                  "an integer in [1, ");
  expect_error_at(with_training("{adamw: {learning_rate: {cosine_decay: {decay_steps: 10}}}}"), 8, 53,
                  "missing key 'training.optimizer.adamw.learning_rate.cosine_decay.initial_learning_rate'");
  expect_error_at(with_training("{adamw: {learning_rate: {cosine_decay: {initial_learning_rate: 0.1, decay_steps: 10, "
                                "alpha: 2}}}}"),
                  8, 106, "'training.optimizer.adamw.learning_rate.cosine_decay.alpha' is '2', out of range");
  expect_error_at(with_training("{adamw: {learning_rate: {cosine_decay: {initial_learning_rate: 0.1, decay_steps: 10, "
                                "warmup_steps: 5}}}}"),
                  8, 99, "'training.optimizer.adamw.learning_rate.cosine_decay.warmup_steps' without 'warmup_target'");
  expect_error_at(with_training("{sgd: {learning_rate: {piecewise_constant_decay: {boundaries: [10, 5], "
                                "values: [0.1, 0.01, 0.001]}}}}"),
                  8, 81, "'training.optimizer.sgd.learning_rate.piecewise_constant_decay.boundaries[1]' is 5",
                  "boundaries that increase strictly");
  expect_error_at(with_training("{sgd: {learning_rate: {piecewise_constant_decay: {boundaries: [10], "
                                "values: [0.1, 0.01, 0.001]}}}}"),
                  8, 90, "'training.optimizer.sgd.learning_rate.piecewise_constant_decay.values' has 3 rates for 1 "
                         "boundaries",
                  "2 rates, one more than boundaries");
  expect_error_at(with_training("{adamw: {exclude_from_weight_decay: bias}}"), 8, 50,
                  "'training.optimizer.adamw.exclude_from_weight_decay' is 'bias', not a list");
  std::string smoothing = with_training("adam");
  smoothing.replace(smoothing.find("label_smoothing: 0.1"), std::string("label_smoothing: 0.1").size(),
                    "label_smoothing: 1.5");
  expect_error_at(smoothing, 9, 73, "'training.loss.categorical_crossentropy.label_smoothing' is '1.5', out of range",
                  "a number in [0, 1]");
}

TEST(OptimizerOptions, AScheduleCannotBeReducedOnPlateau) {
  expect_error_at(with_training("{adam: {learning_rate: {exponential_decay: {initial_learning_rate: 0.1, "
                                "decay_steps: 10, decay_rate: 0.5}}}}",
                                "  callbacks: [reduce_lr_on_plateau]\n"),
                  10, 15, "'reduce_lr_on_plateau' would replace the learning-rate schedule 'exponential_decay'");
}

// model_checkpoint's extension must fit save_weights_only (Keras 3's rule):
// refused at the filepath, with the extensions that fit.
TEST(OptimizerOptions, ACheckpointExtensionThatDoesNotFitIsRefusedWhereItIsWritten) {
  expect_error_at(with_training("adam", "  callbacks: [{model_checkpoint: {filepath: m.keras}}]\n"), 10, 45,
                  "model_checkpoint filepath 'm.keras' does not fit save_weights_only: true",
                  "save_weights_only: false for .keras");
  expect_error_at(with_training("adam", "  callbacks: [{model_checkpoint: {filepath: w.weights.h5, save_weights_only: "
                                        "false}}]\n"),
                  10, 45, "does not fit save_weights_only: false", ".keras or .safetensors");
  expect_error_at(with_training("adam", "  callbacks: [{model_checkpoint: {filepath: 'ckpt/{epoch}.ckpt'}}]\n"), 10,
                  45, "'ckpt/{epoch}.ckpt'", ".weights.h5 or .safetensors");
  for (const std::string fits : {"{filepath: w.weights.h5}", "{filepath: m.keras, save_weights_only: false}",
                                 "{filepath: c.safetensors, save_weights_only: false}", "{filepath: w.safetensors}"}) {
    EXPECT_EQ(training_of(with_training("adam", "  callbacks: [{model_checkpoint: " + fits + "}]\n")).callbacks.size(),
              1u)
        << fits;
  }
}

TEST(OptimizerOptions, CompareRunsMergeTheScheduleArgumentsAndOverridesReachThem) {
  const std::string yaml = with_training(
      "{adamw: {learning_rate: {cosine_decay: {initial_learning_rate: 0.001, decay_steps: 100}}}}",
      "compare:\n"
      "  - name: longer\n"
      "    training: {optimizer: {adamw: {learning_rate: {cosine_decay: {decay_steps: 500}}}}}\n"
      "  - name: constant\n"
      "    training: {optimizer: {adamw: {learning_rate: 0.01}}}\n");
  const Experiment experiment = load_experiment_text(yaml, "zoo.yaml", offline_options());
  ASSERT_EQ(experiment.runs.size(), 2u);
  const KerasObject& longer = experiment.runs[0].training->optimizer.argument("learning_rate")->as_object();
  EXPECT_EQ(longer.argument("decay_steps")->as_int(), 500);
  EXPECT_EQ(longer.argument("initial_learning_rate")->as_number(), 0.001);
  EXPECT_EQ(experiment.runs[1].training->optimizer.argument("learning_rate")->as_number(), 0.01);

  LoadOptions options = offline_options();
  options.overrides = {"training.optimizer.adamw.learning_rate.cosine_decay.alpha=0.25"};
  const Experiment overridden = load_experiment_text(
      with_training("{adamw: {learning_rate: {cosine_decay: {initial_learning_rate: 0.001, decay_steps: 100}}}}"),
      "zoo.yaml", options);
  EXPECT_EQ(overridden.runs[0].training->optimizer.argument("learning_rate")->as_object().argument("alpha")->as_number(),
            0.25);
}

}  // namespace
}  // namespace accel::experiment
