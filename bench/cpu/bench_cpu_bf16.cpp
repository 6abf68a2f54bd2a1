// The ops of a mixed_bfloat16 training step on the CPU, each three ways, side
// by side in one process and interleaved sample by sample: float32, bfloat16
// staged through float32 copies (ACCEL_CPU_BF16_KERNELS=0: what every op did
// before it took BF16 itself, and what the ops without a 16-bit kernel still
// do), and bfloat16 as shipped (oneDNN's bf16 kernels on CPUs with
// AVX512_BF16 or AMX; accel's own memory-bound kernels widening as they read
// on every CPU). The shapes are the tutorial CNN's and the small ResNet's at
// batch 256 (bench_training_throughput's models). Prints milliseconds per
// call and the ratios float32 / bf16 and staged / bf16 (> 1: bf16 as shipped
// is faster), then the sums. Threads: ACCEL_CPU_THREADS (default 2).
//
//   bench_cpu_bf16 [filter]   (only the rows whose name contains `filter`)
#include "bench_timing.hpp"
#include "host_tensor.hpp"

#include <accel/plugin/host_kernels.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using accel::host_kernels::HostTensor;
namespace host_kernels = accel::host_kernels;

// One operand, held in float32 and in bfloat16 (the same values, rounded).
struct Operand {
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<uint16_t> bf16;

  explicit Operand(std::vector<int64_t> dims) : shape(std::move(dims)) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    f32 = accel::bench::random_values(count);
    bf16.resize(f32.size());
    for (size_t i = 0; i < f32.size(); ++i) bf16[i] = accel::sdk::float_to_bf16(f32[i]);
  }
  HostTensor view(AccelDType dtype) {
    return accel::bench::tensor(dtype, shape, dtype == ACCEL_DTYPE_F32 ? static_cast<void*>(f32.data()) : bf16.data());
  }
};

// One op call: inputs, outputs and attributes, run in either dtype.
struct Case {
  std::string name;
  AccelOp op;
  std::vector<Operand> inputs, outputs;
  std::function<const void*()> attributes;
  // Operands that stay float32 in the bf16 runs (a batch norm's per-feature
  // ones, as Keras keeps them under mixed_bfloat16): their indices.
  std::vector<size_t> float32_inputs = {}, float32_outputs = {};

  void run(AccelDType dtype) {
    auto dtype_of = [&](const std::vector<size_t>& float32, size_t i) {
      return std::find(float32.begin(), float32.end(), i) != float32.end() ? ACCEL_DTYPE_F32 : dtype;
    };
    std::vector<HostTensor> in, out;
    for (size_t i = 0; i < inputs.size(); ++i) in.push_back(inputs[i].view(dtype_of(float32_inputs, i)));
    for (size_t i = 0; i < outputs.size(); ++i) out.push_back(outputs[i].view(dtype_of(float32_outputs, i)));
    host_kernels::execute(op, in, out, attributes());
  }
};

void set_staging(bool staged) {
  if (staged) {
    setenv("ACCEL_CPU_BF16_KERNELS", "0", 1);
  } else {
    unsetenv("ACCEL_CPU_BF16_KERNELS");
  }
}

AccelConv2dAttributes convolution(int64_t stride, int64_t pad) {
  AccelConv2dAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  attributes.stride_h = attributes.stride_w = static_cast<int32_t>(stride);
  attributes.dilation_h = attributes.dilation_w = 1;
  attributes.pad_top = attributes.pad_left = static_cast<int32_t>(pad);
  attributes.pad_bottom = attributes.pad_right = static_cast<int32_t>(stride == 1 ? pad : 0);
  return attributes;
}

// A layer: x [n, h, w, c] -> y [n, oh, ow, k] with an r x r filter.
void add_convolution(std::vector<Case>& cases, const std::string& name, int64_t n, int64_t h, int64_t c, int64_t k,
                     int64_t r, int64_t stride, int64_t pad, bool input_gradient) {
  const int64_t oh = (h + pad + (stride == 1 ? pad : 0) - r) / stride + 1;
  auto attributes = std::make_shared<AccelConv2dAttributes>(convolution(stride, pad));
  auto get = [attributes] { return static_cast<const void*>(attributes.get()); };
  const std::vector<int64_t> x{n, h, h, c}, filter{r, r, c, k}, y{n, oh, oh, k};
  cases.push_back({name + " forward", ACCEL_OP_CONV2D, {Operand(x), Operand(filter)}, {Operand(y)}, get});
  if (input_gradient) {
    cases.push_back(
        {name + " input gradient", ACCEL_OP_CONV2D_BACKWARD_INPUT, {Operand(y), Operand(filter)}, {Operand(x)}, get});
  }
  cases.push_back(
      {name + " filter gradient", ACCEL_OP_CONV2D_BACKWARD_FILTER, {Operand(x), Operand(y)}, {Operand(filter)}, get});
}

