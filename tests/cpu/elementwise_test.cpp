// Unary and binary elementwise ops, SELECT and BROADCAST_TO against naive
// reference loops, over the broadcast patterns the kernels special-case
// (same shape, scalar, repeated row, repeated column, general) and the edge
// sizes (empty, one element, odd lengths past the vector width).
#include "test_tensor.hpp"

#include <accel/plugin/op_classes.hpp>

#include <functional>
#include <limits>

namespace accel::test {
namespace {

double reference_unary(AccelOp op, double x) {
  switch (op) {
    case ACCEL_OP_NEG: return -x;
    case ACCEL_OP_ABS: return std::fabs(x);
    case ACCEL_OP_EXP: return std::exp(x);
    case ACCEL_OP_LOG: return std::log(x);
    case ACCEL_OP_SQRT: return std::sqrt(x);
    case ACCEL_OP_RSQRT: return 1.0 / std::sqrt(x);
    case ACCEL_OP_SQUARE: return x * x;
    case ACCEL_OP_RELU: return x > 0 ? x : 0;
    case ACCEL_OP_SIGMOID: return 1.0 / (1.0 + std::exp(-x));
    case ACCEL_OP_TANH: return std::tanh(x);
    case ACCEL_OP_SIGN: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case ACCEL_OP_RECIPROCAL: return 1.0 / x;
    case ACCEL_OP_ERF: return std::erf(x);
    default: return NAN;
  }
}

double reference_binary(AccelOp op, double a, double b, bool integral) {
  switch (op) {
    case ACCEL_OP_ADD: return a + b;
    case ACCEL_OP_SUB: return a - b;
    case ACCEL_OP_MUL: return a * b;
    case ACCEL_OP_DIV: return integral ? std::trunc(a / b) : a / b;
    case ACCEL_OP_MAXIMUM: return std::max(a, b);
    case ACCEL_OP_MINIMUM: return std::min(a, b);
    case ACCEL_OP_POW: return std::pow(a, b);
    case ACCEL_OP_EQUAL: return a == b;
    case ACCEL_OP_NOT_EQUAL: return a != b;
    case ACCEL_OP_LESS: return a < b;
    case ACCEL_OP_LESS_EQUAL: return a <= b;
    case ACCEL_OP_GREATER: return a > b;
    case ACCEL_OP_GREATER_EQUAL: return a >= b;
    case ACCEL_OP_RELU_BACKWARD: return b > 0 ? a : 0;
    case ACCEL_OP_SIGMOID_BACKWARD: return a * b * (1 - b);
    case ACCEL_OP_TANH_BACKWARD: return a * (1 - b * b);
    default: return NAN;
  }
}

bool is_comparison(AccelOp op) { return op >= ACCEL_OP_EQUAL && op <= ACCEL_OP_GREATER_EQUAL; }

// The unary ops on floats: NEG .. RECIPROCAL, and ERF (appended in 1.3).
std::vector<AccelOp> float_unary_ops() {
  std::vector<AccelOp> ops;
  for (int op = ACCEL_OP_NEG; op <= ACCEL_OP_RECIPROCAL; ++op) ops.push_back(static_cast<AccelOp>(op));
  ops.push_back(ACCEL_OP_ERF);
  return ops;
}

struct BroadcastCase {
  Shape a, b, out;
};

const std::vector<BroadcastCase> kBroadcastCases = {
    {{37}, {37}, {37}},                      // same shape, odd length
    {{1}, {1}, {1}},                         // one element
    {{0, 3}, {0, 3}, {0, 3}},                // empty
    {{5, 7}, {}, {5, 7}},                    // rank-0 scalar
    {{1}, {4, 3}, {4, 3}},                   // scalar on the left
    {{6, 19}, {19}, {6, 19}},                // bias add: repeated row
    {{6, 19}, {6, 1}, {6, 19}},              // repeated column
    {{2, 1, 5}, {1, 3, 1}, {2, 3, 5}},       // both sides broadcast
    {{3, 1, 4, 1}, {2, 1, 6}, {3, 2, 4, 6}}, // general, mixed ranks
    {{70000}, {70000}, {70000}},             // large enough for oneTBB
    {{300, 257}, {257}, {300, 257}},         // large repeated row
};

void check_binary(AccelOp op, AccelDType dtype, const BroadcastCase& c) {
  const bool integral = dtype == ACCEL_DTYPE_I32 || dtype == ACCEL_DTYPE_I64;
  Tensor a = random_tensor(dtype, c.a, -3, 3, 1);
  Tensor b = random_tensor(dtype, c.b, op == ACCEL_OP_POW ? 0.5 : -3, 3, 2);
  if (op == ACCEL_OP_POW) a = random_tensor(dtype, c.a, 0.1, 3, 1);
  if (op == ACCEL_OP_DIV) {  // keep divisors away from zero
    for (int64_t i = 0; i < b.count(); ++i) b.set(i, b.value(i) >= 0 ? b.value(i) + 1 : b.value(i) - 1);
  }
  Tensor y(is_comparison(op) ? ACCEL_DTYPE_BOOL : dtype, c.out);
  run(op, {&a, &b}, {&y});
  std::vector<double> expected(static_cast<size_t>(y.count()));
  for (int64_t i = 0; i < y.count(); ++i) {
    const auto index = unravel(i, c.out);
    expected[i] = reference_binary(op, a.value(broadcast_source(index, c.a)),
                                   b.value(broadcast_source(index, c.b)), integral);
  }
  const double tolerance = dtype == ACCEL_DTYPE_BF16 ? 1e-2 : dtype == ACCEL_DTYPE_F16 ? 2e-3 : 1e-5;
  SCOPED_TRACE(std::string(host_kernels::op_name(op)) + " " + sdk::dtype_name(dtype));
  std::vector<double> rounded = expected;
  if (!is_comparison(op) && dtype != ACCEL_DTYPE_F32 && !integral) {
    Tensor round_trip(dtype, {static_cast<int64_t>(expected.size())});
    for (size_t i = 0; i < expected.size(); ++i) round_trip.set(static_cast<int64_t>(i), expected[i]);
    for (size_t i = 0; i < expected.size(); ++i) rounded[i] = round_trip.value(static_cast<int64_t>(i));
  }
  expect_close(y, rounded, tolerance);
}

TEST(Elementwise, FloatBinaryOpsOverBroadcastPatterns) {
  for (int op = ACCEL_OP_ADD; op <= ACCEL_OP_TANH_BACKWARD; ++op) {
    for (const auto& c : kBroadcastCases) check_binary(static_cast<AccelOp>(op), ACCEL_DTYPE_F32, c);
  }
}

TEST(Elementwise, IntegerArithmeticAndComparisons) {
  const AccelOp ops[] = {ACCEL_OP_ADD, ACCEL_OP_SUB, ACCEL_OP_MUL, ACCEL_OP_DIV, ACCEL_OP_MAXIMUM,
                         ACCEL_OP_MINIMUM, ACCEL_OP_EQUAL, ACCEL_OP_LESS, ACCEL_OP_GREATER_EQUAL};
  for (AccelDType dtype : {ACCEL_DTYPE_I32, ACCEL_DTYPE_I64}) {
    for (AccelOp op : ops) {
      for (const auto& c : kBroadcastCases) check_binary(op, dtype, c);
    }
  }
}

TEST(Elementwise, HalfPrecisionGoesThroughFloat32) {
  for (AccelDType dtype : {ACCEL_DTYPE_BF16, ACCEL_DTYPE_F16}) {
    for (AccelOp op : {ACCEL_OP_ADD, ACCEL_OP_MUL, ACCEL_OP_DIV, ACCEL_OP_LESS, ACCEL_OP_TANH_BACKWARD}) {
      check_binary(op, dtype, kBroadcastCases[5]);
      check_binary(op, dtype, kBroadcastCases[8]);
    }
  }
}

TEST(Elementwise, IntegerDivisionByZeroIsInvalidArgument) {
  Tensor a = tensor_of(ACCEL_DTYPE_I32, {3}, {1, 2, 3});
  Tensor b = tensor_of(ACCEL_DTYPE_I32, {3}, {1, 0, 3});
  Tensor y(ACCEL_DTYPE_I32, {3});
  std::string message;
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_DIV, {&a, &b}, {&y}); }, &message), ACCEL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("DIV"), std::string::npos) << message;
  EXPECT_NE(message.find("int32[3]"), std::string::npos) << message;
}

