// Internal helpers shared by the host kernel files: errors, shape arithmetic,
// the half-precision storage types, and the one place that decides when a loop
// is worth handing to oneTBB. Nothing here is part of the public API.
#pragma once

#include <accel/plugin/host_kernels.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstdint>
#include <string>

namespace accel::host_kernels::detail {

[[noreturn]] void fail(AccelStatusCode code, const std::string& message);
[[noreturn]] inline void invalid(const std::string& message) {
  fail(ACCEL_STATUS_INVALID_ARGUMENT, message);
}

// "float32[2,3]"
std::string describe(const HostTensor& tensor);

inline size_t element_size(const HostTensor& tensor) noexcept {
  return sdk::dtype_size(tensor.dtype);
}

inline bool same_shape(const HostTensor& a, const HostTensor& b) noexcept {
  if (a.rank != b.rank) return false;
  for (int32_t axis = 0; axis < a.rank; ++axis) {
    if (a.shape[axis] != b.shape[axis]) return false;
  }
  return true;
}

// Product of shape[begin, end).
inline int64_t extent(const HostTensor& tensor, int32_t begin, int32_t end) noexcept {
  int64_t count = 1;
  for (int32_t axis = begin; axis < end; ++axis) count *= tensor.shape[axis];
  return count;
}

template <typename T>
T* data_of(const HostTensor& tensor) noexcept {
  return static_cast<T*>(tensor.data);
}

// Compiles a compute-bound loop three times, for AVX-512, AVX2 and the
// baseline ISA, and picks one when the library loads (GCC's target_clones,
// an ifunc). The library itself is built for the baseline (most loops are
// memory-bound), but the transcendental functions of vector_math.hpp and the
// steps of a fusion, which keep their values in the first-level cache, run
// 4-6x faster in wider vectors. Results do not depend on the clone taken:
// the library is built with -ffp-contract=off, so no clone fuses a multiply
// and an add the others round twice. Use only on functions with internal
// linkage (in an unnamed namespace). The AVX-512 clone is x86-64-v4 (F, BW,
// CD, DQ and VL), not AVX512F alone: without VL and BW, GCC narrows and
// widens 16-bit values in 256-bit AVX2 sequences, and a bf16 loop (relu over
// bfloat16) ran at half the speed (0.29 against 0.15 ns per element).
// Clang (which builds the sanitizer test phases) cannot clone templates yet:
// under it the loops are built for the baseline only.
#if defined(__clang__)
#define ACCEL_VECTOR_CLONES
#else
#define ACCEL_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif

// Storage types for the 16-bit floats: kept distinct from uint16_t so that
// templates over element types pick the right conversions.
struct bf16_t { uint16_t bits; };
struct f16_t { uint16_t bits; };

// Loops over fewer elements than this run on the calling thread: handing
// work to oneTBB costs a few microseconds, more than a small loop takes.
inline constexpr int64_t kCheapGrain = int64_t{1} << 16;      // add, copy, compare
inline constexpr int64_t kExpensiveGrain = int64_t{1} << 12;  // exp, tanh, pow

// Calls body(begin, end) over [0, count), in parallel chunks of at least
// `grain` items when there is more than one chunk of work.
template <typename Body>
void parallel_ranges(int64_t count, int64_t grain, const Body& body) {
  if (count <= grain) {
    if (count > 0) body(int64_t{0}, count);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, count, grain),
                    [&](const tbb::blocked_range<int64_t>& range) { body(range.begin(), range.end()); });
}

// Grain for loops whose items cost `work_per_item` elementary operations.
inline int64_t grain_for(int64_t work_per_item, int64_t target = kCheapGrain) noexcept {
  if (work_per_item <= 0) work_per_item = 1;
  int64_t grain = target / work_per_item;
  return grain < 1 ? 1 : grain;
}

// Keeps oneDNN's OpenMP pool within max_threads() on the calling thread
// (OpenMP thread counts are per calling thread, so this runs before each call).
void limit_openmp_threads_on_this_thread();

}  // namespace accel::host_kernels::detail
