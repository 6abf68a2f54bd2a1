// What accel's own convolution paths (convolution_gemm.cpp,
// convolution_winograd.cpp) share around their dnnl_sgemm products: failures
// recorded inside an OpenMP region and reported after it, and filter
// gradients summed over a number of chunks that depends on the shape alone,
// added in chunk order, so that the bits do not depend on the thread count.
#pragma once

#include <oneapi/dnnl/dnnl.h>

#include <atomic>
#include <cstdint>

namespace accel::host_kernels::detail {

// Whether any product of the current call failed. Set inside the OpenMP
// regions and reported after them: an exception must not leave a region.
class SgemmFailures {
 public:
  void record(dnnl_status_t status) {
    if (status != dnnl_success) failed_.store(true, std::memory_order_relaxed);
  }
  // Throws INTERNAL "dnnl_sgemm failed in <where>" when one failed.
  void throw_if_any(const char* where) const;

 private:
  std::atomic<bool> failed_{false};
};

// y[m, n] = a[m, k] b[k, n] (+ y when accumulate), row-major, transposes as BLAS.
inline void sgemm(SgemmFailures& failures, char transpose_a, char transpose_b, int64_t m, int64_t n, int64_t k,
                  const float* a, int64_t lda, const float* b, int64_t ldb, bool accumulate, float* y, int64_t ldy) {
  failures.record(
      dnnl_sgemm(transpose_a, transpose_b, m, n, k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, y, ldy));
}

// The chunks a filter gradient of `size` floats is summed over, from `items`
// pieces of work (tiles or blocks of tiles): at most 16, at most `items`,
// and fewer when their partial sums would pass 64 MB. Depends on the shape
// alone.
int64_t filter_gradient_chunks(int64_t size, int64_t items);

// target[i] += others[j * size + i] for j in [0, count), in that order for
// every i (the chunks' sums added in chunk order), on the OpenMP team.
void add_chunk_sums(float* target, const float* others, int64_t count, int64_t size);

}  // namespace accel::host_kernels::detail
