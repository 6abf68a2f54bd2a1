// FUSED_ELEMENTWISE against the same ops run one by one, on the CNN shapes a
// compiled training step fuses: the ReLU gradient of a 256x26x26x32
// activation together with its bias gradient (RELU_BACKWARD + REDUCE_SUM over
// N, H, W), and a bias + sigmoid + scale chain. Median time per call at 1 and
// 2 threads, and the speed-up of the fusion.
#include "bench_timing.hpp"
#include "host_tensor.hpp"

#include <accel/plugin/host_kernels.hpp>

#include <cstdio>
#include <vector>

namespace {

using accel::host_kernels::HostTensor;

using accel::bench::tensor;

AccelFusedInstruction load(int32_t input) { return {ACCEL_FUSED_LOAD, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, {input, 0, 0}, 0.0}; }
AccelFusedInstruction constant(double value) {
  return {ACCEL_FUSED_CONSTANT, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, {0, 0, 0}, value};
}
AccelFusedInstruction op(AccelOp op, int32_t a, int32_t b = 0) { return {ACCEL_FUSED_OP, op, ACCEL_DTYPE_F32, {a, b, 0}, 0.0}; }

void report(const char* name, int threads, double unfused, double fused, double bytes_fused) {
  std::printf("%-34s %3d %12.3f %12.3f %8.2fx %10.1f\n", name, threads, unfused * 1e3, fused * 1e3, unfused / fused,
              bytes_fused / fused * 1e-9);
}

}  // namespace

int main() {
  using accel::host_kernels::execute;
  const std::vector<int64_t> shape{256, 26, 26, 32};
  const int64_t count = 256 * 26 * 26 * 32;
  std::vector<float> x(count), dy(count), dx(count), bias_gradient(32), chain(count), temporary(count), bias(32);
  for (int64_t i = 0; i < count; ++i) {
    x[i] = static_cast<float>((i * 7919) % 1000) / 500.0f - 1.0f;
    dy[i] = static_cast<float>((i * 104729) % 1000) / 1000.0f - 0.5f;
  }
  for (int i = 0; i < 32; ++i) bias[i] = 0.01f * static_cast<float>(i);
  const HostTensor tx = tensor(ACCEL_DTYPE_F32, shape, x.data()), tdy = tensor(ACCEL_DTYPE_F32, shape, dy.data());
  const HostTensor tdx = tensor(ACCEL_DTYPE_F32, shape, dx.data());
  const HostTensor tdb = tensor(ACCEL_DTYPE_F32, {32}, bias_gradient.data());
  const HostTensor tbias = tensor(ACCEL_DTYPE_F32, {32}, bias.data());
  const HostTensor tchain = tensor(ACCEL_DTYPE_F32, shape, chain.data());
  const HostTensor ttemporary = tensor(ACCEL_DTYPE_F32, shape, temporary.data());
  const AccelReduceAttributes over_nhw{sizeof(AccelReduceAttributes), 3, {0, 1, 2}, 0};

  // dx = relu_backward(dy, x); db = reduce_sum(dx, {0, 1, 2}).
  const AccelFusedInstruction gradient_program[] = {load(0), load(1), op(ACCEL_OP_RELU_BACKWARD, 0, 1)};
  const AccelFusedOutput gradient_outputs[] = {{2, static_cast<AccelOp>(0), 0, {}, 0},
                                               {2, ACCEL_OP_REDUCE_SUM, 3, {0, 1, 2}, 0}};
  const AccelFusedElementwiseAttributes gradient{sizeof(AccelFusedElementwiseAttributes), 4, {256, 26, 26, 32}, 3,
                                                 gradient_program, 2, gradient_outputs};
  // y = sigmoid(x + bias) * 0.5.
  const AccelFusedInstruction chain_program[] = {load(0), load(1), op(ACCEL_OP_ADD, 0, 1), op(ACCEL_OP_SIGMOID, 2),
                                                 constant(0.5), op(ACCEL_OP_MUL, 3, 4)};
  const AccelFusedOutput chain_output[] = {{5, static_cast<AccelOp>(0), 0, {}, 0}};
  const AccelFusedElementwiseAttributes chain_attributes{sizeof(AccelFusedElementwiseAttributes), 4, {256, 26, 26, 32},
                                                         6, chain_program, 1, chain_output};
  const HostTensor gradient_inputs[] = {tdy, tx}, gradient_results[] = {tdx, tdb};
  const HostTensor chain_inputs[] = {tx, tbias};
  static float half_value = 0.5f;
  const HostTensor scale = tensor(ACCEL_DTYPE_F32, {}, &half_value);

  std::printf("%-34s %3s %12s %12s %9s %10s\n", "fusion (256x26x26x32 float)", "thr", "unfused ms", "fused ms",
              "speed-up", "fused GB/s");
  const double bytes = static_cast<double>(count) * sizeof(float);
  for (int threads : {1, 2}) {
    accel::host_kernels::set_max_threads(threads);
    const auto gradient_seconds = accel::bench::interleaved_median_seconds({
        [&] {
          execute(ACCEL_OP_RELU_BACKWARD, gradient_inputs, {&tdx, 1}, nullptr);
          execute(ACCEL_OP_REDUCE_SUM, {&tdx, 1}, {&tdb, 1}, &over_nhw);
        },
        [&] { execute(ACCEL_OP_FUSED_ELEMENTWISE, gradient_inputs, gradient_results, &gradient); },
    });
    report("relu_backward + bias gradient", threads, gradient_seconds[0], gradient_seconds[1], 3 * bytes);
    const auto chain_seconds = accel::bench::interleaved_median_seconds({
        [&] {
          execute(ACCEL_OP_ADD, chain_inputs, {&ttemporary, 1}, nullptr);
          execute(ACCEL_OP_SIGMOID, {&ttemporary, 1}, {&tchain, 1}, nullptr);
          const HostTensor operands[] = {tchain, scale};
          execute(ACCEL_OP_MUL, operands, {&ttemporary, 1}, nullptr);
        },
        [&] { execute(ACCEL_OP_FUSED_ELEMENTWISE, chain_inputs, {&tchain, 1}, &chain_attributes); },
    });
    report("add bias + sigmoid + scale", threads, chain_seconds[0], chain_seconds[1], 2 * bytes);
  }
  accel::host_kernels::set_max_threads(0);
  return 0;
}
