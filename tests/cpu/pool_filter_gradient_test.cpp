// MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER (API 1.4) against the two ops it
// stands for, run one after the other: the same bits on the direct loop's
// path (one input channel: the pooling gradient made four images at a time)
// and on oneDNN's (several channels: through a temporary), for any batch,
// tiling and overlapping windows, on one thread and on several (each
// against the two ops on as many threads).
#include "test_tensor.hpp"

#include <algorithm>
#include <bit>
#include <string>

namespace accel::test {
namespace {

struct PoolFilterCase {
  const char* name;
  int64_t batch, height, width, channels, filter_h, filter_w, filters;
  AccelConv2dAttributes convolution;
  AccelPoolAttributes pool;
};

AccelConv2dAttributes convolution_of(int32_t stride, int32_t pad) {
  return {sizeof(AccelConv2dAttributes), stride, stride, 1, 1, pad, pad, pad, pad, 0, {}};
}

AccelPoolAttributes pool_of(int32_t window, int32_t stride, int32_t pad) {
  return {sizeof(AccelPoolAttributes), window, window, stride, stride, pad, pad, pad, pad};
}

TEST(PoolFilterGradient, IsBitwiseTheTwoOpsItStandsFor) {
  const std::vector<PoolFilterCase> cases = {
      // The tutorial CNN's first layer, 7 images: one block short of four.
      {"tutorial layer", 7, 12, 12, 1, 3, 3, 32, convolution_of(1, 0), pool_of(2, 2, 0)},
      // 13 filters (a partial vector), 'same' convolution, overlapping 3x3 windows with pads.
      {"overlapping windows", 5, 11, 9, 1, 3, 3, 13, convolution_of(1, 1), pool_of(3, 2, 1)},
      // Strided 5x5 convolution; 2x2 windows leaving a row and a column over.
      {"strided, untiled", 4, 16, 15, 1, 5, 5, 8, convolution_of(2, 2), pool_of(2, 2, 0)},
      // Three input channels: oneDNN's filter gradient, after a whole pooling gradient.
      {"three channels", 5, 9, 9, 3, 3, 3, 8, convolution_of(1, 0), pool_of(2, 2, 0)},
  };
  for (const PoolFilterCase& c : cases) {
    SCOPED_TRACE(c.name);
    const auto& conv = c.convolution;
    const int64_t out_h = out_size(c.height, c.filter_h, conv.stride_h, 1, conv.pad_top, conv.pad_bottom);
    const int64_t out_w = out_size(c.width, c.filter_w, conv.stride_w, 1, conv.pad_left, conv.pad_right);
    const int64_t pooled_h = out_size(out_h, c.pool.window_h, c.pool.stride_h, 1, c.pool.pad_top, c.pool.pad_bottom);
    const int64_t pooled_w = out_size(out_w, c.pool.window_w, c.pool.stride_w, 1, c.pool.pad_left, c.pool.pad_right);
    Tensor x = random_tensor(ACCEL_DTYPE_F32, {c.batch, c.height, c.width, c.channels}, -1, 1, 1);
    // The pooling input is a ReLU's output: many zeros, so many ties.
    Tensor pool_x = random_tensor(ACCEL_DTYPE_F32, {c.batch, out_h, out_w, c.filters}, -1, 1, 2);
    for (int64_t i = 0; i < pool_x.count(); ++i) pool_x.set(i, std::max(0.0, pool_x.value(i)));
    Tensor pool_dy = random_tensor(ACCEL_DTYPE_F32, {c.batch, pooled_h, pooled_w, c.filters}, -1, 1, 3);

    const AccelPoolFilterGradientAttributes attributes{sizeof(AccelPoolFilterGradientAttributes), conv, c.pool};
    for (int threads : {1, 2, 0}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      // (oneDNN's filter gradient may sum in another order on another thread count.)
      host_kernels::set_max_threads(threads);
      Tensor pooling_gradient(ACCEL_DTYPE_F32, pool_x.shape());
      Tensor expected(ACCEL_DTYPE_F32, {c.filter_h, c.filter_w, c.channels, c.filters});
      run(ACCEL_OP_MAX_POOL_BACKWARD, {&pool_x, &pool_dy}, {&pooling_gradient}, &c.pool);
      run(ACCEL_OP_CONV2D_BACKWARD_FILTER, {&x, &pooling_gradient}, {&expected}, &conv);
      Tensor fused(ACCEL_DTYPE_F32, expected.shape());
      run(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, {&x, &pool_x, &pool_dy}, {&fused}, &attributes);
      for (int64_t i = 0; i < expected.count(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(fused.at<float>(i)), std::bit_cast<uint32_t>(expected.at<float>(i)))
            << "filter gradient element " << i << ": " << fused.at<float>(i) << " vs " << expected.at<float>(i);
      }
    }
    host_kernels::set_max_threads(0);
  }
}

TEST(PoolFilterGradient, FlopsAreTheFilterGradients) {
  Tensor x(ACCEL_DTYPE_F32, {2, 6, 6, 1}), pool_x(ACCEL_DTYPE_F32, {2, 4, 4, 8}), pool_dy(ACCEL_DTYPE_F32, {2, 2, 2, 8});
  Tensor dfilter(ACCEL_DTYPE_F32, {3, 3, 1, 8});
  const AccelPoolFilterGradientAttributes attributes{sizeof(AccelPoolFilterGradientAttributes), convolution_of(1, 0),
                                                     pool_of(2, 2, 0)};
  const HostTensor inputs[] = {x.view(), pool_x.view(), pool_dy.view()};
  const HostTensor outputs[] = {dfilter.view()};
  const HostTensor plain_inputs[] = {x.view(), pool_x.view()};
  EXPECT_EQ(host_kernels::flops(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, inputs, outputs, &attributes),
            host_kernels::flops(ACCEL_OP_CONV2D_BACKWARD_FILTER, plain_inputs, outputs, &attributes.convolution));
  EXPECT_EQ(host_kernels::flops(ACCEL_OP_CONV2D_BACKWARD_FILTER, plain_inputs, outputs, &attributes.convolution),
            2.0 * 2 * 4 * 4 * 8 * 9);
  EXPECT_TRUE(host_kernels::supports(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, ACCEL_DTYPE_F32));
  EXPECT_FALSE(host_kernels::supports(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, ACCEL_DTYPE_I32));
}

TEST(PoolFilterGradient, BadOperandsAreInvalidArgumentsNamingTheCall) {
  Tensor x(ACCEL_DTYPE_F32, {2, 6, 6, 1}), pool_x(ACCEL_DTYPE_F32, {2, 4, 4, 8}), pool_dy(ACCEL_DTYPE_F32, {2, 2, 2, 8});
  Tensor dfilter(ACCEL_DTYPE_F32, {3, 3, 1, 8});
  AccelPoolFilterGradientAttributes attributes{sizeof(AccelPoolFilterGradientAttributes), convolution_of(1, 0),
                                               pool_of(2, 2, 0)};
  std::string message;
  Tensor wrong_pooled(ACCEL_DTYPE_F32, {2, 3, 3, 8});  // 2x2 windows over 4x4 give 2x2
  EXPECT_EQ(error_code_of(
                [&] {
                  run(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, {&x, &pool_x, &wrong_pooled}, {&dfilter},
                      &attributes);
                },
                &message),
            ACCEL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER(float32[2,6,6,1], float32[2,4,4,8], "
                         "float32[2,3,3,8] -> float32[3,3,1,8])"),
            std::string::npos)
      << message;
  Tensor wrong_channels(ACCEL_DTYPE_F32, {2, 2, 2, 4});
  EXPECT_EQ(error_code_of([&] {
              run(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, {&x, &pool_x, &wrong_channels}, {&dfilter},
                  &attributes);
            }),
            ACCEL_STATUS_INVALID_ARGUMENT);
  attributes.convolution.epilogue_flags = ACCEL_EPILOGUE_BIAS;
  EXPECT_EQ(error_code_of(
                [&] {
                  run(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, {&x, &pool_x, &pool_dy}, {&dfilter},
                      &attributes);
                },
                &message),
            ACCEL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("takes no epilogue"), std::string::npos) << message;
  EXPECT_EQ(error_code_of([&] {
              run(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, {&x, &pool_x}, {&dfilter}, &attributes);
            }),
            ACCEL_STATUS_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace accel::test
