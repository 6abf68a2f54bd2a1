// REDUCE_*, ARGMAX, SOFTMAX, LOG_SOFTMAX and SPARSE_SOFTMAX_CROSS_ENTROPY
// against naive loops, over every axis pattern (row, column, middle, and the
// general odometer case) and empty reductions.
#include "test_tensor.hpp"

#include <limits>

namespace accel::test {
namespace {

std::vector<double> reference_reduce(AccelOp op, const Tensor& x, const std::vector<int32_t>& axes) {
  const Shape& shape = x.shape();
  std::vector<bool> reduced(shape.size(), false);
  int64_t reduced_count = 1;
  for (int32_t a : axes) { reduced[a] = true; reduced_count *= shape[a]; }
  Shape kept_shape;
  for (size_t a = 0; a < shape.size(); ++a) kept_shape.push_back(reduced[a] ? 1 : shape[a]);
  int64_t kept = 1;
  for (int64_t d : kept_shape) kept *= d;
  const double identity = op == ACCEL_OP_REDUCE_MAX ? -INFINITY : op == ACCEL_OP_REDUCE_MIN ? INFINITY : 0.0;
  std::vector<double> out(static_cast<size_t>(kept), identity);
  for (int64_t i = 0; i < x.count(); ++i) {
    auto index = unravel(i, shape);
    int64_t o = 0;
    for (size_t a = 0; a < shape.size(); ++a) o = o * kept_shape[a] + (reduced[a] ? 0 : index[a]);
    const double v = x.value(i);
    if (op == ACCEL_OP_REDUCE_MAX) out[o] = std::max(out[o], v);
    else if (op == ACCEL_OP_REDUCE_MIN) out[o] = std::min(out[o], v);
    else out[o] += v;
  }
  if (op == ACCEL_OP_REDUCE_MEAN) {
    for (double& v : out) v = reduced_count == 0 ? NAN : v / static_cast<double>(reduced_count);
  }
  return out;
}

struct ReduceCase {
  Shape shape;
  std::vector<int32_t> axes;
};

TEST(Reductions, EveryAxisPatternAndDtype) {
  const std::vector<ReduceCase> cases = {
      {{7, 33}, {1}},           // rows
      {{33, 7}, {0}},           // columns (bias gradient)
      {{4, 1, 9, 5}, {1, 2}},   // middle, with a size-1 axis
      {{3, 4, 5}, {0, 2}},      // reduced-kept-reduced: general walk
      {{2, 3, 4, 5}, {0, 2}},   // general walk
      {{6, 5}, {0, 1}},         // everything
      {{6, 5}, {}},             // nothing
      {{3, 0}, {1}},            // empty reduction
      {{1}, {0}},               // one element
      {{300, 1000}, {1}},       // big rows: oneTBB
      {{1000, 300}, {0}},       // big columns: oneTBB
  };
  for (AccelDType dtype : {ACCEL_DTYPE_F32, ACCEL_DTYPE_I32, ACCEL_DTYPE_I64, ACCEL_DTYPE_BF16}) {
    for (AccelOp op : {ACCEL_OP_REDUCE_SUM, ACCEL_OP_REDUCE_MEAN, ACCEL_OP_REDUCE_MAX, ACCEL_OP_REDUCE_MIN}) {
      for (const auto& c : cases) {
        const bool integral = dtype == ACCEL_DTYPE_I32 || dtype == ACCEL_DTYPE_I64;
        if (integral && c.shape == Shape{3, 0} && op != ACCEL_OP_REDUCE_SUM) continue;  // no inf in ints
        Tensor x = random_tensor(dtype, c.shape, -5, 5);
        AccelReduceAttributes attributes{sizeof(AccelReduceAttributes), static_cast<int32_t>(c.axes.size()), {}, 1};
        Shape out_shape = c.shape;
        for (size_t i = 0; i < c.axes.size(); ++i) {
          attributes.axes[i] = c.axes[i];
          out_shape[c.axes[i]] = 1;
        }
        Tensor y(dtype, out_shape);
        run(op, {&x}, {&y}, &attributes);
        std::vector<double> expected = reference_reduce(op, x, c.axes);
        if (integral && op == ACCEL_OP_REDUCE_MEAN) {
          for (double& v : expected) v = std::trunc(v);
        }
        SCOPED_TRACE(std::string(host_kernels::op_name(op)) + " " + sdk::dtype_name(dtype) + " shape " +
                     std::to_string(c.shape[0]));
        // Float sums carry rounding error growing with the count; cancellation
        // can leave a small result, so the tolerance scales with the count.
        int64_t reduced_count = 1;
        for (int32_t a : c.axes) reduced_count *= c.shape[a];
        const double float_tolerance = 1e-6 * static_cast<double>(std::max<int64_t>(reduced_count, 10));
        expect_close(y, expected, dtype == ACCEL_DTYPE_BF16 ? 1e-2 : integral ? 0 : float_tolerance);
      }
    }
  }
}

// A bias gradient ([rows, 32] -> [32]) sums each column in row order, so
// the result is the sequential float sum's bits on any thread count (a
// faster split must keep that, or the training tests that compare compiled
// and eager steps move).
TEST(Reductions, ColumnSumsKeepRowOrderOnAnyThreadCount) {
  Tensor x = random_tensor(ACCEL_DTYPE_F32, {3001, 3, 32}, -1, 1, 21);
  std::vector<float> sequential(32, 0.0f);
  for (int64_t row = 0; row < 3001 * 3; ++row)
    for (int64_t column = 0; column < 32; ++column) sequential[column] += x.data<float>()[row * 32 + column];
  AccelReduceAttributes attributes{sizeof(AccelReduceAttributes), 2, {0, 1}, 0};
  for (int threads : {1, 2, 3}) {
    host_kernels::set_max_threads(threads);
    Tensor y(ACCEL_DTYPE_F32, {32});
    run(ACCEL_OP_REDUCE_SUM, {&x}, {&y}, &attributes);
    EXPECT_EQ(std::memcmp(y.data<float>(), sequential.data(), 32 * sizeof(float)), 0) << threads << " threads";
  }
  host_kernels::set_max_threads(0);
}

TEST(Reductions, KeepDimsOnlyChangesTheShapeAndBadAxesFail) {
  Tensor x = random_tensor(ACCEL_DTYPE_F32, {4, 6});
  AccelReduceAttributes attributes{sizeof(AccelReduceAttributes), 1, {1}, 0};
  Tensor y(ACCEL_DTYPE_F32, {4});
  run(ACCEL_OP_REDUCE_SUM, {&x}, {&y}, &attributes);
  expect_close(y, reference_reduce(ACCEL_OP_REDUCE_SUM, x, {1}));
  attributes.axes[0] = 2;
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_REDUCE_SUM, {&x}, {&y}, &attributes); }), ACCEL_STATUS_INVALID_ARGUMENT);
}

