// MATMUL on oneDNN: dnnl_sgemm (row-major C API), or its matmul primitive for narrow and batched small shapes, then the epilogue.
//
// Chosen by measurement (bench/cpu/bench_cpu_gemm.cpp, docs/PERFORMANCE.md):
// on the training shapes dnnl_sgemm beats OpenBLAS, above all on the narrow
// ones (im2col convolutions, small batches) and with 2 threads. A batch whose
// right-hand side is shared and whose left side is not transposed is folded
// into one tall GEMM, which keeps both cores busy on small per-batch matrices.
// Narrow products and other batches of small products run on oneDNN's matmul
// primitive instead (matmul_primitive.cpp), which is faster on those shapes.
// dnnl_sgemm takes no post-ops, so an epilogue runs as one blocked pass over
// the product right after it (epilogue.cpp), with the plain ops' formulas.
// BF16 products (CPUs with bf16 instructions only) all run on the matmul
// primitive's bf16 kernels: there is no bf16 sgemm with a bf16 result.
#include "epilogue.hpp"
#include "kernels.hpp"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <string>

namespace accel::host_kernels::detail {
namespace {

// Below this many multiply-adds a product of a batch is too small to split
// over threads, so the batch goes to the matmul primitive, which splits it.
constexpr int64_t kSmallProduct = int64_t{1} << 22;
// A product with a side this narrow, and at least kNarrowWork multiply-adds,
// runs faster on the matmul primitive (matmul_primitive.cpp): 1.4x on the
// tutorial CNN's dense layer at batch 256 (256 x 5408 x 10); at batch 32
// the two are within 10 %, so smaller products stay on sgemm.
constexpr int64_t kNarrowSide = 16;
constexpr int64_t kNarrowWork = int64_t{1} << 22;

bool narrow(int64_t m, int64_t n, int64_t k) {
  return std::min({m, n, k}) <= kNarrowSide && m * n * k >= kNarrowWork;
}

void sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
           const float* b, float* c) {
  const dnnl_status_t status =
      dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a,
                 transpose_a ? m : k, b, transpose_b ? k : n, 0.0f, c, n);
  if (status != dnnl_success) {
    fail(ACCEL_STATUS_INTERNAL, "dnnl_sgemm failed with status " + std::to_string(status));
  }
}

// One product, on whichever library runs its shape faster.
void product(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a, const float* b,
             float* c) {
  if (narrow(m, n, k)) {
    matmul_primitive(transpose_a, transpose_b, 1, m, n, k, a, false, b, false, c, ACCEL_DTYPE_F32);
  } else {
    limit_openmp_threads_on_this_thread();
    sgemm(transpose_a, transpose_b, m, n, k, a, b, c);
  }
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
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) {
    fill(y, 0.0);
    apply_epilogue(epilogue, y);
    return;
  }
  if (y.dtype == ACCEL_DTYPE_BF16) {
    if (a.dtype != ACCEL_DTYPE_BF16 || b.dtype != ACCEL_DTYPE_BF16) invalid("operands must all be bfloat16");
    if (b_step == 0 && !transpose_a) {  // one tall product, as below
      matmul_primitive(false, transpose_b, 1, batch * m, n, k, a.data, false, b.data, false, y.data, y.dtype);
    } else {
      matmul_primitive(transpose_a, transpose_b, batch, m, n, k, a.data, a_step != 0, b.data, b_step != 0, y.data,
                       y.dtype);
    }
    apply_epilogue(epilogue, y);
    return;
  }
  const float* a_data = data_of<const float>(a);
  const float* b_data = data_of<const float>(b);
  float* y_data = data_of<float>(y);
  if (b_step == 0 && !transpose_a) {
    product(false, transpose_b, batch * m, n, k, a_data, b_data, y_data);
  } else if (batch == 1) {
    product(transpose_a, transpose_b, m, n, k, a_data, b_data, y_data);
  } else if (m * n * k < kSmallProduct) {
    matmul_primitive(transpose_a, transpose_b, batch, m, n, k, a_data, a_step != 0, b_data, b_step != 0, y_data,
                     ACCEL_DTYPE_F32);
  } else {
    for (int64_t i = 0; i < batch; ++i) {
      product(transpose_a, transpose_b, m, n, k, a_data + i * a_step, b_data + i * b_step, y_data + i * m * n);
    }
  }
  apply_epilogue(epilogue, y);
}

}  // namespace accel::host_kernels::detail
