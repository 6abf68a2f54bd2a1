// Gradients of matmul, conv2d, pooling and the conv/pool backward ops against
// finite differences.
#include "gradient_check.hpp"

#include <accel/error.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace accel {
namespace {

using testing::expect_gradients_match_finite_differences;
using testing::random_input;

struct MatmulCase {
  bool transpose_a;
  bool transpose_b;
};

class MatmulGradient : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(MatmulGradient, MatchesFiniteDifferences) {
  // Lambdas capture the bindings by init-capture: clang 14 (the sanitizer builds) cannot capture them.
  const auto [transpose_a, transpose_b] = GetParam();
  const Shape a_shape = transpose_a ? Shape{4, 3} : Shape{3, 4};
  const Shape b_shape = transpose_b ? Shape{2, 4} : Shape{4, 2};
  expect_gradients_match_finite_differences(
      [transpose_a = transpose_a, transpose_b = transpose_b](const std::vector<Tensor>& x) {
        return ops::matmul(x[0], x[1], transpose_a, transpose_b);
      },
      {random_input(a_shape, 1), random_input(b_shape, 2)});
}

TEST_P(MatmulGradient, BatchedMatchesFiniteDifferences) {
  const auto [transpose_a, transpose_b] = GetParam();
  const Shape a_shape = transpose_a ? Shape{2, 4, 3} : Shape{2, 3, 4};
  const Shape b_shape = transpose_b ? Shape{2, 2, 4} : Shape{2, 4, 2};
  expect_gradients_match_finite_differences(
      [transpose_a = transpose_a, transpose_b = transpose_b](const std::vector<Tensor>& x) {
        return ops::matmul(x[0], x[1], transpose_a, transpose_b);
      },
      {random_input(a_shape, 3), random_input(b_shape, 4)});
}

// A batch of matrices times one matrix shared by the batch: b's gradient sums over it.
TEST_P(MatmulGradient, BatchTimesSharedMatrixMatchesFiniteDifferences) {
  const auto [transpose_a, transpose_b] = GetParam();
  const Shape a_shape = transpose_a ? Shape{2, 4, 3} : Shape{2, 3, 4};
  const Shape b_shape = transpose_b ? Shape{2, 4} : Shape{4, 2};
  expect_gradients_match_finite_differences(
      [transpose_a = transpose_a, transpose_b = transpose_b](const std::vector<Tensor>& x) {
        return ops::matmul(x[0], x[1], transpose_a, transpose_b);
      },
      {random_input(a_shape, 5), random_input(b_shape, 6)});
}

// One matrix shared by a batch on the right (docs/op-set.md's other shared
// operand): the output's batch is b's, and a's gradient sums over it.
TEST_P(MatmulGradient, SharedMatrixTimesBatchMatchesFiniteDifferences) {
  const auto [transpose_a, transpose_b] = GetParam();
  const Shape a_shape = transpose_a ? Shape{4, 3} : Shape{3, 4};
  const Shape b_shape = transpose_b ? Shape{2, 2, 4} : Shape{2, 4, 2};
  const testing::CheckInput a_values = random_input(a_shape, 7), b_values = random_input(b_shape, 8);
  const Tensor a = Tensor::from_vector<float>(a_values.values, a_shape);
  const Tensor b = Tensor::from_vector<float>(b_values.values, b_shape);
  const Tensor y = ops::matmul(a, b, transpose_a, transpose_b);
  ASSERT_EQ(y.shape(), Shape({2, 3, 2}));
  // Each batch is a @ b[batch], up to the order of the sums: the CPU runs a
  // batch of small products on oneDNN's matmul primitive and one product on
  // sgemm, whose AVX-512 kernels order the four products differently.
  for (int64_t batch = 0; batch < 2; ++batch) {
    const Shape matrix{b_shape[1], b_shape[2]};
    const Tensor b_batch = ops::slice(b, {batch, 0, 0}, {1, b_shape[1], b_shape[2]}).reshape(matrix);
    const std::vector<float> expected = ops::matmul(a, b_batch, transpose_a, transpose_b).to_vector<float>();
    const std::vector<float> actual = ops::slice(y, {batch, 0, 0}, {1, 3, 2}).reshape(Shape{3, 2}).to_vector<float>();
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[i], 1e-6f * std::max(1.0f, std::fabs(expected[i]))) << "batch " << batch;
    }
  }
  expect_gradients_match_finite_differences(
      [transpose_a = transpose_a, transpose_b = transpose_b](const std::vector<Tensor>& x) {
        return ops::matmul(x[0], x[1], transpose_a, transpose_b);
      },
      {a_values, b_values});
}

INSTANTIATE_TEST_SUITE_P(Transposes, MatmulGradient,
                         ::testing::Values(MatmulCase{false, false}, MatmulCase{false, true},
                                           MatmulCase{true, false}, MatmulCase{true, true}));

