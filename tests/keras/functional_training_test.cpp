// Training Functional models: the tutorial CNN written with the Functional
// API trains bitwise like the Sequential one from the same seeds; fit
// calls a subclass's train_step (and evaluate its test_step); a residual
// model with a merge layer trains, and resumes from BackupAndRestore to
// bitwise the weights of an uninterrupted run.
#include <accel/autodiff/gradient_tape.hpp>
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/callbacks/backup_and_restore.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/keras/sequential.hpp>
#include <accel/ops.hpp>

#include <gtest/gtest.h>

#include "saving_test_support.hpp"

#include <array>

namespace accel::keras {
namespace {

constexpr int64_t kImageSize = 12;
constexpr int64_t kSamples = 40;

struct Images {
  Tensor x;
  Tensor y;
};

// Images whose label is the brightest of 10 bands, so that training moves.
Images images() {
  std::vector<float> pixels = ops::random_uniform({kSamples, kImageSize, kImageSize, 1}, 17).to_vector<float>();
  std::vector<int32_t> labels;
  for (int64_t sample = 0; sample < kSamples; ++sample) {
    labels.push_back(static_cast<int32_t>(sample % 10));
    pixels[static_cast<size_t>(sample * kImageSize * kImageSize + (sample % 10))] += 2.0f;
  }
  return {Tensor::from_vector<float>(pixels, Shape{kSamples, kImageSize, kImageSize, 1}),
          Tensor::from_vector<int32_t>(labels, Shape{kSamples})};
}

// The TensorFlow CNN tutorial's layers: Conv2D 32 3x3 relu, MaxPooling2D 2, Flatten, Dense 10.
std::vector<std::shared_ptr<Layer>> tutorial_cnn_layers() {
  return {std::make_shared<Conv2D>(32, std::array<int32_t, 2>{3, 3}, Conv2DOptions{.activation = "relu"}),
          std::make_shared<MaxPooling2D>(Pooling2DOptions{.pool_size = {2, 2}}), std::make_shared<Flatten>(),
          std::make_shared<Dense>(10)};
}

struct Trained {
  std::vector<std::vector<float>> weights;
  std::vector<std::string> names;
  History history;
  Logs evaluation;
  std::vector<float> predictions;
};

Trained train(Model& model, const Images& data) {
  model.compile("adam", std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true}),
                {"accuracy"});
  Trained trained;
  trained.history = model.fit(data.x, data.y, {.epochs = 2, .batch_size = 8, .verbose = 0, .validation_split = 0.2,
                                               .seed = 4});
  for (const Variable& weight : model.weights()) {
    trained.weights.push_back(weight.value().to_vector<float>());
    trained.names.push_back(weight.name());
  }
  trained.evaluation = model.evaluate(data.x, data.y, {.verbose = 0});
  trained.predictions = model.predict(data.x, {.verbose = 0}).to_vector<float>();
  return trained;
}

TEST(FunctionalTrainingTest, FunctionalTutorialCnnTrainsBitwiseLikeTheSequentialOne) {
  const Images data = images();

  clear_session();
  set_random_seed(42);
  Sequential sequential(tutorial_cnn_layers());
  sequential.build({kUnknownDim, kImageSize, kImageSize, 1});
  const Trained from_sequential = train(sequential, data);

  clear_session();
  set_random_seed(42);
  const std::vector<std::shared_ptr<Layer>> layers = tutorial_cnn_layers();
  const KerasTensor inputs = Input({kImageSize, kImageSize, 1});
  KerasTensor x = inputs;
  for (const auto& layer : layers) x = (*layer)(x);
  Model functional(inputs, x);
  const Trained from_functional = train(functional, data);

  EXPECT_EQ(from_functional.names, from_sequential.names);
  ASSERT_EQ(from_functional.weights.size(), 4u);
  for (size_t index = 0; index < from_functional.weights.size(); ++index) {
    EXPECT_EQ(from_functional.weights[index], from_sequential.weights[index]) << from_functional.names[index];
  }
  EXPECT_EQ(from_functional.history.history, from_sequential.history.history);
  EXPECT_EQ(from_functional.evaluation, from_sequential.evaluation);
  EXPECT_EQ(from_functional.predictions, from_sequential.predictions);
  // Training moved the weights away from their initial values.
  EXPECT_LT(from_functional.history.history.at("loss").back(), from_functional.history.history.at("loss").front());
}