TEST(Reductions, ArgmaxFirstMaximumWins) {
  Tensor x = tensor_of(ACCEL_DTYPE_F32, {2, 4}, {1, 5, 5, 2, 7, 0, 7, 7});
  AccelAxisAttributes axis{sizeof(AccelAxisAttributes), 1};
  Tensor y(ACCEL_DTYPE_I64, {2});
  run(ACCEL_OP_ARGMAX, {&x}, {&y}, &axis);
  EXPECT_EQ(y.at<int64_t>(0), 1);
  EXPECT_EQ(y.at<int64_t>(1), 0);
  for (AccelDType dtype : {ACCEL_DTYPE_F32, ACCEL_DTYPE_I32, ACCEL_DTYPE_F16}) {
    Tensor z = random_tensor(dtype, {3, 5, 7}, -9, 9);
    AccelAxisAttributes middle{sizeof(AccelAxisAttributes), 1};
    Tensor out(ACCEL_DTYPE_I64, {3, 7});
    run(ACCEL_OP_ARGMAX, {&z}, {&out}, &middle);
    for (int64_t o = 0; o < 3; ++o) {
      for (int64_t k = 0; k < 7; ++k) {
        int64_t best = 0;
        for (int64_t a = 1; a < 5; ++a) {
          if (z.value((o * 5 + a) * 7 + k) > z.value((o * 5 + best) * 7 + k)) best = a;
        }
        EXPECT_EQ(out.at<int64_t>(o * 7 + k), best);
      }
    }
  }
}

