// The tutorial CNN's first layer (28x28x1 -> 32 filters 3x3, valid, batch 32
// and 256): accel's CONV2D and its gradients (oneDNN convolution primitives)
// against im2col + dnnl_sgemm, the alternative the issue names. Prints
// milliseconds per call for 1 and 2 threads.
#include "bench_timing.hpp"
#include "host_tensor.hpp"

#include <accel/plugin/host_kernels.hpp>

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <cstdio>
#include <random>
#include <vector>

namespace {

using accel::bench::random_values;
using accel::host_kernels::HostTensor;

constexpr int64_t kHeight = 28, kWidth = 28, kFilter = 3, kFilters = 32, kOut = kHeight - kFilter + 1;

// im2col for one input channel, valid padding: columns[n,oh,ow][r*3+s].
void im2col(const float* x, int64_t batch, float* columns) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < kOut; ++i)
      for (int64_t j = 0; j < kOut; ++j) {
        float* row = columns + ((n * kOut + i) * kOut + j) * kFilter * kFilter;
        for (int64_t r = 0; r < kFilter; ++r)
          for (int64_t s = 0; s < kFilter; ++s) row[r * kFilter + s] = x[(n * kHeight + i + r) * kWidth + j + s];
      }
}

// col2im: the transpose of im2col, accumulating.
void col2im(const float* columns, int64_t batch, float* dx) {
  std::fill(dx, dx + batch * kHeight * kWidth, 0.0f);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < kOut; ++i)
      for (int64_t j = 0; j < kOut; ++j) {
        const float* row = columns + ((n * kOut + i) * kOut + j) * kFilter * kFilter;
        for (int64_t r = 0; r < kFilter; ++r)
          for (int64_t s = 0; s < kFilter; ++s) dx[(n * kHeight + i + r) * kWidth + j + s] += row[r * kFilter + s];
      }
}

}  // namespace

int main() {
  std::printf("%-6s %3s %-16s %12s %16s %8s\n", "batch", "thr", "pass", "accel ms", "im2col+sgemm ms", "ratio");
  for (int64_t batch : {32, 256}) {
    const int64_t rows = batch * kOut * kOut, taps = kFilter * kFilter;
    std::vector<float> x = random_values(batch * kHeight * kWidth), filter = random_values(taps * kFilters);
    std::vector<float> y(static_cast<size_t>(rows * kFilters)), dy = random_values(rows * kFilters);
    std::vector<float> dx(x.size()), dfilter(filter.size()), columns(static_cast<size_t>(rows * taps));
    HostTensor tx{ACCEL_DTYPE_F32, 4, {batch, kHeight, kWidth, 1}, x.data()};
    HostTensor tf{ACCEL_DTYPE_F32, 4, {kFilter, kFilter, 1, kFilters}, filter.data()};
    HostTensor ty{ACCEL_DTYPE_F32, 4, {batch, kOut, kOut, kFilters}, y.data()};
    HostTensor tdy{ACCEL_DTYPE_F32, 4, {batch, kOut, kOut, kFilters}, dy.data()};
    HostTensor tdx{ACCEL_DTYPE_F32, 4, {batch, kHeight, kWidth, 1}, dx.data()};
    HostTensor tdf{ACCEL_DTYPE_F32, 4, {kFilter, kFilter, 1, kFilters}, dfilter.data()};
    const AccelConv2dAttributes valid{sizeof(AccelConv2dAttributes), 1, 1, 1, 1, 0, 0, 0, 0, 0, {}};
    for (int threads : {1, 2}) {
      accel::host_kernels::set_max_threads(threads);
      omp_set_num_threads(threads);
      struct Pass {
        const char* name;
        std::function<void()> accel, im2col_gemm;
      };
      const HostTensor forward_in[] = {tx, tf}, backward_input_in[] = {tdy, tf}, backward_filter_in[] = {tx, tdy};
      const Pass passes[] = {
          {"forward",
           [&] { accel::host_kernels::execute(ACCEL_OP_CONV2D, forward_in, {&ty, 1}, &valid); },
           [&] {
             im2col(x.data(), batch, columns.data());
             dnnl_sgemm('N', 'N', rows, kFilters, taps, 1.0f, columns.data(), taps, filter.data(), kFilters, 0.0f,
                        y.data(), kFilters);
           }},
          {"backward input",
           [&] { accel::host_kernels::execute(ACCEL_OP_CONV2D_BACKWARD_INPUT, backward_input_in, {&tdx, 1}, &valid); },
           [&] {
             dnnl_sgemm('N', 'T', rows, taps, kFilters, 1.0f, dy.data(), kFilters, filter.data(), kFilters, 0.0f,
                        columns.data(), taps);
             col2im(columns.data(), batch, dx.data());
           }},
          {"backward filter",
           [&] { accel::host_kernels::execute(ACCEL_OP_CONV2D_BACKWARD_FILTER, backward_filter_in, {&tdf, 1}, &valid); },
           [&] {
             im2col(x.data(), batch, columns.data());
             dnnl_sgemm('T', 'N', taps, kFilters, rows, 1.0f, columns.data(), taps, dy.data(), kFilters, 0.0f,
                        dfilter.data(), kFilters);
           }},
      };
      for (const Pass& pass : passes) {
        const double accel_ms = accel::bench::median_seconds(pass.accel) * 1e3;
        const double im2col_ms = accel::bench::median_seconds(pass.im2col_gemm) * 1e3;
        std::printf("%-6lld %3d %-16s %12.3f %16.3f %8.2f\n", static_cast<long long>(batch), threads, pass.name,
                    accel_ms, im2col_ms, im2col_ms / accel_ms);
        std::fflush(stdout);
      }
    }
  }
  std::printf("\nratio = im2col+sgemm time / accel time (> 1: accel's oneDNN primitives are faster)\n");
  return 0;
}