// The subclass of Keras's "customizing what happens in fit" guide: it counts
// its steps and still trains through the built-in one.
class CountingModel : public Model {
 public:
  using Model::Model;
  Logs train_step(const Tensor& x, const Tensor& y) override {
    ++train_steps;
    return Model::train_step(x, y);
  }
  Logs test_step(const Tensor& x, const Tensor& y) override {
    ++test_steps;
    return Model::test_step(x, y);
  }
  int train_steps = 0;
  int test_steps = 0;
};

// A step of its own: the mean absolute error, its own optimizer update and its own log.
class OwnStepModel : public Model {
 public:
  using Model::Model;
  Logs train_step(const Tensor& x, const Tensor& y) override {
    Tensor loss;
    std::vector<Tensor> gradients;
    const std::vector<Variable> weights = trainable_weights();
    {
      GradientTape tape;
      const Tensor y_pred = (*this)(x, /*training=*/true);
      loss = ops::reduce_mean(ops::abs(ops::sub(y_pred, y)));
      gradients = tape.gradient(loss, weights);
    }
    GradientsAndVariables pairs;
    for (size_t index = 0; index < weights.size(); ++index) pairs.emplace_back(gradients[index], weights[index]);
    optimizer().apply_gradients(pairs);
    return {{"absolute_error", static_cast<double>(loss.item<float>())}};
  }
};

TEST(FunctionalTrainingTest, FitCallsTheSubclassTrainStepAndEvaluateItsTestStep) {
  clear_session();
  set_random_seed(5);
  const KerasTensor inputs = Input({3});
  const KerasTensor outputs = (*std::make_shared<Dense>(1))(inputs);
  CountingModel model(inputs, outputs);
  model.compile("sgd", "mse");
  const Tensor x = ops::random_uniform({10, 3}, 8);
  const Tensor y = ops::random_uniform({10, 1}, 9);
  const History history = model.fit(x, y, {.epochs = 2, .batch_size = 4, .verbose = 0});
  EXPECT_EQ(model.train_steps, 6);  // 3 batches per epoch
  EXPECT_EQ(history.history.at("loss").size(), 2u);
  model.evaluate(x, y, {.batch_size = 5, .verbose = 0});
  EXPECT_EQ(model.test_steps, 2);
}

TEST(FunctionalTrainingTest, AStepOfItsOwnTrainsAndLogsWhatItReturns) {
  clear_session();
  set_random_seed(5);
  const KerasTensor inputs = Input({3});
  OwnStepModel model(inputs, (*std::make_shared<Dense>(1))(inputs));
  model.compile(std::make_shared<SGD>(SGDOptions{.learning_rate = 0.1}), "mse");
  const Tensor x = ops::random_uniform({16, 3}, 8);
  const Tensor y = ops::zeros({16, 1});
  const History history = model.fit(x, y, {.epochs = 5, .batch_size = 16, .verbose = 0});
  const std::vector<double>& errors = history.history.at("absolute_error");
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_LT(errors.back(), errors.front());
}

