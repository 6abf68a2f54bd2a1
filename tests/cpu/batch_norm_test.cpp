// BATCH_NORM and BATCH_NORM_BACKWARD (API 1.6) against a float64 reference
// written from their definitions in accel_plugin.h, bitwise the same on one
// thread and on several, with every bad operand an invalid argument.
#include "test_tensor.hpp"

#include <bit>
#include <cmath>
#include <string>
#include <vector>

namespace accel::test {
namespace {

constexpr double kEpsilon = 1e-3;

AccelBatchNormAttributes attributes_of(double epsilon = kEpsilon) { return {sizeof(AccelBatchNormAttributes), epsilon}; }

struct Statistics {
  std::vector<double> mean, variance;
};

Statistics reference_statistics(const Tensor& x, int64_t features) {
  const int64_t rows = x.count() / features;
  Statistics s{std::vector<double>(features, 0.0), std::vector<double>(features, 0.0)};
  for (int64_t i = 0; i < x.count(); ++i) s.mean[i % features] += x.value(i) / rows;
  for (int64_t i = 0; i < x.count(); ++i) {
    const double centered = x.value(i) - s.mean[i % features];
    s.variance[i % features] += centered * centered / rows;
  }
  return s;
}

void expect_close(double got, double want, double tolerance, const std::string& what) {
  EXPECT_NEAR(got, want, tolerance * (1.0 + std::fabs(want))) << what;
}

TEST(BatchNormKernel, MatchesTheDefinition) {
  for (const Shape& shape : {Shape{4, 6, 6, 32}, Shape{1000, 3}, Shape{1, 5}, Shape{70000, 2}}) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    const int64_t features = shape.back();
    Tensor x = random_tensor(ACCEL_DTYPE_F32, shape, 3.0, 7.0, 1);  // off zero: the variance is not the mean square
    Tensor scale = random_tensor(ACCEL_DTYPE_F32, {features}, 0.5, 2.0, 2);
    Tensor offset = random_tensor(ACCEL_DTYPE_F32, {features}, -1.0, 1.0, 3);
    Tensor y(ACCEL_DTYPE_F32, shape), mean(ACCEL_DTYPE_F32, {features}), variance(ACCEL_DTYPE_F32, {features});
    const AccelBatchNormAttributes attributes = attributes_of();
    run(ACCEL_OP_BATCH_NORM, {&x, &scale, &offset}, {&y, &mean, &variance}, &attributes);

    const Statistics s = reference_statistics(x, features);
    for (int64_t c = 0; c < features; ++c) {
      expect_close(mean.value(c), s.mean[c], 1e-6, "mean " + std::to_string(c));
      expect_close(variance.value(c), s.variance[c], 1e-5, "variance " + std::to_string(c));
    }
    for (int64_t i = 0; i < x.count(); ++i) {
      const int64_t c = i % features;
      const double want = (x.value(i) - s.mean[c]) / std::sqrt(s.variance[c] + kEpsilon) * scale.value(c) + offset.value(c);
      expect_close(y.value(i), want, 2e-5, "y " + std::to_string(i));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(BatchNormKernel, GradientMatchesTheDefinition) {
  for (const Shape& shape : {Shape{4, 6, 6, 32}, Shape{1000, 3}, Shape{1, 5}}) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    const int64_t features = shape.back();
    const int64_t rows = Tensor(ACCEL_DTYPE_F32, shape).count() / features;
    Tensor dy = random_tensor(ACCEL_DTYPE_F32, shape, -1.0, 1.0, 4);
    Tensor x = random_tensor(ACCEL_DTYPE_F32, shape, -2.0, 3.0, 5);
    Tensor scale = random_tensor(ACCEL_DTYPE_F32, {features}, 0.5, 2.0, 6);
    Tensor mean = random_tensor(ACCEL_DTYPE_F32, {features}, 0.0, 1.0, 7);
    Tensor variance = random_tensor(ACCEL_DTYPE_F32, {features}, 0.5, 2.0, 8);
    Tensor dx(ACCEL_DTYPE_F32, shape), dscale(ACCEL_DTYPE_F32, {features}), doffset(ACCEL_DTYPE_F32, {features});
    const AccelBatchNormAttributes attributes = attributes_of();
    run(ACCEL_OP_BATCH_NORM_BACKWARD, {&dy, &x, &scale, &mean, &variance}, {&dx, &dscale, &doffset}, &attributes);

    std::vector<double> sum_dy(features, 0.0), sum_dy_xhat(features, 0.0);
    auto xhat = [&](int64_t i) {
      const int64_t c = i % features;
      return (x.value(i) - mean.value(c)) / std::sqrt(variance.value(c) + kEpsilon);
    };
    for (int64_t i = 0; i < dy.count(); ++i) {
      sum_dy[i % features] += dy.value(i);
      sum_dy_xhat[i % features] += dy.value(i) * xhat(i);
    }
    for (int64_t c = 0; c < features; ++c) {
      expect_close(doffset.value(c), sum_dy[c], 1e-5, "doffset " + std::to_string(c));
      expect_close(dscale.value(c), sum_dy_xhat[c], 1e-5, "dscale " + std::to_string(c));
    }
    for (int64_t i = 0; i < dy.count(); ++i) {
      const int64_t c = i % features;
      const double want = scale.value(c) / std::sqrt(variance.value(c) + kEpsilon) *
                          (dy.value(i) - (sum_dy[c] + xhat(i) * sum_dy_xhat[c]) / rows);
      expect_close(dx.value(i), want, 2e-5, "dx " + std::to_string(i));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// The sums run over fixed blocks of rows added in order: the thread count
// changes nothing.
TEST(BatchNormKernel, IsBitwiseTheSameOnAnyThreadCount) {
  const Shape shape{64, 14, 14, 32};
  Tensor x = random_tensor(ACCEL_DTYPE_F32, shape, -1.0, 3.0, 9);
  Tensor scale = random_tensor(ACCEL_DTYPE_F32, {32}, 0.5, 2.0, 10), offset = random_tensor(ACCEL_DTYPE_F32, {32}, -1, 1, 11);
  Tensor dy = random_tensor(ACCEL_DTYPE_F32, shape, -1.0, 1.0, 12);
  const AccelBatchNormAttributes attributes = attributes_of();
  std::vector<std::vector<uint32_t>> results;
  for (int threads : {1, 2}) {
    host_kernels::set_max_threads(threads);
    Tensor y(ACCEL_DTYPE_F32, shape), mean(ACCEL_DTYPE_F32, {32}), variance(ACCEL_DTYPE_F32, {32});
    run(ACCEL_OP_BATCH_NORM, {&x, &scale, &offset}, {&y, &mean, &variance}, &attributes);
    Tensor dx(ACCEL_DTYPE_F32, shape), dscale(ACCEL_DTYPE_F32, {32}), doffset(ACCEL_DTYPE_F32, {32});
    run(ACCEL_OP_BATCH_NORM_BACKWARD, {&dy, &x, &scale, &mean, &variance}, {&dx, &dscale, &doffset}, &attributes);
    std::vector<uint32_t> bits;
    for (const Tensor* tensor : {&y, &mean, &variance, &dx, &dscale, &doffset}) {
      for (int64_t i = 0; i < tensor->count(); ++i) bits.push_back(std::bit_cast<uint32_t>(static_cast<float>(tensor->value(i))));
    }
    results.push_back(std::move(bits));
  }
  host_kernels::set_max_threads(0);
  EXPECT_TRUE(results[0] == results[1]);
}

TEST(BatchNormKernel, BadOperandsAreInvalidArguments) {
  Tensor x(ACCEL_DTYPE_F32, {4, 3}), scale(ACCEL_DTYPE_F32, {3}), offset(ACCEL_DTYPE_F32, {3});
  Tensor y(ACCEL_DTYPE_F32, {4, 3}), mean(ACCEL_DTYPE_F32, {3}), variance(ACCEL_DTYPE_F32, {3});
  Tensor short_scale(ACCEL_DTYPE_F32, {4});
  const AccelBatchNormAttributes attributes = attributes_of();
  std::string message;
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_BATCH_NORM, {&x, &short_scale, &offset}, {&y, &mean, &variance}, &attributes); },
                          &message),
            ACCEL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("scale must be [3] (x's last axis), got float32[4]"), std::string::npos) << message;
  const AccelBatchNormAttributes no_epsilon = attributes_of(0.0);
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_BATCH_NORM, {&x, &scale, &offset}, {&y, &mean, &variance}, &no_epsilon); }),
            ACCEL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_BATCH_NORM, {&x, &scale}, {&y, &mean, &variance}, &attributes); }),
            ACCEL_STATUS_INVALID_ARGUMENT);
  Tensor wrong_dx(ACCEL_DTYPE_F32, {3, 4});
  EXPECT_EQ(error_code_of([&] {
              run(ACCEL_OP_BATCH_NORM_BACKWARD, {&x, &x, &scale, &mean, &variance}, {&wrong_dx, &mean, &variance},
                  &attributes);
            }),
            ACCEL_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(host_kernels::supports(ACCEL_OP_BATCH_NORM, ACCEL_DTYPE_F32));
  EXPECT_FALSE(host_kernels::supports(ACCEL_OP_BATCH_NORM, ACCEL_DTYPE_I32));
  EXPECT_STREQ(host_kernels::op_name(ACCEL_OP_BATCH_NORM_BACKWARD), "BATCH_NORM_BACKWARD");
}

}  // namespace
}  // namespace accel::test
