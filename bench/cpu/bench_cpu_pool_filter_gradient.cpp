// MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER against the two ops it stands
// for, on the tutorial CNN's shapes at batch 256 (a 256x26x26x32 pooling
// input, 2x2 windows, a 3x3x1x32 filter).
//
// Run one after the other, the pooling gradient writes a 22 MB tensor to
// memory and the filter gradient reads it back. The fused op (plugin API 1.4,
// which compiled steps emit on the CPU) makes the pooling gradient four
// images at a time into a 346 KB scratch that stays in the second-level
// cache, just before the filter gradient sums those images, so the 22 MB
// never goes to memory. Both give the same bits (checked below; the program
// exits 1 otherwise).
#include "bench_timing.hpp"
#include "host_tensor.hpp"

#include <accel/plugin/host_kernels.hpp>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

using accel::host_kernels::HostTensor;

constexpr int64_t kBatch = 256, kImage = 28, kOut = 26, kPooled = 13, kFilters = 32, kTaps = 9;

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
  std::vector<float> activation_gradient(activation.size()), separate(kTaps * kFilters), fused(kTaps * kFilters);

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
  const AccelPoolFilterGradientAttributes fused_attributes{sizeof(AccelPoolFilterGradientAttributes), convolution,
                                                           pool};
  const HostTensor fused_inputs[] = {filter_inputs[0], pool_inputs[0], pool_inputs[1]};
  const HostTensor fused_output = tensor({3, 3, 1, kFilters}, fused.data());
  auto run_fused = [&] {
    accel::host_kernels::execute(ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, fused_inputs, {&fused_output, 1},
                                 &fused_attributes);
  };

  std::printf("%-44s %3s %12s %12s %9s\n", "max pool gradient + filter gradient (b256)", "thr", "separate ms",
              "fused ms", "speed-up");
  for (int threads : {1, 2}) {
    accel::host_kernels::set_max_threads(threads);
    const auto seconds = accel::bench::interleaved_median_seconds({run_separate, run_fused});
    std::printf("%-44s %3d %12.3f %12.3f %8.2fx\n", "", threads, seconds[0] * 1e3, seconds[1] * 1e3,
                seconds[0] / seconds[1]);
  }
  accel::host_kernels::set_max_threads(0);
  run_separate();
  run_fused();
  const bool same_bits = std::memcmp(separate.data(), fused.data(), separate.size() * sizeof(float)) == 0;
  std::printf("filter gradients bitwise equal: %s\n", same_bits ? "yes" : "NO");
  std::printf("memory traffic avoided per call: %.1f MB (the pooling gradient written and read back)\n",
              2.0 * static_cast<double>(activation.size()) * sizeof(float) / 1e6);
  return same_bits ? 0 : 1;
}
