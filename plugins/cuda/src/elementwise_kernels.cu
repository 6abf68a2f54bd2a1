// Elementwise and data-movement kernels of the CUDA plugin: unary and binary
// ops (NumPy broadcasting through strides), select, cast, fill, and the
// strided copy behind transpose / broadcast_to / slice / concat, plus pad,
// gather and one_hot. One template per element type; the op is a runtime
// switch so that few kernels are compiled.
#include "device_math.cuh"
#include "kernels.hpp"

#include <cstdint>

namespace accel::cuda {
namespace {

// --------------------------------------------------------------- unary

template <typename C> __device__ __forceinline__ C unary_float(AccelOp op, C x) {
  switch (op) {
    case ACCEL_OP_NEG: return -x;
    case ACCEL_OP_ABS: return fabsf(x);
    case ACCEL_OP_EXP: return expf(x);
    case ACCEL_OP_LOG: return logf(x);
    case ACCEL_OP_SQRT: return sqrtf(x);
    case ACCEL_OP_RSQRT: return 1.0f / sqrtf(x);
    case ACCEL_OP_SQUARE: return x * x;
    case ACCEL_OP_RELU: return x < 0.0f ? 0.0f : x;  // NaN and -0 pass, as on the CPU
    case ACCEL_OP_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case ACCEL_OP_TANH: return tanhf(x);
    case ACCEL_OP_SIGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);  // keeps 0, -0, NaN
    case ACCEL_OP_RECIPROCAL: return 1.0f / x;
    default: return x;
  }
}

template <typename I> __device__ __forceinline__ I unary_integer(AccelOp op, I x) {
  switch (op) {
    case ACCEL_OP_NEG: return wrap_sub<I>(0, x);
    case ACCEL_OP_ABS: return x < 0 ? wrap_sub<I>(0, x) : x;
    case ACCEL_OP_SQUARE: return wrap_mul<I>(x, x);
    case ACCEL_OP_RELU: return x > 0 ? x : 0;
    case ACCEL_OP_SIGN: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    default: return x;
  }
}

template <typename T>
__global__ void unary_kernel(AccelOp op, const T* x, T* y, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if constexpr (kIsFloating<T>) {
      store(y, i, unary_float<float>(op, load(x, i)));
    } else {
      y[i] = unary_integer<T>(op, x[i]);
    }
  }
}

__global__ void logical_not_kernel(const uint8_t* x, uint8_t* y, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[i] = x[i] ? 0 : 1;
  }
}

// -------------------------------------------------------------- binary

__device__ __forceinline__ bool is_comparison(AccelOp op) {
  return op >= ACCEL_OP_EQUAL && op <= ACCEL_OP_GREATER_EQUAL;
}

template <typename C> __device__ __forceinline__ bool compare(AccelOp op, C a, C b) {
  switch (op) {
    case ACCEL_OP_EQUAL: return a == b;
    case ACCEL_OP_NOT_EQUAL: return a != b;
    case ACCEL_OP_LESS: return a < b;
    case ACCEL_OP_LESS_EQUAL: return a <= b;
    case ACCEL_OP_GREATER: return a > b;
    case ACCEL_OP_GREATER_EQUAL: return a >= b;
    default: return false;
  }
}

__device__ __forceinline__ float binary_float(AccelOp op, float a, float b) {
  switch (op) {
    case ACCEL_OP_ADD: return a + b;
    case ACCEL_OP_SUB: return a - b;
    case ACCEL_OP_MUL: return a * b;
    case ACCEL_OP_DIV: return a / b;
    case ACCEL_OP_MAXIMUM: return nan_max(a, b);
    case ACCEL_OP_MINIMUM: return nan_min(a, b);
    case ACCEL_OP_POW: return powf(a, b);
    // dy where x > 0, else 0 (not dy * 0, which is NaN for an infinite or NaN dy).
    case ACCEL_OP_RELU_BACKWARD: return b > 0.0f ? a : 0.0f;
    case ACCEL_OP_SIGMOID_BACKWARD: return a * b * (1.0f - b);        // dy * y * (1 - y)
    case ACCEL_OP_TANH_BACKWARD: return a * (1.0f - b * b);           // dy * (1 - y^2)
    default: return 0.0f;
  }
}

