// accel's MATMUL (host_kernels::execute, as the CPU plugin runs it) against
// the two candidate libraries called directly, on square and training shapes,
// with 1 and 2 threads. Prints GFLOP/s and accel / best library.
//
// Run OpenBLAS without OPENBLAS_CORETYPE (the machine sets it to Haswell,
// which halves OpenBLAS): env -u OPENBLAS_CORETYPE ./bench_cpu_gemm
#include "bench_timing.hpp"

#include <accel/plugin/host_kernels.hpp>

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename(void);

namespace {

struct Shape {
  int64_t m, k, n;
  const char* note;
};

std::vector<float> random_matrix(int64_t count, unsigned seed) {
  std::vector<float> values(static_cast<size_t>(count));
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : values) v = uniform(engine);
  return values;
}

}  // namespace

int main() {
  using accel::host_kernels::HostTensor;
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("OpenBLAS core: %s%s%s\n", openblas_get_corename(), coretype ? "  (OPENBLAS_CORETYPE=" : "",
              coretype ? coretype : "");
  if (coretype) std::printf("  note: run with `env -u OPENBLAS_CORETYPE` to let OpenBLAS use AVX-512\n");
  std::printf("accel GEMM library: %s\n\n", accel::host_kernels::gemm_library());

  const Shape shapes[] = {
      {512, 512, 512, "square"},           {1024, 1024, 1024, "square"},
      {2048, 2048, 2048, "square"},        {32, 784, 128, "dense, batch 32"},
      {256, 784, 128, "dense, batch 256"}, {21632, 9, 32, "im2col conv, batch 32"},
      // The tutorial CNN's dense layer (5408 -> 10): accel takes oneDNN's
      // matmul primitive from batch 256 (gemm.cpp, kNarrowWork).
      {32, 5408, 10, "CNN dense, b 32"},   {256, 5408, 10, "CNN dense, b 256"},
  };
  std::printf("%-22s %-18s %3s %10s %10s %10s %8s\n", "shape MxKxN", "", "thr", "accel", "dnnl_sgemm", "OpenBLAS",
              "accel/best");
  for (const Shape& s : shapes) {
    std::vector<float> a = random_matrix(s.m * s.k, 1), b = random_matrix(s.k * s.n, 2), c(static_cast<size_t>(s.m * s.n));
    const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    for (int threads : {1, 2}) {
      accel::host_kernels::set_max_threads(threads);
      omp_set_num_threads(threads);
      openblas_set_num_threads(threads);

      HostTensor ta{ACCEL_DTYPE_F32, 2, {s.m, s.k}, a.data()};
      HostTensor tb{ACCEL_DTYPE_F32, 2, {s.k, s.n}, b.data()};
      HostTensor tc{ACCEL_DTYPE_F32, 2, {s.m, s.n}, c.data()};
      const AccelMatmulAttributes attributes{sizeof(AccelMatmulAttributes), 0, 0, 0, {}};
      const HostTensor inputs[] = {ta, tb};
      const double accel_s = accel::bench::median_seconds(
          [&] { accel::host_kernels::execute(ACCEL_OP_MATMUL, inputs, {&tc, 1}, &attributes); });
      const double dnnl_s = accel::bench::median_seconds([&] {
        dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n, 0.0f, c.data(), s.n);
      });
      accel::bench::settle();
      const double blas_s = accel::bench::median_seconds([&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.m), static_cast<int>(s.n),
                    static_cast<int>(s.k), 1.0f, a.data(), static_cast<int>(s.k), b.data(), static_cast<int>(s.n),
                    0.0f, c.data(), static_cast<int>(s.n));
      });
      accel::bench::settle();
      const double accel_g = flops / accel_s * 1e-9, dnnl_g = flops / dnnl_s * 1e-9, blas_g = flops / blas_s * 1e-9;
      char label[64];
      std::snprintf(label, sizeof(label), "%lldx%lldx%lld", static_cast<long long>(s.m), static_cast<long long>(s.k),
                    static_cast<long long>(s.n));
      std::printf("%-22s %-18s %3d %10.1f %10.1f %10.1f %8.2f\n", label, s.note, threads, accel_g, dnnl_g, blas_g,
                  accel_g / std::max(dnnl_g, blas_g));
      std::fflush(stdout);
    }
  }
  return 0;
}
