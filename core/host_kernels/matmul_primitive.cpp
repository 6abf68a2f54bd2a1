// Batches of matrix products on oneDNN's matmul primitive (its brgemm
// kernels), for the shapes where it beats dnnl_sgemm (gemm.cpp chooses):
// large narrow products, one side 16 or fewer wide (the tutorial CNN's
// dense layer at batch 256, 5408 -> 10: 1.4x forward), and batches of small
// products (attention's 49x16x49 per head: 1.4x over one single-threaded
// sgemm per thread). Measured in docs/PERFORMANCE.md. On CPUs with bf16
// instructions it runs every BF16 product (its brgemm bf16 kernels,
// float32 accumulation, the result rounded once to bfloat16).
//
// A primitive is built once per shape (building costs far more than running
// a small one) and cached, as the convolutions are; the cache is emptied
// when it reaches kCachedShapes, so a stream of new shapes (inference at
// varying batch sizes) cannot grow it without bound. Each execution brings
// its own scratchpad, so one primitive can run on several threads at once.
#include "kernels.hpp"
#include "onednn_support.hpp"

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace accel::host_kernels::detail {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

constexpr size_t kCachedShapes = 256;

struct CachedMatmul {
  dnnl::matmul primitive;
  memory::desc a, b, y, scratchpad;
};

// The shape, the element type, and the OpenMP threads the primitive was
// built for (oneDNN plans its work split when it builds one).
using MatmulKey = std::array<int64_t, 10>;

// [batch or 1, rows, columns] of a row-major matrix, or of its transpose
// (stored [columns, rows]: oneDNN reads it through the acb layout).
memory::desc matrix_batch(int64_t batch, int64_t rows, int64_t columns, bool transposed, memory::data_type type) {
  return memory::desc({batch, rows, columns}, type, transposed ? Tag::acb : Tag::abc);
}

std::shared_ptr<const CachedMatmul> build(const MatmulKey& key) {
  // The threads are in the key only: the primitive is built on the thread that runs it.
  [[maybe_unused]] const auto [transpose_a, transpose_b, batch, m, n, k, a_batched, b_batched, bf16, threads] = key;
  const memory::data_type type = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  auto cached = std::make_shared<CachedMatmul>();
  cached->a = matrix_batch(a_batched ? batch : 1, m, k, transpose_a != 0, type);
  cached->b = matrix_batch(b_batched ? batch : 1, k, n, transpose_b != 0, type);
  cached->y = matrix_batch(batch, m, n, false, type);
  const dnnl::matmul::primitive_desc description(dnnl::matmul::desc(cached->a, cached->b, cached->y),
                                                 user_scratchpad(), onednn_engine());
  cached->primitive = dnnl::matmul(description);
  cached->scratchpad = description.scratchpad_desc();
  return cached;
}

std::shared_ptr<const CachedMatmul> cached_matmul(const MatmulKey& key) {
  static std::mutex mutex;
  static std::map<MatmulKey, std::shared_ptr<const CachedMatmul>> cache;
  std::lock_guard lock(mutex);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  if (cache.size() >= kCachedShapes) cache.clear();  // running products hold their own reference
  return cache.emplace(key, build(key)).first->second;
}

}  // namespace

void matmul_primitive(bool transpose_a, bool transpose_b, int64_t batch, int64_t m, int64_t n, int64_t k,
                      const void* a, bool a_batched, const void* b, bool b_batched, void* y, AccelDType dtype) {
  if (dtype != ACCEL_DTYPE_F32 && dtype != ACCEL_DTYPE_BF16) invalid("the matmul primitive takes F32 or BF16");
  limit_openmp_threads_on_this_thread();
  try {
    const std::shared_ptr<const CachedMatmul> cached = cached_matmul({transpose_a, transpose_b, batch, m, n, k, a_batched,
                                                                      b_batched, dtype == ACCEL_DTYPE_BF16,
                                                                      omp_get_max_threads()});
    const dnnl::engine& engine = onednn_engine();
    dnnl::stream& stream = onednn_stream();
    cached->primitive.execute(stream, {{DNNL_ARG_SRC, memory(cached->a, engine, const_cast<void*>(a))},
                                       {DNNL_ARG_WEIGHTS, memory(cached->b, engine, const_cast<void*>(b))},
                                       {DNNL_ARG_DST, memory(cached->y, engine, y)},
                                       {DNNL_ARG_SCRATCHPAD, onednn_scratchpad(cached->scratchpad)}});
    stream.wait();
  } catch (const dnnl::error& error) {
    fail(ACCEL_STATUS_INTERNAL, std::string("oneDNN matmul: ") + error.what());
  }
}

}  // namespace accel::host_kernels::detail
