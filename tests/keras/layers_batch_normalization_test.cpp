// BatchNormalization: Keras's weights and defaults, training with batch
// statistics (biased variance), moving statistics after two training calls
// against hand-computed values, inference with moving statistics, a frozen
// layer in inference mode, another feature axis, and gradients through the
// batch statistics against finite differences.
#include "layer_gradient_check.hpp"

#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/ops.hpp>
#include <accel/profiler.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace accel::keras {
namespace {

class BatchNormalizationTest : public ::testing::Test {
 protected:
  void SetUp() override { clear_session(); }
};

void expect_near_all(const std::vector<float>& actual, const std::vector<double>& expected, double tolerance = 1e-5) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

TEST_F(BatchNormalizationTest, WeightsHaveKerasNamesOrderAndInitialValues) {
  BatchNormalization layer;
  layer.build({kUnknownDim, 6, 6, 4});
  const std::vector<Variable> weights = layer.weights();
  ASSERT_EQ(weights.size(), 4u);
  EXPECT_EQ(weights[0].name(), "batch_normalization/gamma:0");
  EXPECT_EQ(weights[1].name(), "batch_normalization/beta:0");
  EXPECT_EQ(weights[2].name(), "batch_normalization/moving_mean:0");
  EXPECT_EQ(weights[3].name(), "batch_normalization/moving_variance:0");
  for (const Variable& weight : weights) EXPECT_EQ(weight.shape(), (Shape{4}));
  ASSERT_EQ(layer.trainable_weights().size(), 2u);
  ASSERT_EQ(layer.non_trainable_weights().size(), 2u);
  EXPECT_EQ(layer.non_trainable_weights()[0].name(), "batch_normalization/moving_mean:0");
  EXPECT_EQ(layer.count_params(), 16);
  EXPECT_EQ(layer.gamma().value().to_vector<float>(), std::vector<float>(4, 1.0f));
  EXPECT_EQ(layer.beta().value().to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(layer.moving_mean().value().to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(layer.moving_variance().value().to_vector<float>(), std::vector<float>(4, 1.0f));

  BatchNormalization bare({.center = false, .scale = false});
  bare.build({kUnknownDim, 3});
  EXPECT_EQ(bare.name(), "batch_normalization_1");
  EXPECT_EQ(bare.weights().size(), 2u);
  EXPECT_TRUE(bare.trainable_weights().empty());
}

TEST_F(BatchNormalizationTest, InferenceUsesTheMovingStatistics) {
  // Fresh layer: moving mean 0, variance 1, so y = x / sqrt(1 + 0.001).
  BatchNormalization layer;
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 6}, Shape{2, 2});
  const double divisor = std::sqrt(1.001);
  expect_near_all(layer(x).to_vector<float>(), {1 / divisor, 2 / divisor, 3 / divisor, 6 / divisor});
  EXPECT_EQ(layer.moving_mean().value().to_vector<float>(), (std::vector<float>{0, 0}));  // untouched
}

TEST_F(BatchNormalizationTest, TwoTrainingCallsMoveTheStatisticsAsKerasDoes) {
  BatchNormalization layer;
  // First batch: feature means (2, 4), biased variances (1, 4).
  const Tensor first = Tensor::from_vector<float>({1, 2, 3, 6}, Shape{2, 2});
  const double e = 1e-3;
  expect_near_all(layer(first, /*training=*/true).to_vector<float>(),
                  {-1 / std::sqrt(1 + e), -2 / std::sqrt(4 + e), 1 / std::sqrt(1 + e), 2 / std::sqrt(4 + e)});
  // moving = moving * 0.99 + batch * 0.01: mean (0.02, 0.04), variance (1.0, 1.03).
  expect_near_all(layer.moving_mean().value().to_vector<float>(), {0.02, 0.04});
  expect_near_all(layer.moving_variance().value().to_vector<float>(), {1.0, 1.03});

  // Second batch: means (2, 3), biased variances (4, 4).
  const Tensor second = Tensor::from_vector<float>({0, 1, 4, 5}, Shape{2, 2});
  layer(second, /*training=*/true);
  // mean: (0.02 * 0.99 + 0.02, 0.04 * 0.99 + 0.03); variance: (1.0 * 0.99 + 0.04, 1.03 * 0.99 + 0.04).
  expect_near_all(layer.moving_mean().value().to_vector<float>(), {0.0398, 0.0696});
  expect_near_all(layer.moving_variance().value().to_vector<float>(), {1.03, 1.0597});

  // Inference now normalizes with those.
  expect_near_all(layer(second).to_vector<float>(),
                  {(0 - 0.0398) / std::sqrt(1.03 + e), (1 - 0.0696) / std::sqrt(1.0597 + e),
                   (4 - 0.0398) / std::sqrt(1.03 + e), (5 - 0.0696) / std::sqrt(1.0597 + e)});
}

TEST_F(BatchNormalizationTest, GammaAndBetaScaleAndShift) {
  BatchNormalization layer({.momentum = 0.5, .epsilon = 0.01});
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 6}, Shape{2, 2});
  layer.build({kUnknownDim, 2});
  testing::assign_weight(layer.gamma(), Tensor::from_vector<float>({2, 3}, Shape{2}));
  testing::assign_weight(layer.beta(), Tensor::from_vector<float>({10, 20}, Shape{2}));
  expect_near_all(layer(x, true).to_vector<float>(),
                  {10 - 2 / std::sqrt(1.01), 20 - 6 / std::sqrt(4.01), 10 + 2 / std::sqrt(1.01),
                   20 + 6 / std::sqrt(4.01)});
  // momentum 0.5: halfway from (0, 0) / (1, 1) to the batch's (2, 4) / (1, 4).
  expect_near_all(layer.moving_mean().value().to_vector<float>(), {1.0, 2.0});
  expect_near_all(layer.moving_variance().value().to_vector<float>(), {1.0, 2.5});
}