TEST(FunctionalTrainingTest, ResidualModelTrainsThroughTheMergeLayer) {
  clear_session();
  set_random_seed(6);
  const KerasTensor inputs = Input({4});
  const KerasTensor hidden = (*std::make_shared<Dense>(4, DenseOptions{.activation = "tanh"}))(inputs);
  const KerasTensor residual = (*std::make_shared<Add>())({inputs, hidden});
  Model model(inputs, (*std::make_shared<Dense>(1))(residual));
  model.compile(std::make_shared<SGD>(SGDOptions{.learning_rate = 0.05}), "mse");
  const Tensor x = ops::random_uniform({32, 4}, 2, -1.0, 1.0);
  const Tensor y = ops::reduce_sum(x, {1}, /*keepdims=*/true);
  const History history = model.fit(x, y, {.epochs = 20, .batch_size = 8, .verbose = 0});
  EXPECT_LT(history.history.at("loss").back(), 0.5 * history.history.at("loss").front());
}

// Two inputs, two outputs: "score" (1 unit) from the first input, "kind" (3
// units) from both.
std::unique_ptr<Model> two_headed_model() {
  clear_session();
  set_random_seed(12);
  const KerasTensor image = Input({3});
  const KerasTensor meta = Input({2});
  const KerasTensor hidden = (*std::make_shared<Dense>(4, DenseOptions{.activation = "tanh"}))(image);
  const KerasTensor score = (*std::make_shared<Dense>(1, DenseOptions{.name = "score"}))(hidden);
  const KerasTensor joined = (*std::make_shared<Concatenate>())({hidden, meta});
  const KerasTensor kind = (*std::make_shared<Dense>(3, DenseOptions{.name = "kind"}))(joined);
  return std::make_unique<Model>(KerasTensors{image, meta}, KerasTensors{score, kind});
}

TEST(FunctionalTrainingTest, SeveralInputsAndOutputsTrainOnTheSumOfTheOutputsLosses) {
  const Tensor image = ops::random_uniform({12, 3}, 31);
  const Tensor meta = ops::random_uniform({12, 2}, 32);
  const Tensor score = ops::random_uniform({12, 1}, 33);
  const Tensor kind = ops::random_uniform({12, 3}, 34);

  auto model = two_headed_model();
  model->compile(std::make_shared<SGD>(SGDOptions{.learning_rate = 0.1}), "mse", {"accuracy"});
  EXPECT_EQ(model->metrics_names(),
            (std::vector<std::string>{"loss", "score_loss", "kind_loss", "score_accuracy", "kind_accuracy"}));
  const History history =
      model->fit({image, meta}, {score, kind}, {.epochs = 1, .batch_size = 12, .verbose = 0, .shuffle = false});
  for (const char* name : {"loss", "score_loss", "kind_loss", "score_accuracy", "kind_accuracy"}) {
    EXPECT_EQ(history.history.count(name), 1u) << name;
  }
  EXPECT_NEAR(history.history.at("loss")[0], history.history.at("score_loss")[0] + history.history.at("kind_loss")[0],
              1e-6);

  // The same step by hand: the gradient of the summed losses, one SGD update.
  auto by_hand = two_headed_model();
  by_hand->compile(std::make_shared<SGD>(SGDOptions{.learning_rate = 0.1}), "mse");
  const std::vector<Variable> weights = by_hand->trainable_weights();
  std::vector<Tensor> gradients;
  {
    GradientTape tape;
    const std::vector<Tensor> predictions = by_hand->call_outputs({image, meta}, /*training=*/true);
    const Tensor total = ops::add(by_hand->loss()(score, predictions[0]), by_hand->loss()(kind, predictions[1]));
    gradients = tape.gradient(total, weights);
  }
  GradientsAndVariables pairs;
  for (size_t index = 0; index < weights.size(); ++index) pairs.emplace_back(gradients[index], weights[index]);
  by_hand->optimizer().apply_gradients(pairs);
  ASSERT_EQ(model->weights().size(), by_hand->weights().size());
  for (size_t index = 0; index < weights.size(); ++index) {
    EXPECT_EQ(model->weights()[index].value().to_vector<float>(), by_hand->weights()[index].value().to_vector<float>())
        << model->weights()[index].name();
  }

  // More epochs reduce the loss; evaluate reports the same names.
  const History more = model->fit({image, meta}, {score, kind},
                                  {.epochs = 30, .batch_size = 4, .verbose = 0, .validation_split = 0.25});
  EXPECT_LT(more.history.at("loss").back(), more.history.at("loss").front());
  EXPECT_EQ(more.history.count("val_kind_loss"), 1u);
  const Logs evaluation = model->evaluate({image, meta}, {score, kind}, {.verbose = 0});
  EXPECT_NEAR(evaluation.at("loss"), evaluation.at("score_loss") + evaluation.at("kind_loss"), 1e-6);
  EXPECT_THROW(model->fit({image}, {score, kind}, {.verbose = 0}), InvalidArgumentError);
}