template <typename I> __device__ __forceinline__ I binary_integer(AccelOp op, I a, I b) {
  switch (op) {
    case ACCEL_OP_ADD: return wrap_add(a, b);
    case ACCEL_OP_SUB: return wrap_sub(a, b);
    case ACCEL_OP_MUL: return wrap_mul(a, b);
    case ACCEL_OP_MAXIMUM: return a > b ? a : b;
    case ACCEL_OP_MINIMUM: return a < b ? a : b;
    default: return 0;
  }
}

template <typename T>
__global__ void binary_kernel(AccelOp op, const T* a, const T* b, void* y, BroadcastPlan plan) {
  const bool comparison = is_comparison(op);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < plan.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t ia = i, ib = i;
    if (!plan.contiguous) {
      ia = strided_offset(i, plan.rank, plan.shape, plan.strides[0]);
      ib = strided_offset(i, plan.rank, plan.shape, plan.strides[1]);
    }
    Compute<T> va = load(a, ia), vb = load(b, ib);
    if (comparison) {
      static_cast<uint8_t*>(y)[i] = compare(op, va, vb) ? 1 : 0;
    } else if constexpr (kIsFloating<T>) {
      store(static_cast<T*>(y), i, binary_float(op, va, vb));
    } else {
      static_cast<T*>(y)[i] = binary_integer<T>(op, va, vb);
    }
  }
}

template <typename E>
__global__ void select_kernel(const uint8_t* cond, const E* a, const E* b, E* y,
                              BroadcastPlan plan) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < plan.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t ic = i, ia = i, ib = i;
    if (!plan.contiguous) {
      ic = strided_offset(i, plan.rank, plan.shape, plan.strides[0]);
      ia = strided_offset(i, plan.rank, plan.shape, plan.strides[1]);
      ib = strided_offset(i, plan.rank, plan.shape, plan.strides[2]);
    }
    y[i] = cond[ic] ? a[ia] : b[ib];
  }
}

// ---------------------------------------------------------------- cast

// Float to integer as the CPU plugin casts (docs/op-set.md): truncate toward
// zero, NaN gives 0, out-of-range values saturate. Spelled out because CUDA
// leaves out-of-range float-to-integer conversions undefined, and a U8 target
// must saturate at 0 and 255, not wrap an int32.
template <typename Int> struct IntRange;
template <> struct IntRange<uint8_t> {
  static constexpr uint8_t kLowest = 0, kMax = 255;
};
template <> struct IntRange<int32_t> {
  static constexpr int32_t kLowest = INT32_MIN, kMax = INT32_MAX;
};
template <> struct IntRange<int64_t> {
  static constexpr int64_t kLowest = INT64_MIN, kMax = INT64_MAX;
};

template <typename Int> __device__ __forceinline__ Int float_to_int(float f) {
  using Range = IntRange<Int>;
  // As floats: kLowest is exact (0 or -2^n), kMax rounds up to 2^n for the wide types.
  if (f != f) return 0;
  if (f <= static_cast<float>(Range::kLowest)) return Range::kLowest;
  if (f >= static_cast<float>(Range::kMax)) return Range::kMax;
  if constexpr (std::is_same_v<Int, int64_t>) {
    return __float2ll_rz(f);
  } else {
    return static_cast<Int>(__float2int_rz(f));
  }
}

template <typename From>
__global__ void cast_kernel(AccelDType to, bool from_bool, const From* x, void* y,
                            int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if constexpr (kIsFloating<From>) {
      float f = load(x, i);
      switch (to) {
        case ACCEL_DTYPE_F32: static_cast<float*>(y)[i] = f; break;
        case ACCEL_DTYPE_BF16: static_cast<__nv_bfloat16*>(y)[i] = __float2bfloat16_rn(f); break;
        case ACCEL_DTYPE_F16: static_cast<__half*>(y)[i] = __float2half_rn(f); break;
        case ACCEL_DTYPE_I32: static_cast<int32_t*>(y)[i] = float_to_int<int32_t>(f); break;
        case ACCEL_DTYPE_I64: static_cast<int64_t*>(y)[i] = float_to_int<int64_t>(f); break;
        case ACCEL_DTYPE_U8: static_cast<uint8_t*>(y)[i] = float_to_int<uint8_t>(f); break;
        case ACCEL_DTYPE_BOOL: static_cast<uint8_t*>(y)[i] = (f != 0.0f) ? 1 : 0; break;
        default: break;
      }
    } else {
      // A BOOL element is 0 or 1 as a number, whatever nonzero byte it holds.
      int64_t v = from_bool ? (x[i] != 0 ? 1 : 0) : static_cast<int64_t>(x[i]);
      switch (to) {
        case ACCEL_DTYPE_F32: static_cast<float*>(y)[i] = static_cast<float>(v); break;
        case ACCEL_DTYPE_BF16:
          static_cast<__nv_bfloat16*>(y)[i] = __float2bfloat16_rn(static_cast<float>(v));
          break;
        case ACCEL_DTYPE_F16:
          static_cast<__half*>(y)[i] = __float2half_rn(static_cast<float>(v));
          break;
        case ACCEL_DTYPE_I32: static_cast<int32_t*>(y)[i] = static_cast<int32_t>(v); break;
        case ACCEL_DTYPE_I64: static_cast<int64_t*>(y)[i] = v; break;
        case ACCEL_DTYPE_U8: static_cast<uint8_t*>(y)[i] = static_cast<uint8_t>(v); break;
        case ACCEL_DTYPE_BOOL: static_cast<uint8_t*>(y)[i] = v != 0 ? 1 : 0; break;
        default: break;
      }
    }
  }
}