TEST_F(BatchNormalizationTest, FrozenLayerRunsInInferenceMode) {
  BatchNormalization layer;
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 6}, Shape{2, 2});
  layer.build({kUnknownDim, 2});
  layer.set_trainable(false);
  const double divisor = std::sqrt(1.001);
  expect_near_all(layer(x, /*training=*/true).to_vector<float>(), {1 / divisor, 2 / divisor, 3 / divisor, 6 / divisor});
  EXPECT_EQ(layer.moving_mean().value().to_vector<float>(), (std::vector<float>{0, 0}));
  EXPECT_EQ(layer.non_trainable_weights().size(), 4u);
}

TEST_F(BatchNormalizationTest, ImagesNormalizeEachChannelOverBatchAndSpace) {
  // Channels last (axis -1) and channels first (axis 1) on the same numbers
  // must give the same per-channel statistics.
  const Tensor nhwc = testing::random_tensor({2, 3, 3, 2}, 11, 0.0f, 4.0f);
  BatchNormalization channels_last;
  const Tensor y_last = channels_last(nhwc, true);
  BatchNormalization channels_first({.axis = 1});
  const Tensor y_first = channels_first(ops::transpose(nhwc, {0, 3, 1, 2}), true);
  EXPECT_EQ(channels_first.gamma().shape(), (Shape{2}));
  const std::vector<float> last_values = y_last.to_vector<float>();
  expect_near_all(ops::transpose(y_first, {0, 2, 3, 1}).to_vector<float>(),
                  std::vector<double>(last_values.begin(), last_values.end()));

  // Each channel's output has mean 0 and biased variance var / (var + eps).
  const std::vector<float> x = nhwc.to_vector<float>(), y = y_last.to_vector<float>();
  for (int c = 0; c < 2; ++c) {
    double mean = 0, square = 0, out_mean = 0;
    for (size_t i = static_cast<size_t>(c); i < x.size(); i += 2) mean += x[i] / 18.0, out_mean += y[i] / 18.0;
    for (size_t i = static_cast<size_t>(c); i < x.size(); i += 2) square += (x[i] - mean) * (x[i] - mean) / 18.0;
    EXPECT_NEAR(out_mean, 0.0, 1e-5);
    EXPECT_NEAR(channels_last.moving_mean().value().to_vector<float>()[static_cast<size_t>(c)], 0.01 * mean, 1e-6);
    // The moving variance takes the unbiased variance (18 / 17 of the biased), as
    // Keras's fused kernel does for 4-D inputs.
    EXPECT_NEAR(channels_last.moving_variance().value().to_vector<float>()[static_cast<size_t>(c)],
                0.99 + 0.01 * square * 18.0 / 17.0, 1e-6);
  }
}

// Features last on a device that claims it (the CPU): one FusedBatchNormV3,
// as Keras 2's fused kernel, not the dozen primitive ops it stands for.
TEST_F(BatchNormalizationTest, TrainingWithFeaturesLastRunsTheFusedOp) {
  BatchNormalization layer;
  const Tensor x = testing::random_tensor({4, 5, 5, 3}, 17);
  layer.build({kUnknownDim, 5, 5, 3});
  profiler::start();
  GradientTape tape;
  tape.watch(x);
  const Tensor y = layer(x, /*training=*/true);
  tape.gradient(ops::reduce_sum(y), {x});
  profiler::stop();
  int fused = 0, gradients = 0, means = 0;
  for (const profiler::OpRecord& record : profiler::records()) {
    fused += record.op == "FusedBatchNormV3 (BATCH_NORM)" ? 1 : 0;
    gradients += record.op == "FusedBatchNormGradV3 (BATCH_NORM_BACKWARD)" ? 1 : 0;
    means += record.op == "Mean (REDUCE_MEAN)" ? 1 : 0;
  }
  EXPECT_EQ(fused, 1);
  EXPECT_EQ(gradients, 1);
  EXPECT_EQ(means, 0);
}

TEST_F(BatchNormalizationTest, RejectsABadAxis) {
  BatchNormalization layer({.axis = 3});
  EXPECT_THROW(layer.build({kUnknownDim, 4}), InvalidArgumentError);
}

TEST_F(BatchNormalizationTest, TrainingGradientsFlowThroughTheBatchStatistics) {
  BatchNormalization layer;
  const Tensor x = testing::random_tensor({5, 3}, 12);
  layer.build({kUnknownDim, 3});
  testing::assign_weight(layer.gamma(), testing::random_tensor({3}, 13, 0.5f, 1.5f));
  testing::assign_weight(layer.beta(), testing::random_tensor({3}, 14));
  testing::expect_layer_gradients_match_finite_differences(
      [&](const Tensor& input) { return layer(input, /*training=*/true); }, x, {layer.gamma(), layer.beta()},
      {.epsilon = 1e-3f});

  BatchNormalization image_layer;
  testing::expect_layer_gradients_match_finite_differences(
      [&](const Tensor& input) { return image_layer(input, /*training=*/true); },
      testing::random_tensor({2, 3, 2, 2}, 15), {}, {.epsilon = 1e-3f});
}

TEST_F(BatchNormalizationTest, InferenceGradients) {
  BatchNormalization layer;
  const Tensor x = testing::random_tensor({4, 3}, 16);
  layer(x, true);  // builds and moves the statistics away from 0 / 1
  testing::expect_layer_gradients_match_finite_differences([&](const Tensor& input) { return layer(input); }, x,
                                                           {layer.gamma(), layer.beta()});
}

}  // namespace
}  // namespace accel::keras
