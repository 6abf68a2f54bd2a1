// Model training API: compile name resolution, fit's History and options
// (validation_split, callbacks, stop_training, steps_per_epoch, Dataset
// input, seeded shuffling), evaluate, predict, and optimizer state.
#include <accel/data/dataset.hpp>
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/keras/sequential.hpp>
#include <accel/ops.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace accel::keras {
namespace {

constexpr int64_t kSamples = 40, kFeatures = 4, kClasses = 3;

// A separable 3-class problem: the label is the argmax of the first 3 features.
struct Toy {
  Tensor x, y;
};
Toy toy_data() {
  std::vector<float> x(kSamples * kFeatures);
  std::vector<int32_t> y(kSamples);
  for (int64_t i = 0; i < kSamples; ++i) {
    for (int64_t f = 0; f < kFeatures; ++f) x[i * kFeatures + f] = static_cast<float>(std::sin(1.7 * i + 2.3 * f));
    int32_t best = 0;
    for (int32_t c = 1; c < kClasses; ++c) best = x[i * kFeatures + c] > x[i * kFeatures + best] ? c : best;
    y[i] = best;
  }
  return {Tensor::from_vector<float>(x, Shape{kSamples, kFeatures}), Tensor::from_vector<int32_t>(y, Shape{kSamples})};
}

std::unique_ptr<Sequential> classifier() {
  auto model = std::make_unique<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(8, DenseOptions{.activation = "relu"}),
      std::make_shared<Dense>(kClasses, DenseOptions{.activation = "softmax"})});
  model->compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
  return model;
}

class ModelTrainingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clear_session();
    set_random_seed(7);
  }
};

TEST_F(ModelTrainingTest, UnknownNamesListTheValidOnes) {
  auto model = classifier();
  try {
    model->compile("adamax", "mse");
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("adam, adamw, sgd, rmsprop"), std::string::npos) << error.what();
  }
  EXPECT_THROW(model->compile("sgd", "hinge"), InvalidArgumentError);
  EXPECT_THROW(model->compile("sgd", "mse", {"precision"}), InvalidArgumentError);
  EXPECT_NO_THROW(model->compile("RMSprop", "mean_squared_error"));
  Sequential uncompiled({std::make_shared<Dense>(1)});
  EXPECT_THROW(uncompiled.fit(toy_data().x, toy_data().y), FailedPreconditionError);
}

TEST_F(ModelTrainingTest, FitReturnsHistoryPerEpochAndLearns) {
  auto model = classifier();
  const Toy data = toy_data();
  const History history = model->fit(data.x, data.y, {.epochs = 30, .batch_size = 8, .verbose = 0});
  EXPECT_EQ(history.epoch.size(), 30u);
  ASSERT_EQ(history.history.at("loss").size(), 30u);
  ASSERT_EQ(history.history.at("accuracy").size(), 30u);
  EXPECT_LT(history.history.at("loss").back(), history.history.at("loss").front());
  EXPECT_EQ(model->metrics_names(), (std::vector<std::string>{"loss", "accuracy"}));
  EXPECT_EQ(model->optimizer().iterations(), 30 * 5);

  const Logs test = model->evaluate(data.x, data.y, {.verbose = 0});
  EXPECT_GT(test.at("accuracy"), 0.7);
  const Tensor probabilities = model->predict(data.x, {.batch_size = 16, .verbose = 0});
  EXPECT_EQ(probabilities.shape(), (Shape{kSamples, kClasses}));
}

TEST_F(ModelTrainingTest, ValidationSplitHoldsOutTheLastSamples) {
  auto model = classifier();
  const Toy data = toy_data();
  const History history =
      model->fit(data.x, data.y, {.epochs = 2, .batch_size = 8, .verbose = 0, .validation_split = 0.25});
  ASSERT_EQ(history.history.at("val_loss").size(), 2u);
  ASSERT_EQ(history.history.count("val_accuracy"), 1u);
  // 30 training samples -> 4 batches per epoch.
  EXPECT_EQ(model->optimizer().iterations(), 2 * 4);
  // The last epoch's validation is an evaluation of the last 10 samples.
  const Tensor last_x = ops::slice(data.x, {30, 0}, {10, kFeatures});
  const Tensor last_y = ops::slice(data.y, {30}, {10});
  const Logs held_out = model->evaluate(last_x, last_y, {.verbose = 0});
  EXPECT_NEAR(history.history.at("val_loss").back(), held_out.at("loss"), 1e-6);
  EXPECT_NEAR(history.history.at("val_accuracy").back(), held_out.at("accuracy"), 1e-9);
}

