// The equivalence check of data parallelism: the tutorial CNN (Conv2D 32 3x3
// relu -> MaxPooling2D 2 -> Flatten -> Dense 10) trained for 50 steps with a
// custom loop (strategy.run + GradientTape + compute_average_loss +
// optimizer.apply_gradients) on global batch B ends with the same weights on
// N = 2 and 4 mirrored replicas (logical CPU devices) as on one replica with
// batch B, within 1e-5 relative, for SGD and Adam and both cross-device ops.
// Synthetic 8x8 images keep each case to a few seconds.
#include <accel/accel.hpp>
#include <accel/autodiff/gradient_tape.hpp>
#include <accel/distribute/compute_average_loss.hpp>
#include <accel/distribute/mirrored_strategy.hpp>
#include <accel/distribute/mirrored_variable.hpp>
#include <accel/distribute/one_device_strategy.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/keras/sequential.hpp>

#include <gtest/gtest.h>

#include "../common/fresh_process.hpp"
#include "strategy_test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace accel::distribute {
namespace {

constexpr int kSteps = 50;
constexpr int64_t kGlobalBatch = 8;
constexpr double kRelativeTolerance = 1e-5;

using accel::testing::in_fresh_process;
using namespace accel::distribute::testing;

struct TrainedWeights {
  WeightValues values;  // replica 0's copy of each weight
  float last_loss = 0;
};

TrainedWeights train(Strategy& strategy, OptimizerKind kind) {
  keras::set_random_seed(1234);
  std::shared_ptr<keras::Sequential> model;
  std::shared_ptr<keras::Optimizer> optimizer;
  {
    auto scope = strategy.scope();
    model = make_tutorial_cnn();
    optimizer = make_optimizer(kind);
  }
  const keras::SparseCategoricalCrossentropy per_example_loss(
      keras::CrossentropyOptions{.from_logits = true, .reduction = keras::Reduction::kNone});
  const std::vector<Variable> weights = model->trainable_weights();
  TrainedWeights trained;
  for (const PerReplica<data::Element>& inputs :
       strategy.experimental_distribute_dataset(synthetic_image_dataset(kSteps * kGlobalBatch).batch(kGlobalBatch))) {
    PerReplica<Tensor> losses = strategy.run(
        [&](ReplicaContext&, const data::Element& batch) {
          GradientTape tape;
          const Tensor logits = (*model)(batch[0], /*training=*/true);
          const Tensor loss = compute_average_loss(per_example_loss.call(batch[1], logits), kGlobalBatch);
          const std::vector<Tensor> gradients = tape.gradient(loss, weights);
          keras::GradientsAndVariables pairs;
          for (size_t index = 0; index < weights.size(); ++index) pairs.emplace_back(gradients[index], weights[index]);
          optimizer->apply_gradients(pairs);
          return loss;
        },
        inputs);
    trained.last_loss = strategy.reduce(ReduceOp::kSum, losses).item<float>();
  }
  EXPECT_EQ(optimizer->iterations(), kSteps);
  for (const Variable& weight : weights) {
    // The copies of a mirrored variable never diverge.
    const std::vector<Tensor> copies = mirrored_copies(weight);
    for (const Tensor& copy : copies) EXPECT_EQ(copy.to_vector<float>(), copies.front().to_vector<float>());
    trained.values.push_back(copies.front().to_vector<float>());
  }
  return trained;
}

void expect_replicas_match_one_replica(OptimizerKind kind, std::shared_ptr<CrossDeviceOps> cross_device_ops) {
  split_cpu(4);
  OneDeviceStrategy one_replica("/CPU:0");
  const TrainedWeights single = train(one_replica, kind);
  for (int replicas : {2, 4}) {
    MirroredStrategy mirrored(cpu_devices(replicas), cross_device_ops);
    const TrainedWeights replicated = train(mirrored, kind);
    const double difference = worst_relative_difference(replicated.values, single.values);
    std::fprintf(stderr, "%s, %d replicas: worst relative weight difference %.3g (loss %.5f vs %.5f)\n",
                 cross_device_ops->name().c_str(), replicas, difference, replicated.last_loss, single.last_loss);
    EXPECT_LE(difference, kRelativeTolerance) << replicas << " replicas";
    EXPECT_NEAR(replicated.last_loss, single.last_loss, 1e-4 * std::abs(single.last_loss));
  }
}

TEST(StrategyEquivalenceTest, SgdOnTwoAndFourReplicasMatchesOneReplica) {
  in_fresh_process([] { expect_replicas_match_one_replica(OptimizerKind::kSgd, std::make_shared<ReductionToOneDevice>()); });
}

TEST(StrategyEquivalenceTest, AdamOnTwoAndFourReplicasMatchesOneReplica) {
  in_fresh_process([] { expect_replicas_match_one_replica(OptimizerKind::kAdam, std::make_shared<ReductionToOneDevice>()); });
}

TEST(StrategyEquivalenceTest, SgdWithRingAllReduceMatchesOneReplica) {
  in_fresh_process([] { expect_replicas_match_one_replica(OptimizerKind::kSgd, std::make_shared<HostRingAllReduce>()); });
}

}  // namespace
}  // namespace accel::distribute
