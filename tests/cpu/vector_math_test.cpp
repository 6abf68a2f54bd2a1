// EXP and ERF (vector_math.hpp's branch-free exp and erf, which the compiler
// vectorizes) against double-precision std::exp / std::erf over a spread of
// every float: exp within 1 ulp of the correctly rounded float, erf within
// 5e-7 absolute; NaN, infinities, overflow and gradual underflow as the C
// library gives them. Also SOFTMAX, which uses the same exp, on rows whose
// exponentials underflow.
#include "test_tensor.hpp"

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <limits>

namespace accel::test {
namespace {

// Every `stride`-th bit pattern: positive and negative floats of every
// exponent, the subnormals and the NaNs among them.
Tensor spread_of_floats(uint32_t stride) {
  std::vector<float> values;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += stride) {
    values.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  }
  for (float special : {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                        88.72f, 88.73f, -87.33f, -103.9f, -104.0f, 1e-8f, -1e-8f, 3.9f, 4.0f, 4.1f}) {
    values.push_back(special);
  }
  Tensor x(ACCEL_DTYPE_F32, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), x.data<float>());
  return x;
}

// Distance in units in the last place between two finite floats or
// infinities of the same sign.
int64_t ulps_between(float a, float b) {
  auto ordered = [](float value) {
    const int32_t bits = std::bit_cast<int32_t>(value);
    return bits < 0 ? int64_t{INT32_MIN} - bits : int64_t{bits};
  };
  return std::llabs(ordered(a) - ordered(b));
}

// Runs `op` on the spread of floats: NaN must give NaN; `check(input,
// result)` sees every other input, until a check fails.
template <typename Check>
void for_each_result(AccelOp op, const Check& check) {
  const Tensor x = spread_of_floats(521);
  Tensor y(ACCEL_DTYPE_F32, x.shape());
  run(op, {&x}, {&y});
  for (int64_t i = 0; i < x.count(); ++i) {
    const float input = x.data<float>()[i], result = y.data<float>()[i];
    if (std::isnan(input)) {
      ASSERT_TRUE(std::isnan(result)) << "NaN gave " << result;
      continue;
    }
    check(input, result);
    if (::testing::Test::HasFatalFailure()) return;  // the first wrong value is enough
  }
}

TEST(VectorMath, ExpIsWithinOneUlpOfTheCorrectlyRoundedResult) {
  for_each_result(ACCEL_OP_EXP, [](float input, float result) {
    const float expected = static_cast<float>(std::exp(static_cast<double>(input)));
    ASSERT_LE(ulps_between(result, expected), 1) << "exp(" << input << ") = " << result << ", expected " << expected;
  });
}

TEST(VectorMath, ExpOverflowsAndUnderflowsAsTheLibraryDoes) {
  Tensor x(ACCEL_DTYPE_F32, {6});
  const float inputs[] = {89.0f, 1000.0f, -1000.0f, -100.0f, -std::numeric_limits<float>::infinity(), 0.0f};
  std::copy(std::begin(inputs), std::end(inputs), x.data<float>());
  Tensor y(ACCEL_DTYPE_F32, {6});
  run(ACCEL_OP_EXP, {&x}, {&y});
  EXPECT_TRUE(std::isinf(y.at<float>(0)));
  EXPECT_TRUE(std::isinf(y.at<float>(1)));
  EXPECT_EQ(y.at<float>(2), 0.0f);
  EXPECT_EQ(y.at<float>(3), std::exp(-100.0f));  // a subnormal: gradual underflow
  EXPECT_GT(y.at<float>(3), 0.0f);
  EXPECT_EQ(y.at<float>(4), 0.0f);
  EXPECT_EQ(y.at<float>(5), 1.0f);
}

TEST(VectorMath, ErfIsWithinFiveTenMillionthsEverywhere) {
  double worst = 0;
  for_each_result(ACCEL_OP_ERF, [&](float input, float result) {
    const double error = std::fabs(static_cast<double>(result) - std::erf(static_cast<double>(input)));
    worst = std::max(worst, error);
    ASSERT_LE(error, 5e-7) << "erf(" << input << ") = " << result;
  });
  EXPECT_GT(worst, 0.0);  // the approximation is not the library's
}

TEST(VectorMath, SoftmaxRowsWhoseExponentialsUnderflowStillSumToOne) {
  Tensor x(ACCEL_DTYPE_F32, {2, 5});
  const float inputs[] = {0.0f, -200.0f, -90.0f, -110.0f, 1.0f, 50.0f, 50.0f, -60.0f, 49.0f, 50.0f};
  std::copy(std::begin(inputs), std::end(inputs), x.data<float>());
  Tensor y(ACCEL_DTYPE_F32, {2, 5});
  run(ACCEL_OP_SOFTMAX, {&x}, {&y});
  for (int row = 0; row < 2; ++row) {
    double sum = 0, expected_sum = 0;
    std::vector<double> expected(5);
    for (int c = 0; c < 5; ++c) expected_sum += std::exp(static_cast<double>(inputs[row * 5 + c]));
    for (int c = 0; c < 5; ++c) {
      const double want = std::exp(static_cast<double>(inputs[row * 5 + c])) / expected_sum;
      EXPECT_NEAR(y.at<float>(row * 5 + c), want, 1e-7 + 1e-6 * want) << "row " << row << " class " << c;
      sum += y.at<float>(row * 5 + c);
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

}  // namespace
}  // namespace accel::test