// Records hook order and stops training after a given number of batches.
class Recorder final : public Callback {
 public:
  explicit Recorder(int stop_after_batches) : stop_after_(stop_after_batches) {}
  void on_train_begin(const Logs&) override { events.push_back("train_begin"); }
  void on_epoch_begin(int epoch, const Logs&) override { events.push_back("epoch_begin " + std::to_string(epoch)); }
  void on_train_batch_end(int64_t batch, const Logs& logs) override {
    events.push_back("batch_end " + std::to_string(batch));
    EXPECT_TRUE(logs.contains("loss"));
    if (++batches_ == stop_after_) model().set_stop_training(true);
  }
  void on_epoch_end(int epoch, Logs& logs) override {
    events.push_back("epoch_end " + std::to_string(epoch));
    logs["lr"] = model().optimizer().learning_rate();  // a callback may add logs; History keeps them
    model().optimizer().set_learning_rate(0.5 * model().optimizer().learning_rate());
  }
  void on_train_end(const Logs&) override { events.push_back("train_end"); }
  std::vector<std::string> events;

 private:
  int stop_after_;
  int batches_ = 0;
};

TEST_F(ModelTrainingTest, CallbacksSeeHooksSetLearningRateAndStopTraining) {
  auto model = classifier();
  const Toy data = toy_data();
  auto recorder = std::make_shared<Recorder>(/*stop_after_batches=*/7);
  const History history = model->fit(
      data.x, data.y, {.epochs = 5, .batch_size = 10, .verbose = 0, .callbacks = {recorder}, .initial_epoch = 1});
  EXPECT_EQ(recorder->events,
            (std::vector<std::string>{"train_begin", "epoch_begin 1", "batch_end 0", "batch_end 1", "batch_end 2",
                                      "batch_end 3", "epoch_end 1", "epoch_begin 2", "batch_end 0", "batch_end 1",
                                      "batch_end 2", "epoch_end 2", "train_end"}));
  EXPECT_EQ(history.epoch, (std::vector<int>{1, 2}));
  EXPECT_DOUBLE_EQ(history.history.at("lr")[0], 0.001);
  EXPECT_DOUBLE_EQ(history.history.at("lr")[1], 0.0005);
}

TEST_F(ModelTrainingTest, FitTakesADatasetOfBatches) {
  auto model = classifier();
  const Toy data = toy_data();
  const data::Dataset batches = data::Dataset::from_tensor_slices({data.x, data.y}).batch(16);
  const History history = model->fit(batches, {.epochs = 3, .verbose = 0, .validation_dataset = batches});
  EXPECT_EQ(history.history.at("loss").size(), 3u);
  EXPECT_EQ(history.history.at("val_accuracy").size(), 3u);
  EXPECT_EQ(model->optimizer().iterations(), 3 * 3);
  EXPECT_EQ(model->predict(batches, {.verbose = 0}).shape(), (Shape{kSamples, kClasses}));
  EXPECT_THROW(model->fit(batches, {.validation_split = 0.2}), InvalidArgumentError);
}

TEST_F(ModelTrainingTest, StepsPerEpochContinuesAcrossEpochs) {
  auto model = classifier();
  const Toy data = toy_data();
  model->fit(data.x, data.y, {.epochs = 3, .batch_size = 8, .verbose = 0, .steps_per_epoch = 7});
  EXPECT_EQ(model->optimizer().iterations(), 21);
  // A finite Dataset that runs out stops training (Keras warns and interrupts).
  auto second = classifier();
  const data::Dataset batches = data::Dataset::from_tensor_slices({data.x, data.y}).batch(8);  // 5 batches
  const History history = second->fit(batches, {.epochs = 4, .verbose = 0, .steps_per_epoch = 3});
  EXPECT_EQ(second->optimizer().iterations(), 5);
  EXPECT_EQ(history.epoch.size(), 2u);
}

TEST_F(ModelTrainingTest, SeededShufflingIsReproducible) {
  const Toy data = toy_data();
  auto train = [&](uint64_t seed) {
    clear_session();
    set_random_seed(3);
    auto model = classifier();
    return model->fit(data.x, data.y, {.epochs = 2, .batch_size = 8, .verbose = 0, .seed = seed}).history.at("loss");
  };
  EXPECT_EQ(train(11), train(11));
  EXPECT_NE(train(11), train(12));
}

TEST_F(ModelTrainingTest, OptimizerStateIsNamedLikeKeras) {
  auto dense = std::make_shared<Dense>(2);
  Sequential model({dense});
  model.compile(std::make_shared<Adam>(), "mse");
  model.fit(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2}),
            Tensor::from_vector<float>({1, 0, 0, 1, 1, 1}, Shape{3, 2}), {.verbose = 0});
  std::vector<std::string> names;
  for (const Variable& variable : model.optimizer().variables()) names.push_back(variable.name());
  EXPECT_EQ(names, (std::vector<std::string>{"Adam/iter:0", "Adam/dense/kernel/m:0", "Adam/dense/bias/m:0",
                                             "Adam/dense/kernel/v:0", "Adam/dense/bias/v:0"}));
  for (const Variable& variable : model.optimizer().variables()) EXPECT_FALSE(variable.trainable());
  EXPECT_EQ(model.optimizer().iterations(), 1);
}

