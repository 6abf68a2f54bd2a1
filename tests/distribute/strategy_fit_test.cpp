// Keras training under a strategy (accel/keras/distributed_training.hpp):
// a model compiled in MirroredStrategy's scope trains through fit on every
// replica and ends with the weights, loss and metrics of one replica on the
// same global batches; evaluate and predict split and gather the same way;
// uneven last batches, a model built outside the scope, BatchNormalization's
// sync-on-read statistics and the default strategy behave as in Keras.
#include <accel/accel.hpp>
#include <accel/distribute/mirrored_strategy.hpp>
#include <accel/distribute/mirrored_variable.hpp>
#include <accel/distribute/one_device_strategy.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers.hpp>

#include <gtest/gtest.h>

#include "../common/fresh_process.hpp"
#include "strategy_test_support.hpp"

#include <cmath>
#include <cstdio>

namespace accel::distribute {
namespace {

using accel::testing::in_fresh_process;
using namespace accel::distribute::testing;

constexpr int64_t kSamples = 96;
constexpr int64_t kGlobalBatch = 16;

struct FitResult {
  WeightValues weights;
  keras::History history;
  keras::Logs evaluation;
  std::vector<float> predictions;
};

std::shared_ptr<keras::Sequential> compiled_cnn(Strategy& strategy, OptimizerKind kind) {
  keras::set_random_seed(77);
  auto scope = strategy.scope();
  auto model = make_tutorial_cnn();
  model->compile(make_optimizer(kind), std::make_shared<keras::SparseCategoricalCrossentropy>(
                                           keras::CrossentropyOptions{.from_logits = true}),
                 {"accuracy"});
  return model;
}

FitResult fit_and_evaluate(Strategy& strategy, OptimizerKind kind, int64_t batch_size = kGlobalBatch) {
  auto model = compiled_cnn(strategy, kind);
  EXPECT_EQ(model->distribute_strategy(), static_cast<keras::DistributedTraining*>(&strategy));
  const SyntheticImages data = synthetic_images(kSamples);
  FitResult result;
  result.history = model->fit(data.images, data.labels,
                              {.epochs = 2, .batch_size = batch_size, .verbose = 0, .seed = 5});
  result.weights = weight_values(*model);
  for (const Variable& weight : model->trainable_weights()) {
    // Every replica's copy saw the same summed gradients.
    const std::vector<Tensor> copies = mirrored_copies(weight);
    for (const Tensor& copy : copies) EXPECT_EQ(copy.to_vector<float>(), copies.front().to_vector<float>());
  }
  result.evaluation = model->evaluate(data.images, data.labels, {.batch_size = batch_size, .verbose = 0});
  result.predictions = model->predict(data.images, {.batch_size = batch_size, .verbose = 0}).to_vector<float>();
  return result;
}

void expect_same_training(const FitResult& replicated, const FitResult& single, const char* what) {
  const double difference = worst_relative_difference(replicated.weights, single.weights);
  std::fprintf(stderr, "%s: worst relative weight difference %.3g\n", what, difference);
  EXPECT_LE(difference, 1e-5) << what;
  for (const char* metric : {"loss", "accuracy"}) {
    const auto& a = replicated.history.history.at(metric);
    const auto& b = single.history.history.at(metric);
    ASSERT_EQ(a.size(), b.size());
    for (size_t epoch = 0; epoch < a.size(); ++epoch) EXPECT_NEAR(a[epoch], b[epoch], 1e-5) << what << " " << metric;
  }
  EXPECT_NEAR(replicated.evaluation.at("loss"), single.evaluation.at("loss"), 1e-5) << what;
  EXPECT_NEAR(replicated.evaluation.at("accuracy"), single.evaluation.at("accuracy"), 1e-9) << what;
  ASSERT_EQ(replicated.predictions.size(), single.predictions.size());
  for (size_t i = 0; i < single.predictions.size(); ++i) {
    ASSERT_NEAR(replicated.predictions[i], single.predictions[i], 1e-4) << what << " prediction " << i;
  }
}

TEST(StrategyFitTest, FitEvaluateAndPredictOnTwoAndFourReplicasMatchOneReplica) {
  in_fresh_process([] {
    split_cpu(4);
    OneDeviceStrategy one_device("/CPU:0");
    const FitResult single = fit_and_evaluate(one_device, OptimizerKind::kSgd);
    EXPECT_LT(single.history.history.at("loss").back(), single.history.history.at("loss").front());
    for (int replicas : {2, 4}) {
      MirroredStrategy mirrored(cpu_devices(replicas));
      expect_same_training(fit_and_evaluate(mirrored, OptimizerKind::kSgd), single,
                           replicas == 2 ? "2 replicas" : "4 replicas");
    }
  });
}

TEST(StrategyFitTest, AdamWithRingAllReduceMatchesOneReplica) {
  in_fresh_process([] {
    split_cpu(2);
    OneDeviceStrategy one_device("/CPU:0");
    const FitResult single = fit_and_evaluate(one_device, OptimizerKind::kAdam);
    MirroredStrategy mirrored(cpu_devices(2), std::make_shared<HostRingAllReduce>());
    expect_same_training(fit_and_evaluate(mirrored, OptimizerKind::kAdam), single, "adam, ring");
  });
}

TEST(StrategyFitTest, WithoutAStrategyFitMatchesOneDeviceStrategy) {
  in_fresh_process([] {
    split_cpu(2);
    OneDeviceStrategy one_device("/CPU:0");
    const FitResult single = fit_and_evaluate(one_device, OptimizerKind::kSgd);
    FitResult plain;
    {
      keras::set_random_seed(77);
      auto model = make_tutorial_cnn();
      model->compile(make_optimizer(OptimizerKind::kSgd),
                     std::make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true}),
                     {"accuracy"});
      EXPECT_EQ(model->distribute_strategy(), nullptr);
      const SyntheticImages data = synthetic_images(kSamples);
      plain.history = model->fit(data.images, data.labels, {.epochs = 2, .batch_size = kGlobalBatch, .verbose = 0, .seed = 5});
      plain.weights = weight_values(*model);
      plain.evaluation = model->evaluate(data.images, data.labels, {.batch_size = kGlobalBatch, .verbose = 0});
      plain.predictions = model->predict(data.images, {.batch_size = kGlobalBatch, .verbose = 0}).to_vector<float>();
    }
    expect_same_training(single, plain, "one device vs no strategy");
  });
}