// ------------------------------------------------------- data movement

template <typename E> __global__ void fill_kernel(E* y, int64_t count, E value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    y[i] = value;
  }
}

template <typename E>
__global__ void strided_copy_kernel(const E* src, E* dst, StridedCopyPlan plan) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < plan.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t s = plan.src_offset, d = plan.dst_offset, rest = i;
    for (int32_t axis = plan.rank - 1; axis >= 0; --axis) {
      int64_t coord = rest % plan.shape[axis];
      rest /= plan.shape[axis];
      s += coord * plan.src_stride[axis];
      d += coord * plan.dst_stride[axis];
    }
    dst[d] = src[s];
  }
}

struct PadShape {
  int32_t rank;
  int64_t in_shape[kMaxRank];
  int64_t out_shape[kMaxRank];
  int64_t before[kMaxRank];
};

template <typename E>
__global__ void pad_kernel(const E* x, E* y, PadShape p, int64_t count, E value) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, offset = 0, stride = 1;
    bool inside = true;
    for (int32_t axis = p.rank - 1; axis >= 0; --axis) {
      int64_t coord = rest % p.out_shape[axis] - p.before[axis];
      rest /= p.out_shape[axis];
      if (coord < 0 || coord >= p.in_shape[axis]) inside = false;
      offset += coord * stride;
      stride *= p.in_shape[axis];
    }
    y[i] = inside ? x[offset] : value;
  }
}

template <typename E>
__global__ void gather_kernel(const E* params, const void* indices, bool indices_64, E* y,
                              int64_t outer, int64_t axis_dim, int64_t num_indices,
                              int64_t inner) {
  const int64_t count = outer * num_indices * inner;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t k = i % inner;
    int64_t j = (i / inner) % num_indices;
    int64_t o = i / (inner * num_indices);
    int64_t index = indices_64 ? static_cast<const int64_t*>(indices)[j]
                               : static_cast<int64_t>(static_cast<const int32_t*>(indices)[j]);
    y[i] = (index >= 0 && index < axis_dim) ? params[(o * axis_dim + index) * inner + k] : E(0);
  }
}

template <typename E>
__global__ void one_hot_kernel(const void* indices, bool indices_64, E* y, int64_t num_indices,
                               int64_t depth, E on, E off) {
  const int64_t count = num_indices * depth;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t j = i / depth, column = i % depth;
    int64_t index = indices_64 ? static_cast<const int64_t*>(indices)[j]
                               : static_cast<int64_t>(static_cast<const int32_t*>(indices)[j]);
    y[i] = index == column ? on : off;
  }
}

}  // namespace

cudaError_t launch_unary(AccelOp op, AccelDType dtype, const void* x, void* y, int64_t count,
                         cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  if (op == ACCEL_OP_LOGICAL_NOT) {
    if (dtype != ACCEL_DTYPE_BOOL) return cudaErrorInvalidValue;
    logical_not_kernel<<<grid_for(count), kThreads, 0, stream>>>(
        static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), count);
    return cudaGetLastError();
  }
  return dispatch_numeric(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    unary_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(op, static_cast<const T*>(x),
                                                               static_cast<T*>(y), count);
    return cudaGetLastError();
  });
}

