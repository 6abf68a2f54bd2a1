// Functional models under MirroredStrategy: the tutorial CNN written with the
// Functional API trains bitwise like the Sequential one on the same replicas;
// fit runs a subclass's train_step on every replica, whether it goes on to
// the built-in step or takes a step of its own (compute_loss and
// apply_gradients, which keep every replica's copy the same); a model of two
// inputs and two outputs trains, evaluates and predicts on two replicas as
// on one device.
#include <accel/accel.hpp>
#include <accel/autodiff/gradient_tape.hpp>
#include <accel/distribute/mirrored_strategy.hpp>
#include <accel/distribute/mirrored_variable.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/losses.hpp>

#include <gtest/gtest.h>

#include "../common/fresh_process.hpp"
#include "strategy_test_support.hpp"

#include <array>
#include <atomic>
#include <optional>

namespace accel::distribute {
namespace {

using accel::testing::in_fresh_process;
using namespace accel::distribute::testing;

constexpr int64_t kSamples = 48;

std::shared_ptr<keras::Loss> logits_loss() {
  return std::make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true});
}

// The tutorial CNN's layers on kImageSize images, as make_tutorial_cnn has them.
keras::KerasTensors functional_cnn_outputs(const keras::KerasTensor& inputs) {
  keras::KerasTensor x =
      (*std::make_shared<keras::Conv2D>(32, std::array<int32_t, 2>{3, 3}, keras::Conv2DOptions{.activation = "relu"}))(
          inputs);
  x = (*std::make_shared<keras::MaxPooling2D>(keras::Pooling2DOptions{.pool_size = {2, 2}}))(x);
  x = (*std::make_shared<keras::Flatten>())(x);
  return (*std::make_shared<keras::Dense>(10))(x);
}

class CountingModel : public keras::Model {
 public:
  using Model::Model;
  keras::Logs train_step(const Tensor& x, const Tensor& y) override {
    steps.fetch_add(1);
    return Model::train_step(x, y);
  }
  std::atomic<int> steps{0};
};

// A step written by hand, as in Keras's "customizing fit" guide: on each
// replica, compute_loss (scaled for the replicas) and apply_gradients (which
// sums the replicas' gradients).
class OwnStepModel : public keras::Model {
 public:
  using Model::Model;
  keras::Logs train_step(const Tensor& x, const Tensor& y) override {
    const std::vector<Variable> weights = trainable_weights();
    Tensor loss_value;
    std::vector<Tensor> gradients;
    {
      GradientTape tape;
      loss_value = compute_loss(x, y, (*this)(x, /*training=*/true));
      gradients = tape.gradient(loss_value, weights);
    }
    keras::GradientsAndVariables pairs;
    for (size_t index = 0; index < weights.size(); ++index) pairs.emplace_back(gradients[index], weights[index]);
    optimizer().apply_gradients(pairs);
    steps.fetch_add(1);
    return {{"own_loss", static_cast<double>(loss_value.item<float>())}};
  }
  std::atomic<int> steps{0};
};

TEST(FunctionalStrategyTest, FunctionalCnnTrainsBitwiseLikeSequentialOnTwoReplicas) {
  in_fresh_process([] {
    split_cpu(2);
    MirroredStrategy strategy(cpu_devices(2));
    const SyntheticImages data = synthetic_images(kSamples);
    const keras::FitOptions options{.epochs = 2, .batch_size = 16, .verbose = 0, .seed = 5};

    keras::clear_session();
    keras::set_random_seed(77);
    std::shared_ptr<keras::Sequential> sequential;
    {
      auto scope = strategy.scope();
      sequential = make_tutorial_cnn();
      sequential->compile(make_optimizer(OptimizerKind::kAdam), logits_loss(), {"accuracy"});
    }
    const keras::History sequential_history = sequential->fit(data.images, data.labels, options);

    keras::clear_session();
    keras::set_random_seed(77);
    std::shared_ptr<CountingModel> functional;
    {
      auto scope = strategy.scope();
      const keras::KerasTensor inputs = keras::Input({kImageSize, kImageSize, 1});
      functional = std::make_shared<CountingModel>(inputs, functional_cnn_outputs(inputs));
      functional->compile(make_optimizer(OptimizerKind::kAdam), logits_loss(), {"accuracy"});
    }
    const keras::History functional_history = functional->fit(data.images, data.labels, options);

    EXPECT_EQ(functional->steps.load(), 12);  // the override: 3 batches x 2 epochs x 2 replicas
    EXPECT_EQ(weight_values(*functional), weight_values(*sequential));
    EXPECT_EQ(functional_history.history, sequential_history.history);
    for (const Variable& weight : functional->trainable_weights()) {
      const std::vector<Tensor> copies = mirrored_copies(weight);
      ASSERT_EQ(copies.size(), 2u);
      EXPECT_EQ(copies[0].to_vector<float>(), copies[1].to_vector<float>());
    }
  });
}

