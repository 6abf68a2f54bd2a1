// compile(..., {.jit_compile = true, .remat = ...}): rematerialization of the
// compiled train step. A stack of Dense / GELU / LayerNormalization layers
// trains with each policy from the same weights on the same batches: the
// same losses and weights to rounding (the recomputed ops are the same ops on
// the same values, fused in other groups), recomputed ops only under full and
// minimal, and a
// lower peak under full: planned by the compiler, and measured by the CPU
// allocator over one replayed step.
#include <accel/accel.hpp>
#include <accel/config.hpp>
#include <accel/function.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/layers/layer_normalization.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/keras/sequential.hpp>

#include <gtest/gtest.h>

#include "../common/batch_losses.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

namespace accel::keras {
namespace {

constexpr int64_t kBatch = 128;
constexpr int64_t kFeatures = 64;
constexpr int64_t kWidth = 256;

struct Trained {
  std::vector<double> losses;
  std::vector<std::vector<float>> weights;
  FunctionStatistics statistics;
  uint64_t measured_peak_bytes = 0;  // the CPU allocator's peak over one replayed step
};

Trained train(RematPolicy remat) {
  DeviceScope on_cpu("/CPU:0");
  clear_session();
  set_random_seed(5);
  std::vector<std::shared_ptr<Layer>> layers;
  for (int block = 0; block < 4; ++block) {
    layers.push_back(std::make_shared<Dense>(kWidth, DenseOptions{.activation = block % 2 == 0 ? "gelu" : "tanh"}));
    layers.push_back(std::make_shared<LayerNormalization>());
  }
  layers.push_back(std::make_shared<Dense>(10));
  auto model = std::make_shared<Sequential>(layers);
  model->build({kUnknownDim, kFeatures});
  model->compile(std::make_shared<SGD>(SGDOptions{.learning_rate = 0.1}),
                 std::make_shared<SparseCategoricalCrossentropy>(CrossentropyOptions{.from_logits = true}), {},
                 {.jit_compile = true, .remat = remat});
  const Tensor x = ops::random_uniform(Shape{3 * kBatch, kFeatures}, /*seed=*/11);
  const Tensor y = ops::cast(ops::mul(ops::random_uniform(Shape{3 * kBatch}, 12), ops::fill(Shape{}, 9.99)),
                             DType::kInt32);
  auto losses = std::make_shared<testing::BatchLosses>();
  model->fit(x, y, {.batch_size = kBatch, .verbose = 0, .callbacks = {losses}, .shuffle = false});
  Trained trained;
  trained.losses = losses->losses;
  config::reset_memory_stats("/CPU:0");
  model->fit(x, y, {.batch_size = kBatch, .verbose = 0, .shuffle = false, .steps_per_epoch = 1});
  trained.measured_peak_bytes = config::get_memory_info("/CPU:0").peak;
  for (const Variable& weight : model->weights()) trained.weights.push_back(weight.value().to_vector<float>());
  trained.statistics = model->train_function()->statistics();
  EXPECT_EQ(trained.statistics.eager_reason, "");
  return trained;
}

const std::map<RematPolicy, Trained>& trained_with_each_policy() {
  static const std::map<RematPolicy, Trained> trained = {{RematPolicy::kNone, train(RematPolicy::kNone)},
                                                         {RematPolicy::kFull, train(RematPolicy::kFull)},
                                                         {RematPolicy::kMinimal, train(RematPolicy::kMinimal)}};
  return trained;
}

TEST(Remat, EveryPolicyTrainsToTheSameLossesAndWeights) {
  const Trained& reference = trained_with_each_policy().at(RematPolicy::kNone);
  ASSERT_EQ(reference.losses.size(), 3u);
  for (RematPolicy policy : {RematPolicy::kFull, RematPolicy::kMinimal}) {
    SCOPED_TRACE(remat_policy_name(policy));
    const Trained& trained = trained_with_each_policy().at(policy);
    ASSERT_EQ(trained.losses.size(), reference.losses.size());
    for (size_t step = 0; step < reference.losses.size(); ++step) {
      EXPECT_NEAR(trained.losses[step], reference.losses[step], 1e-6 * std::abs(reference.losses[step])) << step;
    }
    ASSERT_EQ(trained.weights.size(), reference.weights.size());
    for (size_t index = 0; index < reference.weights.size(); ++index) {
      ASSERT_EQ(trained.weights[index].size(), reference.weights[index].size());
      float largest = 0;
      for (float weight : reference.weights[index]) largest = std::max(largest, std::abs(weight));
      for (size_t element = 0; element < reference.weights[index].size(); ++element) {
        ASSERT_NEAR(trained.weights[index][element], reference.weights[index][element], 1e-5f * largest)
            << "weight " << index << " element " << element;
      }
    }
  }
}

TEST(Remat, OnlyFullAndMinimalRecomputeAndMinimalKeepsTheMatmuls) {
  const auto& trained = trained_with_each_policy();
  EXPECT_EQ(trained.at(RematPolicy::kNone).statistics.ops_recomputed, 0);
  EXPECT_GT(trained.at(RematPolicy::kFull).statistics.ops_recomputed, 0);
  EXPECT_GT(trained.at(RematPolicy::kMinimal).statistics.ops_recomputed, 0);
  EXPECT_LT(trained.at(RematPolicy::kMinimal).statistics.ops_recomputed,
            trained.at(RematPolicy::kFull).statistics.ops_recomputed);
}

TEST(Remat, FullLowersThePeakPlannedAndMeasuredByTheAllocator) {
  const auto& trained = trained_with_each_policy();
  const Trained& none = trained.at(RematPolicy::kNone);
  const Trained& full = trained.at(RematPolicy::kFull);
  // Eight activations of 128 x 256 floats (128 KiB each) live across the
  // step without remat; with it, about one layer's at a time.
  EXPECT_LT(full.statistics.planned_peak_bytes + 4 * kBatch * kWidth * sizeof(float),
            none.statistics.planned_peak_bytes)
      << "full " << full.statistics.planned_peak_bytes << ", none " << none.statistics.planned_peak_bytes;
  EXPECT_LT(full.measured_peak_bytes, none.measured_peak_bytes)
      << "full " << full.measured_peak_bytes << ", none " << none.measured_peak_bytes;
  EXPECT_LE(trained.at(RematPolicy::kMinimal).statistics.planned_peak_bytes, none.statistics.planned_peak_bytes);
}

}  // namespace
}  // namespace accel::keras