struct ConvCase {
  const char* name;
  ops::Conv2DOptions options;
};

class Conv2DGradient : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv2DGradient, MatchesFiniteDifferences) {
  const ops::Conv2DOptions options = GetParam().options;
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& x) { return ops::conv2d(x[0], x[1], options); },
      {random_input({1, 5, 5, 2}, 7), random_input({3, 3, 2, 3}, 8)});
}

// The backward ops are linear in each operand; their gradients serve
// second-order differentiation.
TEST_P(Conv2DGradient, BackwardInputMatchesFiniteDifferences) {
  const ops::Conv2DOptions options = GetParam().options;
  const Shape input_shape{1, 5, 5, 2};
  const Tensor probe = ops::conv2d(ops::zeros(input_shape), ops::zeros({3, 3, 2, 3}), options);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& x) {
        return ops::conv2d_backward_input(x[0], x[1], input_shape, options);
      },
      {random_input(probe.shape(), 9), random_input({3, 3, 2, 3}, 10)});
}

TEST_P(Conv2DGradient, BackwardFilterMatchesFiniteDifferences) {
  const ops::Conv2DOptions options = GetParam().options;
  const Shape filter_shape{3, 3, 2, 3};
  const Tensor probe = ops::conv2d(ops::zeros({1, 5, 5, 2}), ops::zeros(filter_shape), options);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& x) {
        return ops::conv2d_backward_filter(x[0], x[1], filter_shape, options);
      },
      {random_input({1, 5, 5, 2}, 11), random_input(probe.shape(), 12)});
}

INSTANTIATE_TEST_SUITE_P(
    Options, Conv2DGradient,
    ::testing::Values(ConvCase{"valid", {{1, 1}, ops::Padding::kValid, {1, 1}}},
                      ConvCase{"same", {{1, 1}, ops::Padding::kSame, {1, 1}}},
                      ConvCase{"same_stride2", {{2, 2}, ops::Padding::kSame, {1, 1}}},
                      ConvCase{"valid_stride2", {{2, 1}, ops::Padding::kValid, {1, 1}}},
                      ConvCase{"dilated", {{1, 1}, ops::Padding::kValid, {2, 2}}},
                      ConvCase{"same_dilated", {{1, 1}, ops::Padding::kSame, {2, 1}}}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.name); });

struct PoolCase {
  const char* name;
  ops::Pool2DOptions options;
};

class Pool2DGradient : public ::testing::TestWithParam<PoolCase> {};

TEST_P(Pool2DGradient, MaxPoolMatchesFiniteDifferences) {
  const ops::Pool2DOptions options = GetParam().options;
  // Distinct values 0.05 apart: no ties, and eps = 1e-2 never changes the argmax.
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& x) { return ops::max_pool2d(x[0], options); },
      {testing::distinct_input({1, 5, 5, 2}, 13)});
}

TEST_P(Pool2DGradient, AvgPoolMatchesFiniteDifferences) {
  const ops::Pool2DOptions options = GetParam().options;
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& x) { return ops::avg_pool2d(x[0], options); },
      {random_input({1, 5, 5, 2}, 14)});
}

TEST_P(Pool2DGradient, AvgPoolBackwardMatchesFiniteDifferences) {
  const ops::Pool2DOptions options = GetParam().options;
  const Shape input_shape{1, 5, 5, 2};
  const Tensor probe = ops::avg_pool2d(ops::zeros(input_shape), options);
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& x) {
        return ops::avg_pool2d_backward(x[0], input_shape, options);
      },
      {random_input(probe.shape(), 15)});
}

INSTANTIATE_TEST_SUITE_P(
    Options, Pool2DGradient,
    ::testing::Values(PoolCase{"valid_2x2", {{2, 2}, {2, 2}, ops::Padding::kValid}},
                      PoolCase{"same_2x2", {{2, 2}, {2, 2}, ops::Padding::kSame}},
                      PoolCase{"same_3x3_stride1", {{3, 3}, {1, 1}, ops::Padding::kSame}},
                      PoolCase{"valid_3x2_stride_1x2", {{3, 2}, {1, 2}, ops::Padding::kValid}}),
    [](const ::testing::TestParamInfo<PoolCase>& info) { return std::string(info.param.name); });

TEST(MaxPoolBackwardGradient, IsReportedAsUnimplemented) {
  const Tensor x = testing::to_tensor(testing::distinct_input({1, 4, 4, 1}, 16));
  const Tensor dy = ops::ones({1, 2, 2, 1});
  GradientTape tape;
  tape.watch(dy);
  const Tensor dx = ops::max_pool2d_backward(x, dy);
  EXPECT_THROW(tape.gradient(ops::reduce_sum(dx), {dy}), UnimplementedError);
}

}  // namespace
}  // namespace accel
