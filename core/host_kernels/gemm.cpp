// MATMUL on oneDNN's dnnl_sgemm (row-major C API), with its epilogue.
//
// Chosen by measurement (bench/cpu/bench_cpu_gemm.cpp, docs/PERFORMANCE.md):
// on the training shapes dnnl_sgemm beats OpenBLAS, above all on the narrow
// ones (im2col convolutions, small batches) and with 2 threads. A batch whose
// right-hand side is shared and whose left side is not transposed is folded
// into one tall GEMM, which keeps both cores busy on small per-batch matrices;
// other batches of small products run one product per thread.
// dnnl_sgemm takes no post-ops, so an epilogue runs as one blocked pass over
// the product right after it (epilogue.cpp), with the plain ops' formulas.
#include "epilogue.hpp"
#include "kernels.hpp"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace accel::host_kernels::detail {
namespace {

// Below this many multiply-adds a product of a batch is too small to split
// over threads, so the batch is split instead (the attention's 49x16x49
// products: 1.6x faster than one threaded GEMM after another).
constexpr int64_t kSmallProduct = int64_t{1} << 22;

dnnl_status_t sgemm_status(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                           const float* a, const float* b, float* c) {
  return dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a,
                    transpose_a ? m : k, b, transpose_b ? k : n, 0.0f, c, n);
}

void check(dnnl_status_t status) {
  if (status != dnnl_success) {
    fail(ACCEL_STATUS_INTERNAL, "dnnl_sgemm failed with status " + std::to_string(status));
  }
}

void sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
           const float* b, float* c) {
  check(sgemm_status(transpose_a, transpose_b, m, n, k, a, b, c));
}

// Products i of a batch, one thread each: inside an OpenMP parallel region
// oneDNN runs each GEMM on the calling thread alone. Errors cannot leave the
// region as exceptions, so the first one is reported after it.
void sgemm_batch_over_threads(bool transpose_a, bool transpose_b, int64_t batch, int64_t m, int64_t n,
                              int64_t k, const float* a, int64_t a_step, const float* b, int64_t b_step,
                              float* c) {
  dnnl_status_t first_failure = dnnl_success;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < batch; ++i) {
    const dnnl_status_t status =
        sgemm_status(transpose_a, transpose_b, m, n, k, a + i * a_step, b + i * b_step, c + i * m * n);
    if (status != dnnl_success) {
#pragma omp critical(accel_sgemm_failure)
      first_failure = first_failure == dnnl_success ? status : first_failure;
    }
  }
  check(first_failure);
}

}  // namespace

void matmul(const HostTensor& a, const HostTensor& b, const HostTensor& y,
            const AccelMatmulAttributes& attributes, const Epilogue& epilogue) {
  if (a.rank < 2 || b.rank < 2 || y.rank < 2) invalid("matmul operands need rank >= 2");
  const bool transpose_a = attributes.transpose_a != 0, transpose_b = attributes.transpose_b != 0;
  const int64_t m = a.shape[a.rank - (transpose_a ? 1 : 2)];
  const int64_t k = a.shape[a.rank - (transpose_a ? 2 : 1)];
  const int64_t b_k = b.shape[b.rank - (transpose_b ? 1 : 2)];
  const int64_t n = b.shape[b.rank - (transpose_b ? 2 : 1)];
  if (k != b_k) invalid("inner dimensions differ: " + std::to_string(k) + " vs " + std::to_string(b_k));
  if (y.shape[y.rank - 2] != m || y.shape[y.rank - 1] != n) invalid("output must be [..., M, N]");

  // Batch axes: equal on both sides, or one side has none (broadcast).
  const HostTensor& batched = a.rank >= b.rank ? a : b;
  if (a.rank != b.rank && std::min(a.rank, b.rank) != 2) {
    invalid("batch axes must match, or one operand must be a plain matrix");
  }
  if (y.rank != batched.rank) invalid("output rank must equal the batched operand's rank");
  for (int axis = 0; axis < y.rank - 2; ++axis) {
    if (y.shape[axis] != batched.shape[axis] || (a.rank == b.rank && a.shape[axis] != b.shape[axis])) {
      invalid("batch axes of the operands and the output differ");
    }
  }
  const int64_t batch = extent(batched, 0, batched.rank - 2);
  const int64_t a_step = a.rank > 2 ? m * k : 0, b_step = b.rank > 2 ? k * n : 0;
  const float* a_data = data_of<const float>(a);
  const float* b_data = data_of<const float>(b);
  float* y_data = data_of<float>(y);
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) {
    std::memset(y_data, 0, static_cast<size_t>(batch * m * n) * sizeof(float));
  } else if (b_step == 0 && !transpose_a) {
    limit_openmp_threads_on_this_thread();
    sgemm(false, transpose_b, batch * m, n, k, a_data, b_data, y_data);
  } else {
    limit_openmp_threads_on_this_thread();
    if (batch > 1 && m * n * k < kSmallProduct && omp_get_max_threads() > 1) {
      sgemm_batch_over_threads(transpose_a, transpose_b, batch, m, n, k, a_data, a_step, b_data, b_step,
                               y_data);
    } else {
      for (int64_t i = 0; i < batch; ++i) {
        sgemm(transpose_a, transpose_b, m, n, k, a_data + i * a_step, b_data + i * b_step, y_data + i * m * n);
      }
    }
  }
  apply_epilogue(epilogue, y);
}

}  // namespace accel::host_kernels::detail