TEST(Elementwise, IntegerWrapsInsteadOfTrapping) {
  Tensor a = tensor_of(ACCEL_DTYPE_I32, {2}, {std::numeric_limits<int32_t>::min(), 7});
  Tensor b = tensor_of(ACCEL_DTYPE_I32, {2}, {-1, -2});
  Tensor y(ACCEL_DTYPE_I32, {2});
  run(ACCEL_OP_DIV, {&a, &b}, {&y});
  EXPECT_EQ(y.at<int32_t>(0), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(y.at<int32_t>(1), -3);  // truncation toward zero
}

TEST(Elementwise, BadBroadcastIsInvalidArgument) {
  Tensor a(ACCEL_DTYPE_F32, {2, 3}), b(ACCEL_DTYPE_F32, {4}), y(ACCEL_DTYPE_F32, {2, 3});
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_ADD, {&a, &b}, {&y}); }), ACCEL_STATUS_INVALID_ARGUMENT);
  Tensor c(ACCEL_DTYPE_I32, {2, 3});
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_ADD, {&a, &c}, {&y}); }), ACCEL_STATUS_INVALID_ARGUMENT);
}

TEST(Elementwise, FloatUnaryOps) {
  for (AccelOp op : float_unary_ops()) {
    for (const Shape& shape : {Shape{0}, Shape{1}, Shape{33}, Shape{3, 70001}}) {
      const bool positive = op == ACCEL_OP_LOG || op == ACCEL_OP_SQRT || op == ACCEL_OP_RSQRT;
      Tensor x = random_tensor(ACCEL_DTYPE_F32, shape, positive ? 0.1 : -4, 4, 7);
      Tensor y(ACCEL_DTYPE_F32, shape);
      run(static_cast<AccelOp>(op), {&x}, {&y});
      std::vector<double> expected(static_cast<size_t>(x.count()));
      for (int64_t i = 0; i < x.count(); ++i) expected[i] = reference_unary(static_cast<AccelOp>(op), x.value(i));
      SCOPED_TRACE(host_kernels::op_name(static_cast<AccelOp>(op)));
      expect_close(y, expected, 2e-6);
    }
  }
}