cudaError_t launch_binary(AccelOp op, AccelDType dtype, const void* a, const void* b, void* y,
                          const BroadcastPlan& plan, cudaStream_t stream) {
  if (plan.count <= 0) return cudaSuccess;
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    binary_kernel<T><<<grid_for(plan.count), kThreads, 0, stream>>>(
        op, static_cast<const T*>(a), static_cast<const T*>(b), y, plan);
    return cudaGetLastError();
  };
  if (dtype == ACCEL_DTYPE_BOOL || dtype == ACCEL_DTYPE_U8) return run(Tag<uint8_t>{});
  return dispatch_numeric(dtype, run);
}

cudaError_t launch_select(size_t element_size, const void* cond, const void* a, const void* b,
                          void* y, const BroadcastPlan& plan, cudaStream_t stream) {
  if (plan.count <= 0) return cudaSuccess;
  return dispatch_size(element_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    select_kernel<E><<<grid_for(plan.count), kThreads, 0, stream>>>(
        static_cast<const uint8_t*>(cond), static_cast<const E*>(a), static_cast<const E*>(b),
        static_cast<E*>(y), plan);
    return cudaGetLastError();
  });
}

cudaError_t launch_cast(AccelDType from, AccelDType to, const void* x, void* y, int64_t count,
                        cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    cast_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(
        to, from == ACCEL_DTYPE_BOOL, static_cast<const T*>(x), y, count);
    return cudaGetLastError();
  };
  if (from == ACCEL_DTYPE_BOOL || from == ACCEL_DTYPE_U8) return run(Tag<uint8_t>{});
  return dispatch_numeric(from, run);
}

cudaError_t launch_fill(size_t element_size, void* y, int64_t count, uint64_t bits,
                        cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  return dispatch_size(element_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    fill_kernel<E><<<grid_for(count), kThreads, 0, stream>>>(static_cast<E*>(y), count,
                                                              static_cast<E>(bits));
    return cudaGetLastError();
  });
}

cudaError_t launch_strided_copy(size_t element_size, const void* src, void* dst,
                                const StridedCopyPlan& plan, cudaStream_t stream) {
  if (plan.count <= 0) return cudaSuccess;
  return dispatch_size(element_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    strided_copy_kernel<E><<<grid_for(plan.count), kThreads, 0, stream>>>(
        static_cast<const E*>(src), static_cast<E*>(dst), plan);
    return cudaGetLastError();
  });
}

cudaError_t launch_pad(size_t element_size, const void* x, void* y, int32_t rank,
                       const int64_t* in_shape, const int64_t* out_shape, const int64_t* before,
                       uint64_t value_bits, int64_t out_count, cudaStream_t stream) {
  if (out_count <= 0) return cudaSuccess;
  if (rank < 0 || rank > kMaxRank) return cudaErrorInvalidValue;
  PadShape p{};
  p.rank = rank;
  for (int32_t d = 0; d < rank; ++d) {
    p.in_shape[d] = in_shape[d];
    p.out_shape[d] = out_shape[d];
    p.before[d] = before[d];
  }
  return dispatch_size(element_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    pad_kernel<E><<<grid_for(out_count), kThreads, 0, stream>>>(
        static_cast<const E*>(x), static_cast<E*>(y), p, out_count, static_cast<E>(value_bits));
    return cudaGetLastError();
  });
}

cudaError_t launch_gather(size_t element_size, const void* params, const void* indices,
                          bool indices_64, void* y, int64_t outer, int64_t axis_dim,
                          int64_t num_indices, int64_t inner, cudaStream_t stream) {
  const int64_t count = outer * num_indices * inner;
  if (count <= 0) return cudaSuccess;
  return dispatch_size(element_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    gather_kernel<E><<<grid_for(count), kThreads, 0, stream>>>(
        static_cast<const E*>(params), indices, indices_64, static_cast<E*>(y), outer, axis_dim,
        num_indices, inner);
    return cudaGetLastError();
  });
}

cudaError_t launch_one_hot(size_t element_size, const void* indices, bool indices_64, void* y,
                           int64_t num_indices, int64_t depth, uint64_t on_bits,
                           uint64_t off_bits, cudaStream_t stream) {
  const int64_t count = num_indices * depth;
  if (count <= 0) return cudaSuccess;
  return dispatch_size(element_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    one_hot_kernel<E><<<grid_for(count), kThreads, 0, stream>>>(
        indices, indices_64, static_cast<E*>(y), num_indices, depth, static_cast<E>(on_bits),
        static_cast<E>(off_bits));
    return cudaGetLastError();
  });
}

}  // namespace accel::cuda
