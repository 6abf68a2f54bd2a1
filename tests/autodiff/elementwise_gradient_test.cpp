// Gradients of the unary and binary elementwise ops (with broadcasting), of
// select, and of the relu/sigmoid/tanh backward ops, against finite differences.
#include "gradient_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace accel {
namespace {

using testing::CheckInput;
using testing::expect_gradients_match_finite_differences;
using testing::random_input;
using testing::random_input_away_from;

struct UnaryCase {
  const char* name;
  Tensor (*op)(const Tensor&);
  CheckInput input;  // inside the op's domain, away from its kinks
};

class UnaryGradient : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryGradient, MatchesFiniteDifferences) {
  const UnaryCase& test = GetParam();
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& x) { return test.op(x[0]); }, {test.input});
}

const Shape kUnaryShape{2, 3};

INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryGradient,
    ::testing::Values(
        UnaryCase{"neg", ops::neg, random_input(kUnaryShape, 1)},
        UnaryCase{"abs", ops::abs, random_input_away_from(kUnaryShape, 2, 0.0f, 0.1f)},
        UnaryCase{"exp", ops::exp, random_input(kUnaryShape, 3)},
        UnaryCase{"log", ops::log, random_input(kUnaryShape, 4, 0.5f, 2.0f)},
        UnaryCase{"sqrt", ops::sqrt, random_input(kUnaryShape, 5, 0.5f, 2.0f)},
        UnaryCase{"rsqrt", ops::rsqrt, random_input(kUnaryShape, 6, 0.5f, 2.0f)},
        UnaryCase{"square", ops::square, random_input(kUnaryShape, 7)},
        UnaryCase{"relu", ops::relu, random_input_away_from(kUnaryShape, 8, 0.0f, 0.1f)},
        UnaryCase{"sigmoid", ops::sigmoid, random_input(kUnaryShape, 9, -3.0f, 3.0f)},
        UnaryCase{"tanh", ops::tanh, random_input(kUnaryShape, 10, -2.0f, 2.0f)},
        UnaryCase{"erf", ops::erf, random_input(kUnaryShape, 13, -2.0f, 2.0f)},
        UnaryCase{"sign", ops::sign, random_input_away_from(kUnaryShape, 11, 0.0f, 0.1f)},
        UnaryCase{"reciprocal", ops::reciprocal, random_input(kUnaryShape, 12, 0.5f, 2.0f)}),
    [](const ::testing::TestParamInfo<UnaryCase>& info) { return std::string(info.param.name); });

// ERF's gradient is built from ops (2/sqrt(pi) exp(-x^2) dy), so it has a
// gradient of its own: both against the closed forms, in double.
TEST(ErfGradient, FirstAndSecondDerivativesMatchClosedForms) {
  const std::vector<float> points = {-2.0f, -0.7f, 0.0f, 0.3f, 1.5f};
  const Tensor x = Tensor::from_vector<float>(points, {static_cast<int64_t>(points.size())});
  GradientTape outer;
  outer.watch(x);
  Tensor first;
  {
    GradientTape inner;
    inner.watch(x);
    first = inner.gradient(ops::reduce_sum(ops::erf(x)), {x})[0];
  }
  const Tensor second = outer.gradient(ops::reduce_sum(first), {x})[0];
  const std::vector<float> first_values = first.to_vector<float>();
  const std::vector<float> second_values = second.to_vector<float>();
  const double two_over_sqrt_pi = 2.0 / std::sqrt(std::acos(-1.0));
  for (size_t i = 0; i < points.size(); ++i) {
    const double point = points[i];
    const double slope = two_over_sqrt_pi * std::exp(-point * point);
    EXPECT_NEAR(first_values[i], slope, 1e-6) << "at x = " << point;
    EXPECT_NEAR(second_values[i], -2.0 * point * slope, 1e-5) << "at x = " << point;
  }
}

struct BinaryCase {
  const char* name;
  Tensor (*op)(const Tensor&, const Tensor&);
  float low;  // operand range: positive for pow and div denominators
  float high;
};

struct BroadcastCase {
  const char* name;
  Shape a;
  Shape b;
};

class BinaryGradient
    : public ::testing::TestWithParam<std::tuple<BinaryCase, BroadcastCase>> {};

