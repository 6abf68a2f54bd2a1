// The kernels that take BF16 operands themselves (dispatch.cpp's
// runs_in_16_bit) against the same call staged through float32 copies, as
// ACCEL_CPU_BF16_KERNELS=0 runs it:
//  - accel's own memory-bound kernels (batch norm and its gradient, max
//    pooling, the pooled filter gradient, unary ops) widen as they read and
//    round as they store, so they give the staged bits exactly, on any CPU;
//  - matmuls and convolutions on oneDNN's bf16 kernels (CPUs with
//    AVX512_BF16 or AMX only) accumulate in float32 in another order and
//    round once, so they agree with staging to within bf16 rounding; their
//    epilogues, asked to round as the plain ops, give the plain ops' bits.
#include "test_tensor.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace accel::test {
namespace {

// Sets ACCEL_CPU_BF16_KERNELS=0 for its lifetime.
class StagedThroughFloat32 {
 public:
  StagedThroughFloat32() { setenv("ACCEL_CPU_BF16_KERNELS", "0", 1); }
  ~StagedThroughFloat32() { unsetenv("ACCEL_CPU_BF16_KERNELS"); }
  StagedThroughFloat32(const StagedThroughFloat32&) = delete;
  StagedThroughFloat32& operator=(const StagedThroughFloat32&) = delete;
};

bool cpu_has_bf16_instructions() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string word;
  while (cpuinfo >> word) {
    if (word == "avx512_bf16" || word == "amx_bf16") return true;
  }
  return false;
}

// Runs `op` twice into fresh outputs of the same dtypes and shapes: as shipped, then staged.
struct TwoRuns {
  std::vector<Tensor> shipped, staged;
};
using Outputs = std::vector<std::pair<AccelDType, Shape>>;

TwoRuns run_both(AccelOp op, const std::vector<const Tensor*>& inputs, const Outputs& outputs, const void* attributes) {
  TwoRuns runs;
  auto execute = [&](std::vector<Tensor>& into) {
    into.reserve(outputs.size());
    for (const auto& [dtype, shape] : outputs) into.emplace_back(dtype, shape);
    std::vector<HostTensor> in, out;
    for (const Tensor* t : inputs) in.push_back(t->view());
    for (Tensor& t : into) out.push_back(t.view());
    host_kernels::execute(op, in, out, attributes);
  };
  execute(runs.shipped);
  StagedThroughFloat32 staged;
  execute(runs.staged);
  return runs;
}

void expect_same_bits(const TwoRuns& runs) {
  for (size_t o = 0; o < runs.shipped.size(); ++o) {
    const Tensor& a = runs.shipped[o];
    const Tensor& b = runs.staged[o];
    ASSERT_EQ(a.count(), b.count());
    const size_t bytes = static_cast<size_t>(a.count()) * sdk::dtype_size(a.dtype());
    EXPECT_EQ(std::memcmp(a.data<unsigned char>(), b.data<unsigned char>(), bytes), 0) << "output " << o;
  }
}

// Within two bf16 roundings of the staged value, relative to the output's largest magnitude.
void expect_within_bf16_rounding(const TwoRuns& runs) {
  for (size_t o = 0; o < runs.shipped.size(); ++o) {
    const Tensor& a = runs.shipped[o];
    const Tensor& b = runs.staged[o];
    double largest = 0;
    for (int64_t i = 0; i < b.count(); ++i) largest = std::max(largest, std::fabs(b.value(i)));
    for (int64_t i = 0; i < a.count(); ++i) {
      ASSERT_NEAR(a.value(i), b.value(i), std::ldexp(std::fabs(b.value(i)), -7) + std::ldexp(largest, -9))
          << "output " << o << " at flat index " << i;
    }
  }
}

AccelConv2dAttributes convolution_of(int32_t stride, int32_t pad_before, int32_t pad_after, int32_t flags = 0) {
  return {sizeof(AccelConv2dAttributes), stride,     stride, 1, 1, pad_before, pad_after, pad_before, pad_after,
          flags,                         ACCEL_OP_RELU};
}

AccelPoolAttributes pool_of(int32_t window, int32_t stride, int32_t pad) {
  return {sizeof(AccelPoolAttributes), window, window, stride, stride, pad, pad, pad, pad};
}