TEST(Softmax, SoftmaxAndLogSoftmaxAreStable) {
  for (const Shape& shape : {Shape{3, 10}, Shape{2, 2, 1}, Shape{0, 4}, Shape{2000, 33}}) {
    Tensor x = random_tensor(ACCEL_DTYPE_F32, shape, -30, 30);
    if (x.count() > 0) x.set(0, 1000.0);  // would overflow a naive exp
    Tensor y(ACCEL_DTYPE_F32, shape), log_y(ACCEL_DTYPE_F32, shape);
    run(ACCEL_OP_SOFTMAX, {&x}, {&y});
    run(ACCEL_OP_LOG_SOFTMAX, {&x}, {&log_y});
    const int64_t classes = shape.back();
    std::vector<double> expected(static_cast<size_t>(x.count())), expected_log(expected.size());
    for (int64_t row = 0; classes > 0 && row < x.count() / classes; ++row) {
      double max = -INFINITY, sum = 0;
      for (int64_t c = 0; c < classes; ++c) max = std::max(max, x.value(row * classes + c));
      for (int64_t c = 0; c < classes; ++c) sum += std::exp(x.value(row * classes + c) - max);
      for (int64_t c = 0; c < classes; ++c) {
        expected[row * classes + c] = std::exp(x.value(row * classes + c) - max) / sum;
        expected_log[row * classes + c] = x.value(row * classes + c) - max - std::log(sum);
      }
    }
    expect_close(y, expected, 1e-5);
    expect_close(log_y, expected_log, 1e-5);
  }
}

TEST(Softmax, SparseCrossEntropyLossAndGradient) {
  for (AccelDType label_dtype : {ACCEL_DTYPE_I32, ACCEL_DTYPE_I64}) {
    Tensor logits = random_tensor(ACCEL_DTYPE_F32, {5, 7}, -4, 4);
    Tensor labels = tensor_of(label_dtype, {5}, {0, 6, 3, 3, 1});
    Tensor loss(ACCEL_DTYPE_F32, {5}), backprop(ACCEL_DTYPE_F32, {5, 7});
    run(ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY, {&logits, &labels}, {&loss, &backprop});
    std::vector<double> expected_loss, expected_grad;
    for (int64_t b = 0; b < 5; ++b) {
      double max = -INFINITY, sum = 0;
      for (int64_t c = 0; c < 7; ++c) max = std::max(max, logits.value(b * 7 + c));
      for (int64_t c = 0; c < 7; ++c) sum += std::exp(logits.value(b * 7 + c) - max);
      const int64_t label = static_cast<int64_t>(labels.value(b));
      expected_loss.push_back(std::log(sum) + max - logits.value(b * 7 + label));
      for (int64_t c = 0; c < 7; ++c) {
        expected_grad.push_back(std::exp(logits.value(b * 7 + c) - max) / sum - (c == label ? 1.0 : 0.0));
      }
    }
    expect_close(loss, expected_loss, 1e-5);
    expect_close(backprop, expected_grad, 1e-5);
  }
  Tensor logits = random_tensor(ACCEL_DTYPE_F32, {2, 3});
  Tensor labels = tensor_of(ACCEL_DTYPE_I32, {2}, {1, 3});
  Tensor loss(ACCEL_DTYPE_F32, {2}), backprop(ACCEL_DTYPE_F32, {2, 3});
  std::string message;
  EXPECT_EQ(error_code_of([&] { run(ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY, {&logits, &labels}, {&loss, &backprop}); },
                          &message),
            ACCEL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("label 3 at index 1"), std::string::npos) << message;
}

}  // namespace
}  // namespace accel::test
