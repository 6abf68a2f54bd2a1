// The small ResNet's convolutions (resnet_small_28x28 at batch 128, every
// layer's shape, each pass) on the CPU's two paths, side by side in one
// process and interleaved sample by sample: oneDNN's convolution primitives
// (ACCEL_CPU_CONV_GEMM=0) against im2col tiles times the filter on
// dnnl_sgemm (ACCEL_CPU_CONV_GEMM=all, convolution_gemm.cpp), against
// Winograd F(4x4, 3x3) (ACCEL_CPU_WINOGRAD=accel, convolution_winograd.cpp;
// 3x3 stride-1 forward passes and input gradients), and accel as shipped
// (both variables unset: the measured choice between them). Prints
// milliseconds per call, the ratios oneDNN / GEMM and oneDNN / Winograd
// (> 1: faster than oneDNN), and each path's largest difference from
// oneDNN relative to the largest result; then the sums over one training
// step's convolutions. Threads: ACCEL_CPU_THREADS (default 2).
//
//   bench_cpu_conv_resnet [batch [layer]]   (layer: only the shapes whose name contains it)
#include "host_tensor.hpp"

#include <accel/plugin/host_kernels.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using accel::bench::random_values;
using accel::host_kernels::HostTensor;

// One layer: x [n, h, w, c], filter [r, s, c, k], TensorFlow's "same" padding.
struct Shape {
  const char* name;
  int64_t n, h, w, c, k, r, s, stride;
  int64_t oh() const { return (h + stride - 1) / stride; }
  int64_t ow() const { return (w + stride - 1) / stride; }
  int64_t pad_top() const { return std::max<int64_t>((oh() - 1) * stride + r - h, 0) / 2; }
  int64_t pad_left() const { return std::max<int64_t>((ow() - 1) * stride + s - w, 0) / 2; }
  int64_t pad_bottom() const { return std::max<int64_t>((oh() - 1) * stride + r - h, 0) - pad_top(); }
  int64_t pad_right() const { return std::max<int64_t>((ow() - 1) * stride + s - w, 0) - pad_left(); }
  int64_t taps() const { return r * s * c; }
  int64_t pixels() const { return n * oh() * ow(); }
  // The first layer's input gradient is never needed in training.
  bool first_layer() const { return c == 1; }
};

double max_relative(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return worst / scale;
}

// A path: the two variables that choose it (nullptr: unset).
struct Path {
  const char* gemm;      // ACCEL_CPU_CONV_GEMM
  const char* winograd;  // ACCEL_CPU_WINOGRAD
};
constexpr Path kOnednn{"0", "onednn"}, kGemm{"all", nullptr}, kWinograd{"0", "accel"}, kShipped{nullptr, nullptr};

void set_or_unset(const char* variable, const char* value) {
  if (value == nullptr) unsetenv(variable);
  else setenv(variable, value, 1);
}

void use_setting(const Path& path) {
  set_or_unset("ACCEL_CPU_CONV_GEMM", path.gemm);
  set_or_unset("ACCEL_CPU_WINOGRAD", path.winograd);
}