TEST(Bf16OwnKernels, BatchNormAndItsGradientGiveTheStagedBits) {
  const AccelBatchNormAttributes attributes{sizeof(AccelBatchNormAttributes), 1e-3};
  for (AccelDType per_feature : {ACCEL_DTYPE_F32, ACCEL_DTYPE_BF16}) {
    SCOPED_TRACE(sdk::dtype_name(per_feature));
    const Tensor x = random_tensor(ACCEL_DTYPE_BF16, {6, 5, 7, 19}, -3, 5, 1);
    const Tensor scale = random_tensor(per_feature, {19}, 0.5, 2, 2), offset = random_tensor(per_feature, {19}, -1, 1, 3);
    const Outputs forward_outputs{{ACCEL_DTYPE_BF16, {6, 5, 7, 19}}, {per_feature, {19}}, {per_feature, {19}}};
    const TwoRuns forward = run_both(ACCEL_OP_BATCH_NORM, {&x, &scale, &offset}, forward_outputs, &attributes);
    expect_same_bits(forward);

    const Tensor dy = random_tensor(ACCEL_DTYPE_BF16, {6, 5, 7, 19}, -1, 1, 4);
    const Tensor& mean = forward.staged[1];
    const Tensor& variance = forward.staged[2];
    const Outputs backward_outputs{{ACCEL_DTYPE_BF16, {6, 5, 7, 19}}, {per_feature, {19}}, {per_feature, {19}}};
    expect_same_bits(run_both(ACCEL_OP_BATCH_NORM_BACKWARD, {&dy, &x, &scale, &mean, &variance}, backward_outputs,
                              &attributes));
  }
}

TEST(Bf16OwnKernels, MaxPoolingGivesTheStagedBits) {
  Tensor x = random_tensor(ACCEL_DTYPE_BF16, {3, 12, 10, 21}, -2, 2, 5);
  x.set(7, std::nan(""));  // a NaN is never a window's maximum
  x.set(30, -INFINITY);
  for (const AccelPoolAttributes& pool : {pool_of(2, 2, 0), pool_of(3, 2, 1)}) {
    const int64_t out_h = out_size(12, pool.window_h, pool.stride_h, 1, pool.pad_top, pool.pad_bottom);
    const int64_t out_w = out_size(10, pool.window_w, pool.stride_w, 1, pool.pad_left, pool.pad_right);
    expect_same_bits(run_both(ACCEL_OP_MAX_POOL, {&x}, {{ACCEL_DTYPE_BF16, {3, out_h, out_w, 21}}}, &pool));
  }
}

TEST(Bf16OwnKernels, PooledFilterGradientGivesTheStagedBits) {
  // One input channel (the direct loop, pooling gradient made a block at a
  // time) and three (the two ops through a temporary).
  for (int64_t channels : {1, 3}) {
    SCOPED_TRACE(channels);
    const Tensor x = random_tensor(ACCEL_DTYPE_BF16, {9, 14, 14, channels}, -1, 1, 6);
    const Tensor pool_x = random_tensor(ACCEL_DTYPE_BF16, {9, 12, 12, 16}, -1, 1, 7);
    const Tensor pool_dy = random_tensor(ACCEL_DTYPE_BF16, {9, 6, 6, 16}, -1, 1, 8);
    const AccelPoolFilterGradientAttributes attributes{sizeof(AccelPoolFilterGradientAttributes), convolution_of(1, 0, 0),
                                                       pool_of(2, 2, 0)};
    expect_same_bits(run_both(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, {&x, &pool_x, &pool_dy},
                              {{ACCEL_DTYPE_BF16, {3, 3, channels, 16}}}, &attributes));
  }
}

TEST(Bf16OwnKernels, UnaryOpsGiveTheStagedBits) {
  Tensor x = random_tensor(ACCEL_DTYPE_BF16, {70001}, -6, 6, 9);  // more than one parallel chunk
  x.set(0, std::nan(""));
  x.set(1, INFINITY);
  x.set(2, -0.0);
  for (AccelOp op : {ACCEL_OP_RELU, ACCEL_OP_NEG, ACCEL_OP_ABS, ACCEL_OP_SQUARE, ACCEL_OP_SIGN, ACCEL_OP_EXP,
                     ACCEL_OP_SIGMOID, ACCEL_OP_TANH, ACCEL_OP_ERF, ACCEL_OP_SQRT, ACCEL_OP_LOG, ACCEL_OP_RSQRT,
                     ACCEL_OP_RECIPROCAL}) {
    SCOPED_TRACE(host_kernels::op_name(op));
    expect_same_bits(run_both(op, {&x}, {{ACCEL_DTYPE_BF16, {70001}}}, nullptr));
  }
}

class Bf16OneDnnKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu_has_bf16_instructions()) {
      GTEST_SKIP() << "this CPU has no AVX512_BF16 or AMX: BF16 matmuls and convolutions are staged through "
                      "float32 here, which the other suites test";
    }
  }
};