TEST(FunctionalStrategyTest, AStepOfItsOwnRunsOnEveryReplicaAndKeepsTheCopiesEqual) {
  in_fresh_process([] {
    split_cpu(2);
    MirroredStrategy strategy(cpu_devices(2));
    const SyntheticImages data = synthetic_images(kSamples);
    keras::set_random_seed(3);
    std::shared_ptr<OwnStepModel> model;
    {
      auto scope = strategy.scope();
      const keras::KerasTensor inputs = keras::Input({kImageSize, kImageSize, 1});
      model = std::make_shared<OwnStepModel>(inputs, functional_cnn_outputs(inputs));
      model->compile(make_optimizer(OptimizerKind::kSgd), logits_loss());
    }
    const keras::History history = model->fit(data.images, data.labels, {.epochs = 3, .batch_size = 16, .verbose = 0});
    EXPECT_EQ(model->steps.load(), 18);  // 3 batches x 3 epochs x 2 replicas
    const std::vector<double>& losses = history.history.at("own_loss");
    ASSERT_EQ(losses.size(), 3u);
    EXPECT_LT(losses.back(), losses.front());
    for (const Variable& weight : model->trainable_weights()) {
      const std::vector<Tensor> copies = mirrored_copies(weight);
      ASSERT_EQ(copies.size(), 2u);
      EXPECT_EQ(copies[0].to_vector<float>(), copies[1].to_vector<float>()) << weight.name();
    }
  });
}

// Two inputs (an image, a vector) and two outputs, each with its loss: on
// two replicas the global batch is split, every output's loss and gradient
// scaled for the replicas, so training follows one device within rounding;
// evaluate and predict gather every output's rows.
TEST(FunctionalStrategyTest, SeveralInputsAndOutputsTrainOnTwoReplicasAsOnOneDevice) {
  in_fresh_process([] {
    split_cpu(2);
    const SyntheticImages data = synthetic_images(kSamples);
    const Tensor vectors = ops::random_uniform(Shape{kSamples, 4}, 9);
    const Tensor second_labels = ops::cast(ops::random_uniform(Shape{kSamples}, 10, 0.0, 3.0), DType::kInt32);
    const keras::FitOptions options{.epochs = 2, .batch_size = 16, .verbose = 0, .shuffle = false};
    auto build = [] {
      keras::set_random_seed(11);
      const keras::KerasTensor image = keras::Input({kImageSize, kImageSize, 1});
      const keras::KerasTensor vector = keras::Input({4});
      const keras::KerasTensor flat = (*std::make_shared<keras::Flatten>())(image);
      const keras::KerasTensor both = (*std::make_shared<keras::Concatenate>())({flat, vector});
      const keras::KerasTensor head = (*std::make_shared<keras::Dense>(10, keras::DenseOptions{.name = "head"}))(both);
      const keras::KerasTensor aux = (*std::make_shared<keras::Dense>(3, keras::DenseOptions{.name = "aux"}))(vector);
      auto model = std::make_shared<keras::Model>(keras::KerasTensors{image, vector}, keras::KerasTensors{head, aux});
      model->compile(make_optimizer(OptimizerKind::kSgd), logits_loss(), {"accuracy"});
      return model;
    };
    keras::clear_session();
    // The reference on /CPU:0, as the replicas (the default device may be an
    // emulated TPU, whose matrix unit rounds its inputs to bfloat16).
    std::optional<DeviceScope> on_cpu(std::in_place, "/CPU:0");
    std::shared_ptr<keras::Model> one_device = build();
    const keras::History reference =
        one_device->fit({data.images, vectors}, {data.labels, second_labels}, options);
    const keras::Logs reference_evaluation = one_device->evaluate({data.images, vectors}, {data.labels, second_labels},
                                                                  {.batch_size = 16, .verbose = 0});
    const std::vector<Tensor> expected_predictions =
        one_device->predict({data.images, vectors}, {.batch_size = 16, .verbose = 0});
    on_cpu.reset();

    keras::clear_session();
    MirroredStrategy strategy(cpu_devices(2));
    std::shared_ptr<keras::Model> mirrored;
    {
      auto scope = strategy.scope();
      mirrored = build();
    }
    const keras::History history = mirrored->fit({data.images, vectors}, {data.labels, second_labels}, options);
    for (const char* key : {"loss", "head_loss", "aux_loss", "head_accuracy", "aux_accuracy"}) {
      ASSERT_TRUE(history.history.contains(key)) << key;
      for (size_t epoch = 0; epoch < 2; ++epoch) {
        EXPECT_NEAR(history.history.at(key)[epoch], reference.history.at(key)[epoch], 1e-5) << key << " " << epoch;
      }
    }
    const std::vector<std::vector<float>> expected = weight_values(*one_device);
    const std::vector<std::vector<float>> trained = weight_values(*mirrored);
    ASSERT_EQ(expected.size(), trained.size());
    for (size_t index = 0; index < expected.size(); ++index) {
      for (size_t value = 0; value < expected[index].size(); ++value) {
        ASSERT_NEAR(trained[index][value], expected[index][value], 1e-5) << "weight " << index;
      }
    }
    const keras::Logs evaluation =
        mirrored->evaluate({data.images, vectors}, {data.labels, second_labels}, {.batch_size = 16, .verbose = 0});
    for (const auto& [key, value] : reference_evaluation) EXPECT_NEAR(evaluation.at(key), value, 1e-5) << key;
    const std::vector<Tensor> predictions = mirrored->predict({data.images, vectors}, {.batch_size = 16, .verbose = 0});
    ASSERT_EQ(predictions.size(), 2u);
    for (size_t output = 0; output < 2; ++output) {
      EXPECT_EQ(predictions[output].shape(), expected_predictions[output].shape());
      const std::vector<float> got = predictions[output].to_vector<float>();
      const std::vector<float> want = expected_predictions[output].to_vector<float>();
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << "output " << output;
    }
  });
}

}  // namespace
}  // namespace accel::distribute