// 3 replicas and batches of 4 rows: 2, 1, 1 rows, and a last batch of 2 rows
// split 1, 1, 0: the empty replica still takes part in the all-reduce.
TEST(StrategyFitTest, UnevenBatchesWithAnEmptyReplicaTrain) {
  in_fresh_process([] {
    split_cpu(3);
    MirroredStrategy strategy(cpu_devices(3));
    auto model = compiled_cnn(strategy, OptimizerKind::kSgd);
    const SyntheticImages data = synthetic_images(10);
    const keras::History history = model->fit(data.images, data.labels, {.batch_size = 4, .verbose = 0, .shuffle = false});
    EXPECT_TRUE(std::isfinite(history.history.at("loss").front()));
    EXPECT_EQ(model->optimizer().iterations(), 3);
    EXPECT_EQ(model->predict(data.images, {.batch_size = 4, .verbose = 0}).shape(), (Shape{10, 10}));
  });
}

TEST(StrategyFitTest, CompilingInScopeAModelBuiltOutsideItFails) {
  in_fresh_process([] {
    split_cpu(2);
    MirroredStrategy strategy(cpu_devices(2));
    auto model = make_tutorial_cnn();  // built outside the scope: one copy per weight
    auto scope = strategy.scope();
    try {
      model->compile("sgd", "sparse_categorical_crossentropy");
      ADD_FAILURE() << "expected an error";
    } catch (const InvalidArgumentError& error) {
      EXPECT_NE(std::string(error.what()).find("was not created in the scope of MirroredStrategy"), std::string::npos)
          << error.what();
    }
  });
}

// BatchNormalization's moving statistics are sync-on-read: each replica
// updates its own copy from its own rows, and a read outside the replicas
// (what saving sees) is their mean.
TEST(StrategyFitTest, BatchNormalizationStatisticsAreKeptPerReplicaAndReadAsTheirMean) {
  in_fresh_process([] {
    split_cpu(2);
    MirroredStrategy strategy(cpu_devices(2));
    std::shared_ptr<keras::Sequential> model;
    {
      auto scope = strategy.scope();
      model = std::make_shared<keras::Sequential>(std::vector<std::shared_ptr<keras::Layer>>{
          std::make_shared<keras::BatchNormalization>(), std::make_shared<keras::Dense>(2)});
      model->build({keras::kUnknownDim, 3});
      model->compile("sgd", "mse");
    }
    // Replica 0 gets rows of ones, replica 1 rows of threes.
    const Tensor x = Tensor::from_vector<float>({1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3}, Shape{4, 3});
    model->fit(x, ops::zeros(Shape{4, 2}), {.batch_size = 4, .verbose = 0, .shuffle = false});
    Variable moving_mean;
    for (const Variable& weight : model->weights()) {
      if (weight.name().find("moving_mean") != std::string::npos) moving_mean = weight;
    }
    ASSERT_TRUE(moving_mean.defined());
    EXPECT_EQ(moving_mean.synchronization(), VariableSynchronization::kOnRead);
    const std::vector<Tensor> copies = mirrored_copies(moving_mean);
    ASSERT_EQ(copies.size(), 2u);
    // momentum 0.99: 0.01 of the batch mean.
    EXPECT_NEAR(copies[0].to_vector<float>()[0], 0.01f, 1e-6);
    EXPECT_NEAR(copies[1].to_vector<float>()[0], 0.03f, 1e-6);
    EXPECT_NEAR(moving_mean.value().to_vector<float>()[0], 0.02f, 1e-6);
  });
}

}  // namespace
}  // namespace accel::distribute
