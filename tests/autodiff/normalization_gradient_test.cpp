// Batch normalization's gradients: the fused BATCH_NORM (features last, which
// the CPU plugin claims) and the primitive ops it stands for elsewhere, against
// finite differences and against each other, including gradients that reach
// the batch statistics themselves.
#include "gradient_check.hpp"

#include <accel/error.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace accel {
namespace {

using testing::expect_gradients_match_finite_differences;
using testing::random_input;

// y, plus the statistics broadcast back over the rows, so that every output's
// gradient path is checked.
Tensor normalized_and_statistics(const std::vector<Tensor>& in, int32_t axis) {
  const ops::BatchNormResult result = ops::batch_norm(in[0], in[1], in[2], 1e-3, axis);
  std::vector<int64_t> kept(static_cast<size_t>(in[0].rank()), 1);
  const int32_t resolved = axis < 0 ? axis + in[0].rank() : axis;
  kept[static_cast<size_t>(resolved)] = in[0].shape()[resolved];
  const Tensor statistics = ops::add(ops::mul(result.mean, ops::fill({}, 0.5)), ops::mul(result.variance, result.variance));
  return ops::add(result.y, statistics.reshape(Shape(kept)));
}

TEST(BatchNormGradient, FusedMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return ops::batch_norm(in[0], in[1], in[2], 1e-3).y; },
      {random_input({3, 2, 2, 5}, 81, 0.5f, 3.0f), random_input({5}, 82, 0.5f, 2.0f), random_input({5}, 83)});
}

TEST(BatchNormGradient, ThroughTheStatisticsMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return normalized_and_statistics(in, -1); },
      {random_input({6, 4}, 84, -1.0f, 2.0f), random_input({4}, 85, 0.5f, 2.0f), random_input({4}, 86)});
}

TEST(BatchNormGradient, ComposedOnAnotherAxisMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& in) { return normalized_and_statistics(in, 1); },
      {random_input({3, 4, 2, 2}, 87, -1.0f, 2.0f), random_input({4}, 88, 0.5f, 2.0f), random_input({4}, 89)});
}

void expect_near(const Tensor& got, const Tensor& want, double tolerance, const char* what) {
  const std::vector<float> a = got.to_vector<float>(), b = want.to_vector<float>();
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], tolerance * (1.0 + std::fabs(b[i]))) << what << " element " << i;
  }
}

// The fused op on x [rows, features] and the primitive ops on its transpose
// [features, rows] (features first, which the fused op does not take) agree,
// and so do their gradients.
TEST(BatchNormGradient, FusedAndComposedAgree) {
  const Tensor x = ops::random_uniform(Shape{300, 7}, 90, -2.0, 5.0);
  const Tensor x_features_first = ops::transpose(x);
  const Tensor scale = ops::random_uniform(Shape{7}, 91, 0.5, 2.0);
  const Tensor offset = ops::random_uniform(Shape{7}, 92, -1.0, 1.0);
  const Tensor weights = ops::random_uniform(Shape{300, 7}, 93, -1.0, 1.0);

  GradientTape fused_tape;
  for (const Tensor& watched : {x, scale, offset}) fused_tape.watch(watched);
  const ops::BatchNormResult fused = ops::batch_norm(x, scale, offset, 1e-3);
  const Tensor fused_loss = ops::reduce_sum(ops::mul(fused.y, weights));
  const std::vector<Tensor> fused_gradients = fused_tape.gradient(fused_loss, {x, scale, offset});

  GradientTape composed_tape;
  for (const Tensor& watched : {x_features_first, scale, offset}) composed_tape.watch(watched);
  const ops::BatchNormResult composed = ops::batch_norm(x_features_first, scale, offset, 1e-3, /*axis=*/0);
  const Tensor composed_loss = ops::reduce_sum(ops::mul(composed.y, ops::transpose(weights)));
  const std::vector<Tensor> composed_gradients =
      composed_tape.gradient(composed_loss, {x_features_first, scale, offset});

  expect_near(fused.y, ops::transpose(composed.y), 1e-5, "y");
  expect_near(fused.mean, composed.mean, 1e-5, "mean");
  expect_near(fused.variance, composed.variance, 1e-5, "variance");
  expect_near(fused_gradients[0], ops::transpose(composed_gradients[0]), 1e-4, "dx");
  expect_near(fused_gradients[1], composed_gradients[1], 1e-4, "dscale");
  expect_near(fused_gradients[2], composed_gradients[2], 1e-4, "doffset");
}