// A residual classifier with two branches merged by Concatenate, compiled.
std::unique_ptr<Model> residual_classifier() {
  clear_session();
  set_random_seed(8);
  const KerasTensor inputs = Input({testing::kToyFeatures});
  const KerasTensor hidden = (*std::make_shared<Dense>(8, DenseOptions{.activation = "relu"}))(inputs);
  const KerasTensor wide = (*std::make_shared<Dense>(8))(hidden);
  const KerasTensor merged = (*std::make_shared<Add>())({hidden, wide});
  const KerasTensor joined = (*std::make_shared<Concatenate>())({merged, inputs});
  auto model = std::make_unique<Model>(
      inputs, (*std::make_shared<Dense>(testing::kToyClasses, DenseOptions{.activation = "softmax"}))(joined));
  model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  return model;
}

// Fails fit (as a crash would) at epoch 1, batch 5.
class FailMidSecondEpoch final : public Callback {
 public:
  void on_epoch_begin(int epoch, const Logs&) override { epoch_ = epoch; }
  void on_train_batch_begin(int64_t batch, const Logs&) override {
    if (epoch_ == 1 && batch == 5) throw InternalError("simulated crash");
  }

 private:
  int epoch_ = 0;
};

// The first batch a fit trains on.
class FirstBatchRecorder final : public Callback {
 public:
  void on_epoch_begin(int epoch, const Logs&) override { current_epoch_ = epoch; }
  void on_train_batch_begin(int64_t batch_index, const Logs&) override {
    if (epoch >= 0) return;
    epoch = current_epoch_;
    batch = batch_index;
  }
  int epoch = -1;
  int64_t batch = -1;

 private:
  int current_epoch_ = 0;
};

TEST(FunctionalTrainingTest, BackupAndRestoreResumesAFunctionalModelBitwise) {
  testing::TemporaryFolder folder;
  const auto data = testing::toy_data();
  auto options = [](std::vector<CallbackPointer> callbacks) {
    return FitOptions{.epochs = 3, .batch_size = 8, .verbose = 0, .callbacks = std::move(callbacks), .seed = 99};
  };
  auto uninterrupted = residual_classifier();
  uninterrupted->fit(data.x, data.y, options({}));

  const BackupAndRestoreOptions backup_options{.save_freq = 2};
  {
    auto crashed = residual_classifier();
    EXPECT_THROW(crashed->fit(data.x, data.y,
                              options({std::make_shared<BackupAndRestore>(folder.file("backup"), backup_options),
                                       std::make_shared<FailMidSecondEpoch>()})),
                 InternalError);
  }
  auto resumed = residual_classifier();
  auto first_batch = std::make_shared<FirstBatchRecorder>();
  resumed->fit(data.x, data.y,
               options({std::make_shared<BackupAndRestore>(folder.file("backup"), backup_options), first_batch}));
  // Backups after every 2 batches: the crash before batch 5 of epoch 1 resumes after its batch 3.
  EXPECT_EQ(first_batch->epoch, 1);
  EXPECT_EQ(first_batch->batch, 4);
  EXPECT_EQ(testing::weight_values(*resumed), testing::weight_values(*uninterrupted));
}

}  // namespace
}  // namespace accel::keras