TEST_F(ModelTrainingTest, ApplyGradientsClipsAsKeras2) {
  auto make_variable = [] { return Variable(Tensor::from_vector<float>({0, 0}, Shape{2}), "w"); };
  const Tensor gradient = Tensor::from_vector<float>({3, 4}, Shape{2});  // norm 5

  Variable by_value = make_variable();
  SGD({.learning_rate = 1.0, .clipping = {.clipvalue = 3.5}}).apply_gradients({{gradient, by_value}});
  EXPECT_EQ(by_value.value().to_vector<float>(), (std::vector<float>{-3, -3.5f}));

  Variable by_norm = make_variable();
  SGD({.learning_rate = 1.0, .clipping = {.clipnorm = 1.0}}).apply_gradients({{gradient, by_norm}});
  EXPECT_NEAR(by_norm.value().to_vector<float>()[0], -0.6, 1e-6);
  EXPECT_NEAR(by_norm.value().to_vector<float>()[1], -0.8, 1e-6);

  // Global norm of (3, 4) and (0, 12) is 13: both scaled by 1/13.
  Variable first = make_variable(), second = make_variable();
  SGD({.learning_rate = 1.0, .clipping = {.global_clipnorm = 1.0}})
      .apply_gradients({{gradient, first}, {Tensor::from_vector<float>({0, 12}, Shape{2}), second}});
  EXPECT_NEAR(first.value().to_vector<float>()[1], -4.0 / 13, 1e-6);
  EXPECT_NEAR(second.value().to_vector<float>()[1], -12.0 / 13, 1e-6);

  EXPECT_THROW(SGD({.clipping = {.clipnorm = 1.0, .global_clipnorm = 1.0}}), InvalidArgumentError);
  Variable unused = make_variable();
  EXPECT_THROW(SGD().apply_gradients({{Tensor(), unused}}), InvalidArgumentError);
}

TEST_F(ModelTrainingTest, LearningRateScheduleReadsTheIteration) {
  Variable w(Tensor::from_vector<float>({0}, Shape{1}), "w");
  SGD sgd({.learning_rate = [](int64_t iteration) { return 1.0 / (1 + iteration); }});
  const Tensor one = Tensor::from_vector<float>({1}, Shape{1});
  sgd.apply_gradients({{one, w}});  // rate 1
  sgd.apply_gradients({{one, w}});  // rate 1/2
  EXPECT_NEAR(w.value().to_vector<float>()[0], -1.5, 1e-6);
  EXPECT_DOUBLE_EQ(sgd.learning_rate(), 1.0 / 3);
}

// Keras's steps_per_execution: each execution runs that many batches (fewer
// at the end of an epoch); the batch callbacks see its first and last batch;
// the training itself is the same as one batch per execution.
TEST_F(ModelTrainingTest, StepsPerExecutionGroupsBatchesBetweenCallbacks) {
  struct BatchIndices final : Callback {
    std::vector<std::pair<int64_t, int64_t>> executions;  // (begin, end) batch index
    void on_train_batch_begin(int64_t batch, const Logs&) override { executions.push_back({batch, -1}); }
    void on_train_batch_end(int64_t batch, const Logs&) override { executions.back().second = batch; }
  };
  const Toy data = toy_data();
  auto run = [&](int64_t steps_per_execution, std::shared_ptr<BatchIndices> indices) {
    set_random_seed(7);
    auto model = std::make_unique<Sequential>(std::vector<std::shared_ptr<Layer>>{
        std::make_shared<Dense>(8, DenseOptions{.activation = "relu"}), std::make_shared<Dense>(kClasses)});
    model->compile("sgd", "mse", {}, {.steps_per_execution = steps_per_execution});
    const History history = model->fit(data.x, ops::one_hot(data.y, kClasses),
                                       {.epochs = 2, .batch_size = 4, .verbose = 0, .callbacks = {indices}, .seed = 3});
    EXPECT_EQ(model->optimizer().iterations(), 20);
    std::vector<float> weights;
    for (const Variable& weight : model->weights()) {
      const std::vector<float> values = weight.value().to_vector<float>();
      weights.insert(weights.end(), values.begin(), values.end());
    }
    return std::make_pair(weights, history.history.at("loss"));
  };
  auto grouped = std::make_shared<BatchIndices>();
  const auto [grouped_weights, grouped_loss] = run(4, grouped);
  // 10 batches per epoch: executions of 4, 4 and 2, twice.
  const std::vector<std::pair<int64_t, int64_t>> expected{{0, 3}, {4, 7}, {8, 9}, {0, 3}, {4, 7}, {8, 9}};
  EXPECT_EQ(grouped->executions, expected);
  const auto [single_weights, single_loss] = run(1, std::make_shared<BatchIndices>());
  EXPECT_EQ(grouped_weights, single_weights);
  EXPECT_EQ(grouped_loss, single_loss);
  EXPECT_THROW(classifier()->compile("sgd", "mse", {}, {.steps_per_execution = 0}), InvalidArgumentError);
}

}  // namespace
}  // namespace accel::keras