// A bfloat16 x with float32 scale and offset (FusedBatchNormV3's T and U,
// plugin API 1.7): one op that gives exactly the bits of the casts around the
// float32 op, forward and backward, with float32 statistics and their gradients.
TEST(BatchNormGradient, MixedPrecisionEqualsTheCastsAroundTheFloat32OpBitwise) {
  const Tensor x = ops::cast(ops::random_uniform(Shape{64, 6, 6, 12}, 94, -2.0, 5.0), DType::kBFloat16);
  const Tensor scale = ops::random_uniform(Shape{12}, 95, 0.5, 2.0);
  const Tensor offset = ops::random_uniform(Shape{12}, 96, -1.0, 1.0);
  const Tensor weights = ops::cast(ops::random_uniform(Shape{64, 6, 6, 12}, 97, -1.0, 1.0), DType::kBFloat16);
  auto run = [&](bool mixed) {
    GradientTape tape;
    for (const Tensor& watched : {x, scale, offset}) tape.watch(watched);
    ops::BatchNormResult result;
    if (mixed) {
      result = ops::batch_norm(x, scale, offset, 1e-3);
    } else {
      result = ops::batch_norm(ops::cast(x, DType::kFloat32), scale, offset, 1e-3);
      result.y = ops::cast(result.y, DType::kBFloat16);
    }
    const Tensor loss = ops::reduce_sum(ops::cast(ops::mul(result.y, weights), DType::kFloat32));
    std::vector<Tensor> out = tape.gradient(loss, {x, scale, offset});
    out.insert(out.begin(), {result.y, result.mean, result.variance});
    return out;
  };
  const std::vector<Tensor> mixed = run(true), casts = run(false);
  EXPECT_EQ(mixed[0].dtype(), DType::kBFloat16);
  EXPECT_EQ(mixed[1].dtype(), DType::kFloat32);
  EXPECT_EQ(mixed[3].dtype(), DType::kBFloat16);  // dx
  EXPECT_EQ(mixed[4].dtype(), DType::kFloat32);   // dscale
  const char* names[] = {"y", "mean", "variance", "dx", "dscale", "doffset"};
  for (size_t index = 0; index < mixed.size(); ++index) {
    expect_near(ops::cast(mixed[index], DType::kFloat32), ops::cast(casts[index], DType::kFloat32), 0.0, names[index]);
  }
  // bfloat16 scale with a float32 x is refused, naming what was expected.
  try {
    ops::batch_norm(ops::cast(x, DType::kFloat32), ops::cast(scale, DType::kBFloat16), offset, 1e-3);
    FAIL() << "a bfloat16 scale beside a float32 x was accepted";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("expected float32[12]"), std::string::npos) << error.what();
  }
}

TEST(BatchNorm, NamesWhatIsWrong) {
  const Tensor x = ops::zeros(Shape{4, 3});
  try {
    ops::batch_norm(x, ops::ones(Shape{4}), ops::zeros(Shape{3}), 1e-3);
    FAIL() << "a scale of the wrong length was accepted";
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("FusedBatchNormV3: expected float32[3]"), std::string::npos) << error.what();
  }
  EXPECT_THROW(ops::batch_norm(x, ops::ones(Shape{3}), ops::zeros(Shape{3}), 0.0), InvalidArgumentError);
  EXPECT_THROW(ops::batch_norm(x, ops::ones(Shape{3}), ops::zeros(Shape{3}), 1e-3, 2), InvalidArgumentError);
}

}  // namespace
}  // namespace accel