// Median milliseconds per call of `body` on each path, the paths
// interleaved sample by sample, so that a change in the machine's load (it
// is shared) falls on all of them alike.
std::vector<double> interleaved_ms(const std::vector<Path>& settings, const std::function<void()>& body,
                                   int samples = 15, double min_seconds = 0.05) {
  using Clock = std::chrono::steady_clock;
  int repeats = 1;
  for (const Path& setting : settings) {  // warm up (primitives, buffers) and calibrate on the slowest
    use_setting(setting);
    body();
    const auto start = Clock::now();
    body();
    const double once = std::chrono::duration<double>(Clock::now() - start).count();
    repeats = std::max(repeats, static_cast<int>(min_seconds / std::max(once, 1e-9)) + 1);
  }
  std::vector<std::vector<double>> times(settings.size());
  for (int sample = 0; sample < samples; ++sample) {
    for (size_t i = 0; i < settings.size(); ++i) {
      use_setting(settings[i]);
      const auto start = Clock::now();
      for (int repeat = 0; repeat < repeats; ++repeat) body();
      times[i].push_back(std::chrono::duration<double>(Clock::now() - start).count() / repeats * 1e3);
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& series : times) {
    std::nth_element(series.begin(), series.begin() + samples / 2, series.end());
    medians.push_back(series[samples / 2]);
  }
  return medians;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t batch = argc > 1 ? std::atoll(argv[1]) : 128;
  const std::string only = argc > 2 ? argv[2] : "";
  const char* threads_setting = std::getenv("ACCEL_CPU_THREADS");
  const int threads = threads_setting != nullptr ? std::atoi(threads_setting) : 2;
  const Shape shapes[] = {
      {"28x28x1->32 3x3", batch, 28, 28, 1, 32, 3, 3, 1},       {"28x28x32->32 3x3 (x2)", batch, 28, 28, 32, 32, 3, 3, 1},
      {"28x28x32->64 3x3/2", batch, 28, 28, 32, 64, 3, 3, 2},   {"28x28x32->64 1x1/2", batch, 28, 28, 32, 64, 1, 1, 2},
      {"14x14x64->64 3x3", batch, 14, 14, 64, 64, 3, 3, 1},     {"14x14x64->128 3x3/2", batch, 14, 14, 64, 128, 3, 3, 2},
      {"14x14x64->128 1x1/2", batch, 14, 14, 64, 128, 1, 1, 2}, {"7x7x128->128 3x3", batch, 7, 7, 128, 128, 3, 3, 1},
  };
  accel::host_kernels::set_max_threads(threads);
  std::printf("batch %lld, %d threads\n", static_cast<long long>(batch), threads);
  std::printf("%-22s %-11s %9s %9s %7s %9s %7s %10s %9s %9s\n", "shape", "pass", "oneDNN ms", "GEMM ms", "ratio",
              "Wino ms", "ratio", "shipped ms", "GEMM diff", "Wino diff");
  double step[4] = {0, 0, 0, 0};  // per training step: oneDNN, GEMM, Winograd, shipped
  for (const Shape& g : shapes) {
    if (std::string(g.name).find(only) == std::string::npos) continue;
    std::vector<float> x = random_values(g.n * g.h * g.w * g.c), w = random_values(g.taps() * g.k);
    std::vector<float> dy = random_values(g.pixels() * g.k);
    std::vector<float> onednn_result, gemm_result, winograd_result;
    HostTensor tx{ACCEL_DTYPE_F32, 4, {g.n, g.h, g.w, g.c}, x.data()};
    HostTensor tf{ACCEL_DTYPE_F32, 4, {g.r, g.s, g.c, g.k}, w.data()};
    HostTensor tdy{ACCEL_DTYPE_F32, 4, {g.n, g.oh(), g.ow(), g.k}, dy.data()};
    const AccelConv2dAttributes attributes{sizeof(AccelConv2dAttributes), static_cast<int32_t>(g.stride),
                                           static_cast<int32_t>(g.stride), 1, 1,
                                           static_cast<int32_t>(g.pad_top()), static_cast<int32_t>(g.pad_bottom()),
                                           static_cast<int32_t>(g.pad_left()), static_cast<int32_t>(g.pad_right()),
                                           0, {}};
    struct Pass {
      const char* name;
      AccelOp op;
      HostTensor first, second;
      std::vector<int64_t> out_shape;
    } passes[] = {
        {"forward", ACCEL_OP_CONV2D, tx, tf, {g.n, g.oh(), g.ow(), g.k}},
        {"input grad", ACCEL_OP_CONV2D_BACKWARD_INPUT, tdy, tf, {g.n, g.h, g.w, g.c}},
        {"filter grad", ACCEL_OP_CONV2D_BACKWARD_FILTER, tx, tdy, {g.r, g.s, g.c, g.k}},
    };
    for (const Pass& pass : passes) {
      if (pass.op == ACCEL_OP_CONV2D_BACKWARD_INPUT && g.first_layer()) continue;
      int64_t count = 1;
      for (int64_t extent : pass.out_shape) count *= extent;
      std::vector<float> out(static_cast<size_t>(count));
      HostTensor tout{ACCEL_DTYPE_F32, 4, {}, out.data()};
      for (int axis = 0; axis < 4; ++axis) tout.shape[axis] = pass.out_shape[axis];
      const HostTensor inputs[] = {pass.first, pass.second};
      auto run = [&] { accel::host_kernels::execute(pass.op, inputs, {&tout, 1}, &attributes); };
      use_setting(kOnednn);
      run();
      onednn_result = out;
      use_setting(kGemm);
      run();
      gemm_result = out;
      // Winograd where it applies (3x3 stride-1 forward and input gradient); elsewhere its column repeats oneDNN.
      use_setting(kWinograd);
      run();
      winograd_result = out;
      const std::vector<double> ms = interleaved_ms({kOnednn, kGemm, kWinograd, kShipped}, run);
      const double onednn_ms = ms[0], gemm_ms = ms[1], winograd_ms = ms[2], shipped_ms = ms[3];
      const int copies = std::string(g.name).find("(x2)") != std::string::npos ? 2 : 1;
      for (int path = 0; path < 4; ++path) step[path] += copies * ms[path];
      std::printf("%-22s %-11s %9.3f %9.3f %7.2f %9.3f %7.2f %10.3f %9.2e %9.2e\n", g.name, pass.name, onednn_ms,
                  gemm_ms, onednn_ms / gemm_ms, winograd_ms, onednn_ms / winograd_ms, shipped_ms,
                  max_relative(gemm_result, onednn_result), max_relative(winograd_result, onednn_result));
      std::fflush(stdout);
    }
  }
  std::printf("\nper training step (every layer, both 28x28x32 blocks): oneDNN %.1f ms, GEMM %.1f ms, Winograd %.1f ms,"
              " shipped %.1f ms; shipped / oneDNN %.2f\n",
              step[0], step[1], step[2], step[3], step[3] / step[0]);
  return 0;
}