TEST(Elementwise, ErfEdgeValuesAndHalfPrecision) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = tensor_of(ACCEL_DTYPE_F32, {7}, {0.0, -0.0, 1.0, -2.5, 6.0, inf, -inf});
  Tensor y(ACCEL_DTYPE_F32, {7});
  run(ACCEL_OP_ERF, {&x}, {&y});
  expect_close(y, {0.0, 0.0, std::erf(1.0), std::erf(-2.5), 1.0, 1.0, -1.0}, 1e-7);
  EXPECT_TRUE(std::signbit(y.value(1)));  // erf is odd: -0 stays -0
  Tensor nan = tensor_of(ACCEL_DTYPE_F32, {1}, {NAN}), nan_y(ACCEL_DTYPE_F32, {1});
  run(ACCEL_OP_ERF, {&nan}, {&nan_y});
  EXPECT_TRUE(std::isnan(nan_y.value(0)));
  // BF16 / F16 are computed in float and rounded once.
  for (AccelDType dtype : {ACCEL_DTYPE_BF16, ACCEL_DTYPE_F16}) {
    Tensor half = random_tensor(dtype, {65}, -3, 3, 11), half_y(dtype, {65});
    run(ACCEL_OP_ERF, {&half}, {&half_y});
    Tensor rounded(dtype, {65});
    for (int64_t i = 0; i < half.count(); ++i) rounded.set(i, std::erf(static_cast<float>(half.value(i))));
    std::vector<double> expected(65);
    for (int64_t i = 0; i < 65; ++i) expected[i] = rounded.value(i);
    SCOPED_TRACE(sdk::dtype_name(dtype));
    expect_close(half_y, expected, 0.0);
  }
}

// An op without a 16-bit kernel of its own stages BF16 / F16 operands through
// float, converting with CAST's kernel in parallel chunks: over a tensor of
// many chunks, every element as the scalar conversions give it (rounding
// ties to even, NaN kept NaN, infinities and signed zeros kept).
TEST(Elementwise, LargeHalfTensorsAreStagedElementByElementAsTheScalarConversions) {
  constexpr int64_t kCount = (int64_t{1} << 18) + 77;  // several chunks and a ragged tail
  for (AccelDType dtype : {ACCEL_DTYPE_BF16, ACCEL_DTYPE_F16}) {
    SCOPED_TRACE(sdk::dtype_name(dtype));
    Tensor x(dtype, {kCount}), y(dtype, {kCount}), out(dtype, {kCount});
    auto* x_bits = x.data<uint16_t>();
    auto* y_bits = y.data<uint16_t>();
    for (int64_t i = 0; i < kCount; ++i) {
      x_bits[i] = static_cast<uint16_t>(i * 40503);  // every bit pattern, NaNs and infinities among them
      y_bits[i] = static_cast<uint16_t>((i * 7919) ^ 0x5A5A);
    }
    run(ACCEL_OP_ADD, {&x, &y}, {&out});
    const auto* out_bits = out.data<uint16_t>();
    int64_t mismatches = 0;
    for (int64_t i = 0; i < kCount; ++i) {
      const float sum = static_cast<float>(x.value(i)) + static_cast<float>(y.value(i));
      const uint16_t expected = dtype == ACCEL_DTYPE_BF16 ? sdk::float_to_bf16(sum) : sdk::float_to_f16(sum);
      const bool both_nan = std::isnan(sum) && std::isnan(out.value(i));
      if (out_bits[i] != expected && !both_nan && ++mismatches <= 3) {
        ADD_FAILURE() << "element " << i << ": " << out_bits[i] << ", expected " << expected;
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(Elementwise, ErfIsDefinedForFloatsOnly) {
  EXPECT_TRUE(sdk::is_unary_elementwise(ACCEL_OP_ERF));
  EXPECT_FALSE(sdk::is_binary_elementwise(ACCEL_OP_ERF));
  for (AccelDType dtype : {ACCEL_DTYPE_F32, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F16}) {
    EXPECT_TRUE(host_kernels::supports(ACCEL_OP_ERF, dtype)) << sdk::dtype_name(dtype);
  }
  for (AccelDType dtype : {ACCEL_DTYPE_I32, ACCEL_DTYPE_I64, ACCEL_DTYPE_U8, ACCEL_DTYPE_BOOL}) {
    EXPECT_FALSE(host_kernels::supports(ACCEL_OP_ERF, dtype)) << sdk::dtype_name(dtype);
    Tensor x(dtype, {3}), y(dtype, {3});
    std::string message;
    EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_ERF, {&x}, {&y}); }, &message), ACCEL_STATUS_UNIMPLEMENTED);
    EXPECT_NE(message.find("ERF"), std::string::npos) << message;
  }
  EXPECT_STREQ(host_kernels::op_name(ACCEL_OP_ERF), "ERF");
}