std::vector<Case> make_cases() {
  std::vector<Case> cases;
  const int64_t n = 256;
  // The tutorial CNN: Conv2D(32, 3x3, relu) on 28x28x1, MaxPooling2D(2x2), Dense(10).
  add_convolution(cases, "cnn conv 28x28x1->32", n, 28, 1, 32, 3, 1, 0, false);
  auto pool = std::make_shared<AccelPoolAttributes>();
  pool->struct_size = sizeof(AccelPoolAttributes);
  pool->window_h = pool->window_w = pool->stride_h = pool->stride_w = 2;
  cases.push_back({"cnn max pool 26x26x32", ACCEL_OP_MAX_POOL, {Operand({n, 26, 26, 32})}, {Operand({n, 13, 13, 32})},
                   [pool] { return static_cast<const void*>(pool.get()); }});
  auto pooled = std::make_shared<AccelPoolFilterGradientAttributes>();
  pooled->struct_size = sizeof(AccelPoolFilterGradientAttributes);
  pooled->convolution = convolution(1, 0);
  pooled->pool = *pool;
  cases.push_back({"cnn pooled filter gradient", ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER,
                   {Operand({n, 28, 28, 1}), Operand({n, 26, 26, 32}), Operand({n, 13, 13, 32})},
                   {Operand({3, 3, 1, 32})}, [pooled] { return static_cast<const void*>(pooled.get()); }});
  auto plain = std::make_shared<AccelMatmulAttributes>();
  plain->struct_size = sizeof(AccelMatmulAttributes);
  auto transpose_a = std::make_shared<AccelMatmulAttributes>(*plain);
  transpose_a->transpose_a = 1;
  cases.push_back({"cnn dense 5408->10 forward", ACCEL_OP_MATMUL, {Operand({n, 5408}), Operand({5408, 10})},
                   {Operand({n, 10})}, [plain] { return static_cast<const void*>(plain.get()); }});
  cases.push_back({"cnn dense 5408->10 weight gradient", ACCEL_OP_MATMUL, {Operand({n, 5408}), Operand({n, 10})},
                   {Operand({5408, 10})}, [transpose_a] { return static_cast<const void*>(transpose_a.get()); }});
  // The small ResNet: stem, residual blocks of 32, 64 (stride 2) and 128 (stride 2) filters.
  add_convolution(cases, "resnet stem 28x28x1->32", n, 28, 1, 32, 3, 1, 1, false);
  add_convolution(cases, "resnet 3x3 28x28x32->32", n, 28, 32, 32, 3, 1, 1, true);
  add_convolution(cases, "resnet 3x3/2 28x28x32->64", n, 28, 32, 64, 3, 2, 0, true);
  add_convolution(cases, "resnet 1x1/2 28x28x32->64", n, 28, 32, 64, 1, 2, 0, true);
  add_convolution(cases, "resnet 3x3 14x14x64->64", n, 14, 64, 64, 3, 1, 1, true);
  add_convolution(cases, "resnet 3x3/2 14x14x64->128", n, 14, 64, 128, 3, 2, 0, true);
  add_convolution(cases, "resnet 3x3 7x7x128->128", n, 7, 128, 128, 3, 1, 1, true);
  auto norm = std::make_shared<AccelBatchNormAttributes>();
  norm->struct_size = sizeof(AccelBatchNormAttributes);
  norm->epsilon = 1e-3;
  auto get_norm = [norm] { return static_cast<const void*>(norm.get()); };
  const std::vector<int64_t> activation{n, 28, 28, 32};
  // Keras keeps a batch norm's per-feature variables in float32 under mixed_bfloat16.
  cases.push_back({"resnet batch norm 28x28x32", ACCEL_OP_BATCH_NORM,
                   {Operand(activation), Operand({32}), Operand({32})},
                   {Operand(activation), Operand({32}), Operand({32})}, get_norm, {1, 2}, {1, 2}});
  cases.push_back({"resnet batch norm gradient 28x28x32", ACCEL_OP_BATCH_NORM_BACKWARD,
                   {Operand(activation), Operand(activation), Operand({32}), Operand({32}), Operand({32})},
                   {Operand(activation), Operand({32}), Operand({32})}, get_norm, {2, 3, 4}, {1, 2}});
  cases.push_back({"resnet relu 28x28x32", ACCEL_OP_RELU, {Operand(activation)}, {Operand(activation)},
                   [] { return static_cast<const void*>(nullptr); }});
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  const char* threads = std::getenv("ACCEL_CPU_THREADS");
  host_kernels::set_max_threads(threads != nullptr ? std::atoi(threads) : 2);
  const std::string filter = argc > 1 ? argv[1] : "";
  std::printf("%-40s %10s %10s %10s %9s %9s\n", "op (batch 256)", "f32 ms", "staged ms", "bf16 ms", "f32/bf16",
              "staged/bf16");
  double sums[3] = {0, 0, 0};
  for (Case& c : make_cases()) {
    if (c.name.find(filter) == std::string::npos) continue;
    // A batch norm's per-feature inputs in [0.5, 1.5): its variance must be positive.
    for (size_t i : c.float32_inputs) {
      for (float& v : c.inputs[i].f32) v = v * 0.5f + 1.0f;
    }
    const std::vector<double> seconds = accel::bench::interleaved_median_seconds(
        {[&] { set_staging(false); c.run(ACCEL_DTYPE_F32); }, [&] { set_staging(true); c.run(ACCEL_DTYPE_BF16); },
         [&] { set_staging(false); c.run(ACCEL_DTYPE_BF16); }},
        9, 3);
    for (int i = 0; i < 3; ++i) sums[i] += seconds[static_cast<size_t>(i)];
    std::printf("%-40s %10.3f %10.3f %10.3f %9.2f %9.2f\n", c.name.c_str(), seconds[0] * 1e3, seconds[1] * 1e3,
                seconds[2] * 1e3, seconds[0] / seconds[2], seconds[1] / seconds[2]);
  }
  std::printf("%-40s %10.3f %10.3f %10.3f %9.2f %9.2f\n", "sum", sums[0] * 1e3, sums[1] * 1e3, sums[2] * 1e3,
              sums[0] / sums[2], sums[1] / sums[2]);
  return 0;
}