TEST_P(BinaryGradient, MatchesFiniteDifferences) {
  // Lambdas capture the bindings by init-capture: clang 14 (the sanitizer builds) cannot capture them.
  const auto& [op_case, shapes] = GetParam();
  CheckInput a = random_input(shapes.a, 21, op_case.low, op_case.high);
  CheckInput b = random_input(shapes.b, 22, op_case.low, op_case.high);
  if (std::string(op_case.name) == "maximum" || std::string(op_case.name) == "minimum") {
    // Keep a and b apart (the kink is at a == b): a positive, b negative.
    for (float& value : a.values) value = 0.1f + std::abs(value);
    for (float& value : b.values) value = -0.1f - std::abs(value);
    // ... except every other element of b, swapped above a, so both sides win.
    for (size_t i = 0; i < b.values.size(); i += 2) b.values[i] = 1.2f + std::abs(b.values[i]);
  }
  expect_gradients_match_finite_differences(
      [&op_case = op_case](const std::vector<Tensor>& x) { return op_case.op(x[0], x[1]); }, {a, b});
}

INSTANTIATE_TEST_SUITE_P(
    Ops, BinaryGradient,
    ::testing::Combine(
        ::testing::Values(BinaryCase{"add", ops::add, -1.0f, 1.0f},
                          BinaryCase{"sub", ops::sub, -1.0f, 1.0f},
                          BinaryCase{"mul", ops::mul, -1.0f, 1.0f},
                          BinaryCase{"div", ops::div, 0.5f, 2.0f},
                          BinaryCase{"maximum", ops::maximum, -1.0f, 1.0f},
                          BinaryCase{"minimum", ops::minimum, -1.0f, 1.0f},
                          BinaryCase{"pow", ops::pow, 0.5f, 2.0f}),
        ::testing::Values(BroadcastCase{"same", {2, 3}, {2, 3}},
                          BroadcastCase{"row", {2, 3}, {3}},
                          BroadcastCase{"outer", {2, 1}, {1, 3}},
                          BroadcastCase{"scalar", {}, {2, 3}})),
    [](const ::testing::TestParamInfo<std::tuple<BinaryCase, BroadcastCase>>& info) {
      return std::string(std::get<0>(info.param).name) + "_" + std::get<1>(info.param).name;
    });

TEST(SelectGradient, MatchesFiniteDifferencesWithBroadcasting) {
  const bool chosen[] = {true, false, true, false, false, true};
  const Tensor condition = Tensor::from_vector<bool>(std::span<const bool>(chosen), {2, 3});
  expect_gradients_match_finite_differences(
      [&](const std::vector<Tensor>& x) { return ops::select(condition, x[0], x[1]); },
      {random_input({2, 3}, 31), random_input({3}, 32)});
}

TEST(SelectGradient, ConditionHasNoGradient) {
  const Tensor a = ops::ones({3});
  const Tensor condition = ops::greater(a, ops::zeros({3}));
  GradientTape tape;
  tape.watch(a);
  const Tensor y = ops::select(condition, a, ops::zeros({3}));
  const std::vector<Tensor> gradients = tape.gradient(ops::reduce_sum(y), {a, condition});
  EXPECT_EQ(gradients[0].to_vector<float>(), std::vector<float>({1, 1, 1}));
  EXPECT_FALSE(gradients[1].defined());
}

// The activation backward ops appear in second-order gradients.
TEST(ActivationBackwardGradient, ReluBackwardMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& x) { return ops::relu_backward(x[0], x[1]); },
      {random_input({2, 3}, 41), random_input_away_from({2, 3}, 42, 0.0f, 0.1f)});
}

TEST(ActivationBackwardGradient, SigmoidBackwardMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& x) { return ops::sigmoid_backward(x[0], x[1]); },
      {random_input({2, 3}, 43), random_input({2, 3}, 44, 0.1f, 0.9f)});
}

TEST(ActivationBackwardGradient, TanhBackwardMatchesFiniteDifferences) {
  expect_gradients_match_finite_differences(
      [](const std::vector<Tensor>& x) { return ops::tanh_backward(x[0], x[1]); },
      {random_input({2, 3}, 45), random_input({2, 3}, 46, -0.9f, 0.9f)});
}

}  // namespace
}  // namespace accel
