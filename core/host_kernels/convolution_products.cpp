// What accel's own convolution paths share (see convolution_products.hpp).
#include "convolution_products.hpp"

#include "kernel_support.hpp"

#include <algorithm>
#include <string>

namespace accel::host_kernels::detail {
namespace {

// The most chunks: enough for a team of 16 threads, few enough that adding
// their sums costs little next to the products.
constexpr int64_t kMostChunks = 16;

// At most this much memory for the partial sums; larger filters get fewer
// chunks, a number that still depends on the shape alone.
constexpr int64_t kPartialSumBytes = int64_t{64} << 20;

}  // namespace

void SgemmFailures::throw_if_any(const char* where) const {
  if (failed_.load()) fail(ACCEL_STATUS_INTERNAL, std::string("dnnl_sgemm failed in ") + where);
}

int64_t filter_gradient_chunks(int64_t size, int64_t items) {
  return std::clamp(kPartialSumBytes / (size * static_cast<int64_t>(sizeof(float))), int64_t{1},
                    std::min(kMostChunks, items));
}

void add_chunk_sums(float* target, const float* others, int64_t count, int64_t size) {
  constexpr int64_t kBlock = 4096;
#pragma omp parallel for schedule(static)
  for (int64_t begin = 0; begin < size; begin += kBlock) {
    const int64_t end = std::min(size, begin + kBlock);
    for (int64_t chunk = 0; chunk < count; ++chunk) {
      const float* __restrict source = others + chunk * size;
      float* __restrict out = target;
      for (int64_t i = begin; i < end; ++i) out[i] += source[i];
    }
  }
}

}  // namespace accel::host_kernels::detail
