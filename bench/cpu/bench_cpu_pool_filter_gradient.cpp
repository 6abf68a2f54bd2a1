// What fusing MAX_POOL_BACKWARD into the CONV2D_BACKWARD_FILTER that reads
// its result would save, on the tutorial CNN's shapes at batch 256 (a
// 256x26x26x32 pooling input, 2x2 windows, a 3x3x1x32 filter).
//
// A compiled step runs the two ops one after the other today: the pooling
// gradient writes a 22 MB tensor to memory and the filter gradient reads it
// back. "blocked" runs the same two kernels four images at a time, the pooling
// gradient into a 346 KB scratch that stays in the second-level cache, so that
// the 22 MB never goes to memory. The filter gradient already sums blocks of
// four images in block order, so both give the same bits (checked below).
//
// Not a product path: no op carries this fusion yet. This program measures
// the gain first (docs/PERFORMANCE.md, "Next levers").
#include "bench_timing.hpp"
#include "host_tensor.hpp"
#include "kernel_support.hpp"
#include "kernels.hpp"

#include <accel/plugin/host_kernels.hpp>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

using accel::host_kernels::HostTensor;
namespace detail = accel::host_kernels::detail;

constexpr int64_t kBatch = 256, kImage = 28, kOut = 26, kPooled = 13, kFilters = 32, kTaps = 9;
constexpr int64_t kImagesPerBlock = 4;  // as filter_gradient.cpp's blocks

HostTensor tensor(const std::vector<int64_t>& shape, float* data) {
  return accel::bench::tensor(ACCEL_DTYPE_F32, shape, data);
}

std::vector<float> random_values(int64_t count, bool non_negative) {
  std::vector<float> values(static_cast<size_t>(count));
  std::mt19937 engine(5);
  std::uniform_real_distribution<float> uniform(non_negative ? 0.0f : -1.0f, 1.0f);
  for (float& v : values) v = uniform(engine);
  return values;
}

}  // namespace

int main() {
  const std::vector<float> x = random_values(kBatch * kImage * kImage, false);
  // The pooling input is a ReLU's output, as in the CNN.
  std::vector<float> activation = random_values(kBatch * kOut * kOut * kFilters, true);
  std::vector<float> pooled_gradient = random_values(kBatch * kPooled * kPooled * kFilters, false);
  std::vector<float> activation_gradient(activation.size()), separate(kTaps * kFilters), blocked(kTaps * kFilters);
  const int64_t blocks = kBatch / kImagesPerBlock, block_activation = kImagesPerBlock * kOut * kOut * kFilters;
  std::vector<float> block_sums(static_cast<size_t>(blocks * kTaps * kFilters));

  const AccelPoolAttributes pool{sizeof(AccelPoolAttributes), 2, 2, 2, 2, 0, 0, 0, 0};
  AccelConv2dAttributes convolution{};
  convolution.struct_size = sizeof convolution;
  convolution.stride_h = convolution.stride_w = convolution.dilation_h = convolution.dilation_w = 1;
  const HostTensor pool_inputs[] = {tensor({kBatch, kOut, kOut, kFilters}, activation.data()),
                                    tensor({kBatch, kPooled, kPooled, kFilters}, pooled_gradient.data())};
  const HostTensor pool_output = tensor({kBatch, kOut, kOut, kFilters}, activation_gradient.data());
  const HostTensor filter_inputs[] = {tensor({kBatch, kImage, kImage, 1}, const_cast<float*>(x.data())), pool_output};
  const HostTensor filter_output = tensor({3, 3, 1, kFilters}, separate.data());

  auto run_separate = [&] {
    accel::host_kernels::execute(ACCEL_OP_MAX_POOL_BACKWARD, pool_inputs, {&pool_output, 1}, &pool);
    accel::host_kernels::execute(ACCEL_OP_CONV2D_BACKWARD_FILTER, filter_inputs, {&filter_output, 1}, &convolution);
  };
  const detail::ConvGeometry block_geometry{kImagesPerBlock, kImage, kImage, 1, 3, 3, kFilters, kOut, kOut,
                                            1, 1, 1, 1, 0, 0, 0, 0};
  auto run_blocked = [&] {
    detail::parallel_ranges(blocks, 1, [&](int64_t begin, int64_t end) {
      thread_local std::vector<float> scratch(static_cast<size_t>(block_activation));
      for (int64_t block = begin; block < end; ++block) {
        const HostTensor block_activation_tensor =
            tensor({kImagesPerBlock, kOut, kOut, kFilters}, activation.data() + block * block_activation);
        const HostTensor block_gradient = tensor({kImagesPerBlock, kPooled, kPooled, kFilters},
                                                 pooled_gradient.data() + block * kImagesPerBlock * kPooled * kPooled * kFilters);
        detail::max_pool_backward(block_activation_tensor, block_gradient,
                                  tensor({kImagesPerBlock, kOut, kOut, kFilters}, scratch.data()), pool);
        detail::direct_filter_gradient(block_geometry, x.data() + block * kImagesPerBlock * kImage * kImage, scratch.data(),
                                       block_sums.data() + block * kTaps * kFilters);
      }
    });
    std::fill(blocked.begin(), blocked.end(), 0.0f);
    for (int64_t block = 0; block < blocks; ++block)
      for (int64_t i = 0; i < kTaps * kFilters; ++i) blocked[i] += block_sums[block * kTaps * kFilters + i];
  };

  std::printf("%-44s %3s %12s %12s %9s\n", "max pool gradient + filter gradient (b256)", "thr", "separate ms",
              "blocked ms", "speed-up");
  for (int threads : {1, 2}) {
    accel::host_kernels::set_max_threads(threads);
    const auto seconds = accel::bench::interleaved_median_seconds({run_separate, run_blocked});
    std::printf("%-44s %3d %12.3f %12.3f %8.2fx\n", "", threads, seconds[0] * 1e3, seconds[1] * 1e3,
                seconds[0] / seconds[1]);
  }
  accel::host_kernels::set_max_threads(0);
  run_separate();
  run_blocked();
  const bool same_bits = std::memcmp(separate.data(), blocked.data(), separate.size() * sizeof(float)) == 0;
  std::printf("filter gradients bitwise equal: %s\n", same_bits ? "yes" : "NO");
  std::printf("memory traffic avoided per call: %.1f MB (the pooling gradient written and read back)\n",
              2.0 * static_cast<double>(activation.size()) * sizeof(float) / 1e6);
  return same_bits ? 0 : 1;
}