TEST_F(Bf16OneDnnKernels, MatmulsAgreeWithStagingWithinRounding) {
  struct Case {
    Shape a, b, y;
    int32_t transpose_a, transpose_b;
  };
  for (const Case& c : std::vector<Case>{{{67, 129}, {129, 33}, {67, 33}, 0, 0},
                                         {{129, 67}, {33, 129}, {67, 33}, 1, 1},
                                         {{4, 9, 31}, {31, 12}, {4, 9, 12}, 0, 0},      // one tall product
                                         {{4, 9, 31}, {4, 31, 12}, {4, 9, 12}, 0, 0},   // a batch
                                         {{256, 600}, {600, 10}, {256, 10}, 0, 0}}) {  // a narrow one
    SCOPED_TRACE(::testing::Message() << "a rank " << c.a.size() << " transposes " << c.transpose_a << c.transpose_b);
    const Tensor a = random_tensor(ACCEL_DTYPE_BF16, c.a, -1, 1, 10), b = random_tensor(ACCEL_DTYPE_BF16, c.b, -1, 1, 11);
    const AccelMatmulAttributes attributes{sizeof(AccelMatmulAttributes), c.transpose_a, c.transpose_b, 0, {}};
    expect_within_bf16_rounding(run_both(ACCEL_OP_MATMUL, {&a, &b}, {{ACCEL_DTYPE_BF16, c.y}}, &attributes));
  }
}

TEST_F(Bf16OneDnnKernels, ConvolutionsAgreeWithStagingWithinRounding) {
  struct Case {
    const char* name;
    int64_t height, channels, filter, filters;
    AccelConv2dAttributes geometry;
  };
  for (const Case& c : std::vector<Case>{{"one input channel", 16, 1, 3, 32, convolution_of(1, 0, 0)},
                                         {"3x3 same", 10, 32, 3, 32, convolution_of(1, 1, 1)},
                                         {"3x3 stride 2, pad after only", 10, 16, 3, 48, convolution_of(2, 0, 1)},
                                         {"1x1 stride 2", 10, 32, 1, 64, convolution_of(2, 0, 0)}}) {
    SCOPED_TRACE(c.name);
    const int64_t out = out_size(c.height, c.filter, c.geometry.stride_h, 1, c.geometry.pad_top, c.geometry.pad_bottom);
    const Shape x_shape{5, c.height, c.height, c.channels}, filter_shape{c.filter, c.filter, c.channels, c.filters},
        y_shape{5, out, out, c.filters};
    const Tensor x = random_tensor(ACCEL_DTYPE_BF16, x_shape, -1, 1, 12);
    const Tensor filter = random_tensor(ACCEL_DTYPE_BF16, filter_shape, -1, 1, 13);
    const Tensor dy = random_tensor(ACCEL_DTYPE_BF16, y_shape, -1, 1, 14);
    expect_within_bf16_rounding(run_both(ACCEL_OP_CONV2D, {&x, &filter}, {{ACCEL_DTYPE_BF16, y_shape}}, &c.geometry));
    expect_within_bf16_rounding(
        run_both(ACCEL_OP_CONV2D_BACKWARD_INPUT, {&dy, &filter}, {{ACCEL_DTYPE_BF16, x_shape}}, &c.geometry));
    expect_within_bf16_rounding(
        run_both(ACCEL_OP_CONV2D_BACKWARD_FILTER, {&x, &dy}, {{ACCEL_DTYPE_BF16, filter_shape}}, &c.geometry));
  }
}

TEST_F(Bf16OneDnnKernels, EpiloguesRoundingAsThePlainOpsGiveTheirBits) {
  const Tensor a = random_tensor(ACCEL_DTYPE_BF16, {37, 45}, -1, 1, 15), b = random_tensor(ACCEL_DTYPE_BF16, {45, 29}, -1, 1, 16);
  const Tensor bias = random_tensor(ACCEL_DTYPE_BF16, {29}, -1, 1, 17);
  for (AccelOp activation : {ACCEL_OP_RELU, ACCEL_OP_SIGMOID, ACCEL_OP_TANH}) {
    SCOPED_TRACE(host_kernels::op_name(activation));
    const AccelMatmulAttributes fused{sizeof(AccelMatmulAttributes), 0, 0,
                                      ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION, activation};
    Tensor y(ACCEL_DTYPE_BF16, {37, 29});
    host_kernels::execute(ACCEL_OP_MATMUL, std::vector<HostTensor>{a.view(), b.view(), bias.view()},
                          std::vector<HostTensor>{y.view()}, &fused, host_kernels::EpilogueRounding::kAsPlainOps);
    Tensor product(ACCEL_DTYPE_BF16, {37, 29}), sum(ACCEL_DTYPE_BF16, {37, 29}), plain(ACCEL_DTYPE_BF16, {37, 29});
    const AccelMatmulAttributes none{sizeof(AccelMatmulAttributes), 0, 0, 0, {}};
    run(ACCEL_OP_MATMUL, {&a, &b}, {&product}, &none);
    run(ACCEL_OP_ADD, {&product, &bias}, {&sum});
    run(activation, {&sum}, {&plain});
    EXPECT_EQ(std::memcmp(y.data<uint16_t>(), plain.data<uint16_t>(), static_cast<size_t>(y.count()) * 2), 0);
  }
}

}  // namespace
}  // namespace accel::test