TEST(Elementwise, IntegerUnaryOpsAndLogicalNot) {
  for (AccelDType dtype : {ACCEL_DTYPE_I32, ACCEL_DTYPE_I64}) {
    for (AccelOp op : {ACCEL_OP_NEG, ACCEL_OP_ABS, ACCEL_OP_SQUARE, ACCEL_OP_RELU, ACCEL_OP_SIGN}) {
      Tensor x = random_tensor(dtype, {41}, -9, 9);
      Tensor y(dtype, {41});
      run(op, {&x}, {&y});
      std::vector<double> expected;
      for (int64_t i = 0; i < x.count(); ++i) expected.push_back(reference_unary(op, x.value(i)));
      expect_close(y, expected, 0);
    }
    EXPECT_FALSE(host_kernels::supports(ACCEL_OP_EXP, dtype));
  }
  Tensor b = tensor_of(ACCEL_DTYPE_BOOL, {3}, {1, 0, 1});
  Tensor n(ACCEL_DTYPE_BOOL, {3});
  run(ACCEL_OP_LOGICAL_NOT, {&b}, {&n});
  expect_close(n, {0, 1, 0}, 0);
}

TEST(Elementwise, NanPropagatesThroughMaximumAndRelu) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = tensor_of(ACCEL_DTYPE_F32, {3}, {nan, 1, 2});
  Tensor b = tensor_of(ACCEL_DTYPE_F32, {3}, {0, nan, 1});
  Tensor y(ACCEL_DTYPE_F32, {3});
  run(ACCEL_OP_MAXIMUM, {&a, &b}, {&y});
  expect_close(y, {nan, nan, 2});
  Tensor r(ACCEL_DTYPE_F32, {3});
  run(ACCEL_OP_RELU, {&a}, {&r});
  EXPECT_TRUE(std::isnan(r.value(0)));
}

TEST(Elementwise, SelectBroadcastsAllThreeOperands) {
  for (AccelDType dtype : {ACCEL_DTYPE_F32, ACCEL_DTYPE_I64, ACCEL_DTYPE_BF16, ACCEL_DTYPE_U8}) {
    Tensor cond = random_tensor(ACCEL_DTYPE_BOOL, {4, 1}, 0, 1, 3);
    Tensor a = random_tensor(dtype, {4, 5}, 0, 9, 4);
    Tensor b = random_tensor(dtype, {5}, 0, 9, 5);
    Tensor y(dtype, {4, 5});
    run(ACCEL_OP_SELECT, {&cond, &a, &b}, {&y});
    std::vector<double> expected;
    for (int64_t i = 0; i < 20; ++i) expected.push_back(cond.value(i / 5) ? a.value(i) : b.value(i % 5));
    expect_close(y, expected, 0);
  }
}

TEST(Elementwise, BroadcastToRepeatsAnyDtype) {
  for (AccelDType dtype : {ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_I64, ACCEL_DTYPE_BOOL}) {
    Tensor x = random_tensor(dtype, {3, 1}, 0, 1);
    Tensor y(dtype, {2, 3, 4});
    run(ACCEL_OP_BROADCAST_TO, {&x}, {&y});
    std::vector<double> expected;
    for (int64_t i = 0; i < y.count(); ++i) expected.push_back(x.value((i / 4) % 3));
    expect_close(y, expected, 0);
  }
}

}  // namespace
}  // namespace accel::test
