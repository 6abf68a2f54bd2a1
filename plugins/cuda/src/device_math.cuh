// Device-side helpers shared by the plugin's .cu files: element types per
// dtype, load/store through a float or integer compute type (by element type,
// or by a dtype known only at run time), grid sizing, and dtype dispatch. Half
// types compute in float; results round to nearest even.
#pragma once

#include "kernels.hpp"

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

inline bool known_dtype(AccelDType dtype) { return dtype >= 0 && dtype < ACCEL_DTYPE_COUNT; }

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

__device__ __forceinline__ bool is_float_dtype(AccelDType dtype) {
  return dtype == ACCEL_DTYPE_F32 || dtype == ACCEL_DTYPE_BF16 || dtype == ACCEL_DTYPE_F16;
}

// `v` rounded to the nearest BF16 / F16 value when `dtype` is one, as storing
// it would round it; unchanged otherwise.
__device__ __forceinline__ float round_to(AccelDType dtype, float v) {
  if (dtype == ACCEL_DTYPE_BF16) return __bfloat162float(__float2bfloat16_rn(v));
  if (dtype == ACCEL_DTYPE_F16) return __half2float(__float2half_rn(v));
  return v;
}

// Element `i` of `data` (of `dtype`) in its compute type; U8 and BOOL bytes
// as they are.
__device__ __forceinline__ ElementValue load_element(const void* data, AccelDType dtype, int64_t i) {
  ElementValue v;
  v.i64 = 0;
  switch (dtype) {
    case ACCEL_DTYPE_F32: v.f = load(static_cast<const float*>(data), i); break;
    case ACCEL_DTYPE_BF16: v.f = load(static_cast<const __nv_bfloat16*>(data), i); break;
    case ACCEL_DTYPE_F16: v.f = load(static_cast<const __half*>(data), i); break;
    case ACCEL_DTYPE_I32: v.i32 = static_cast<const int32_t*>(data)[i]; break;
    case ACCEL_DTYPE_I64: v.i64 = static_cast<const int64_t*>(data)[i]; break;
    default: v.u8 = static_cast<const uint8_t*>(data)[i]; break;
  }
  return v;
}

// Stores a compute value as element `i` of `data` (of `dtype`).
__device__ __forceinline__ void store_element(void* data, AccelDType dtype, int64_t i, ElementValue v) {
  switch (dtype) {
    case ACCEL_DTYPE_F32: store(static_cast<float*>(data), i, v.f); break;
    case ACCEL_DTYPE_BF16: store(static_cast<__nv_bfloat16*>(data), i, v.f); break;
    case ACCEL_DTYPE_F16: store(static_cast<__half*>(data), i, v.f); break;
    case ACCEL_DTYPE_I32: static_cast<int32_t*>(data)[i] = v.i32; break;
    case ACCEL_DTYPE_I64: static_cast<int64_t*>(data)[i] = v.i64; break;
    default: static_cast<uint8_t*>(data)[i] = v.u8; break;
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
