// Gradients of the reductions and the softmax family against finite differences.
#include "gradient_check.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace accel {
namespace {

using testing::expect_gradients_match_finite_differences;
using testing::random_input;

struct ReduceCase {
  const char* name;
  std::vector<int32_t> axes;
  bool keep_dims;
};

using ReduceFunction = Tensor (*)(const Tensor&, std::vector<int32_t>, bool);

class ReduceGradient
    : public ::testing::TestWithParam<std::tuple<std::pair<const char*, ReduceFunction>, ReduceCase>> {};

TEST_P(ReduceGradient, MatchesFiniteDifferences) {
  // Lambdas capture the bindings by init-capture: clang 14 (the sanitizer builds) cannot capture them.
  const auto& [op, reduction] = GetParam();
  ReduceFunction reduce = op.second;
  // Distinct values: max and min have no ties, and eps never changes the winner.
  expect_gradients_match_finite_differences(
      [&, &reduction = reduction](const std::vector<Tensor>& x) { return reduce(x[0], reduction.axes, reduction.keep_dims); },
      {testing::distinct_input({2, 3, 4}, 51)});
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ReduceGradient,
    ::testing::Combine(
        ::testing::Values(std::pair<const char*, ReduceFunction>{"sum", ops::reduce_sum},
                          std::pair<const char*, ReduceFunction>{"mean", ops::reduce_mean},
                          std::pair<const char*, ReduceFunction>{"max", ops::reduce_max},
                          std::pair<const char*, ReduceFunction>{"min", ops::reduce_min}),
        ::testing::Values(ReduceCase{"all", {}, false}, ReduceCase{"all_kept", {}, true},
                          ReduceCase{"last", {-1}, false}, ReduceCase{"first_kept", {0}, true},
                          ReduceCase{"outer_two", {0, 2}, false})),
    [](const auto& info) {
      return std::string(std::get<0>(info.param).first) + "_" + std::get<1>(info.param).name;
    });

// Ties share the gradient evenly, as in TensorFlow.
TEST(ReduceMaxGradient, SplitsTiesEvenly) {
  const Tensor x = Tensor::from_vector<float>({1, 3, 3, 2}, {4});
  GradientTape tape;
  tape.watch(x);
  const Tensor y = ops::reduce_max(x);
  EXPECT_EQ(tape.gradient(y, {x})[0].to_vector<float>(), std::vector<float>({0, 0.5f, 0.5f, 0}));
}

// The max of an empty axis is -inf and has no elements to send a gradient to.
TEST(ReduceMaxGradient, OfAnEmptyAxisIsEmpty) {
  const Tensor x = ops::zeros(Shape{0, 3});
  GradientTape tape;
  tape.watch(x);
  const Tensor y = ops::reduce_sum(ops::reduce_max(x, {0}));
  const Tensor dx = tape.gradient(y, {x})[0];
  EXPECT_EQ(dx.shape(), x.shape());
  EXPECT_EQ(y.item<float>(), -std::numeric_limits<float>::infinity());
}

TEST(SoftmaxGradient, MatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& x) { return ops::softmax(x[0]); },
      {random_input({3, 4}, 52, -2.0f, 2.0f)});
}

TEST(LogSoftmaxGradient, MatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& x) { return ops::log_softmax(x[0]); },
      {random_input({3, 4}, 53, -2.0f, 2.0f)});
}

TEST(SparseSoftmaxCrossEntropyGradient, LossMatchesFiniteDifferences) {
  const Tensor labels = Tensor::from_vector<int32_t>({2, 0, 3}, {3});
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& x) { return ops::sparse_softmax_cross_entropy(x[0], labels).first; },
      {random_input({3, 4}, 54, -2.0f, 2.0f)});
}

// The backprop output is softmax - one_hot; its gradient is the softmax Jacobian's.
TEST(SparseSoftmaxCrossEntropyGradient, BackpropOutputMatchesFiniteDifferences) {
  const Tensor labels = Tensor::from_vector<int64_t>({1, 1, 0}, {3});
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& x) { return ops::sparse_softmax_cross_entropy(x[0], labels).second; },
      {random_input({3, 4}, 55, -2.0f, 2.0f)});
}

TEST(SparseSoftmaxCrossEntropyGradient, LabelsHaveNoGradient) {
  const Tensor logits = ops::zeros({2, 3});
  const Tensor labels = Tensor::from_vector<int32_t>({0, 2}, {2});
  GradientTape tape;
  tape.watch(logits);
  tape.watch(labels);  // ignored: integers have no gradient
  const Tensor loss = ops::reduce_sum(ops::sparse_softmax_cross_entropy(logits, labels).first);
  const std::vector<Tensor> gradients = tape.gradient(loss, {logits, labels});
  EXPECT_TRUE(gradients[0].defined());
  EXPECT_FALSE(gradients[1].defined());
}

}  // namespace
}  // namespace accel
