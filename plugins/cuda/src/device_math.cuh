// Device-side helpers shared by the plugin's .cu files: element types per
// dtype, load/store through a float or integer compute type, grid sizing, and
// dtype dispatch. Half types compute in float; results round to nearest even.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace accel::cuda {

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over `count` items (count > 0).
inline unsigned grid_for(int64_t count, int threads = kThreads) {
  int64_t blocks = (count + threads - 1) / threads;
  if (blocks > 65536) blocks = 65536;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks);
}

template <typename T> struct Tag { using type = T; };

template <typename T> constexpr bool kIsHalf =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <typename T> constexpr bool kIsFloating = kIsHalf<T> || std::is_same_v<T, float>;

// The type arithmetic runs in: float for the float family, the type itself otherwise.
template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<__half> { using type = float; };
template <> struct ComputeOf<__nv_bfloat16> { using type = float; };
template <typename T> using Compute = typename ComputeOf<T>::type;

template <typename T> __device__ __forceinline__ Compute<T> load(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(p[i]);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(p[i]);
  } else {
    return p[i];
  }
}

template <typename T> __device__ __forceinline__ void store(T* p, int64_t i, Compute<T> v) {
  if constexpr (std::is_same_v<T, __half>) {
    p[i] = __float2half_rn(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    p[i] = __float2bfloat16_rn(v);
  } else {
    p[i] = v;
  }
}

// Wrapping integer arithmetic (two's complement, no signed overflow).
template <typename I> __device__ __forceinline__ I wrap_add(I a, I b) {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename I> __device__ __forceinline__ I wrap_sub(I a, I b) {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename I> __device__ __forceinline__ I wrap_mul(I a, I b) {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(a) * static_cast<U>(b));
}

// Max/min as the CPU plugin's (TensorFlow's): NaN from either side wins, and
// of two equal values (+0 and -0) the first is kept.
template <typename C> __device__ __forceinline__ C nan_max(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    return (a >= b || a != a) ? a : b;
  } else {
    return a >= b ? a : b;
  }
}
template <typename C> __device__ __forceinline__ C nan_min(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    return (a <= b || a != a) ? a : b;
  } else {
    return a <= b ? a : b;
  }
}

// Calls f(Tag<T>{}) for a float-family dtype; cudaErrorInvalidValue otherwise.
template <typename F> cudaError_t dispatch_float(AccelDType dtype, F&& f) {
  switch (dtype) {
    case ACCEL_DTYPE_F32: return f(Tag<float>{});
    case ACCEL_DTYPE_BF16: return f(Tag<__nv_bfloat16>{});
    case ACCEL_DTYPE_F16: return f(Tag<__half>{});
    default: return cudaErrorInvalidValue;
  }
}

// Float family plus I32/I64.
template <typename F> cudaError_t dispatch_numeric(AccelDType dtype, F&& f) {
  switch (dtype) {
    case ACCEL_DTYPE_I32: return f(Tag<int32_t>{});
    case ACCEL_DTYPE_I64: return f(Tag<int64_t>{});
    default: return dispatch_float(dtype, f);
  }
}

// Raw element of a byte size (data movement ignores the dtype's meaning).
template <typename F> cudaError_t dispatch_size(size_t element_size, F&& f) {
  switch (element_size) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    case 8: return f(Tag<uint64_t>{});
    default: return cudaErrorInvalidValue;
  }
}

// Offset of linear index `i` of `shape` under `stride` (row-major decomposition).
__device__ __forceinline__ int64_t strided_offset(int64_t i, int32_t rank, const int64_t* shape,
                                                  const int64_t* stride) {
  int64_t offset = 0;
  for (int32_t d = rank - 1; d >= 0; --d) {
    int64_t coord = i % shape[d];
    i /= shape[d];
    offset += coord * stride[d];
  }
  return offset;
}

}  // namespace accel::cuda
