// Elementwise and data-movement kernels of the CUDA plugin: unary and binary
// ops (NumPy broadcasting through strides), select, cast, fill, and the
// strided copy behind transpose / broadcast_to / slice / concat, plus pad,
// gather and one_hot. One template per element type; the op is a runtime
// switch so that few kernels are compiled. The formulas themselves are in
// elementwise_formulas.cuh.
#include "device_math.cuh"
#include "elementwise_formulas.cuh"
#include "kernels.hpp"

#include <cstdint>

namespace accel::cuda {
namespace {

// --------------------------------------------------------------- unary

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
    y[i] = logical_not(x[i]);
  }
}

// -------------------------------------------------------------- binary

template <typename T>
__global__ void binary_kernel(AccelOp op, const T* a, const T* b, void* y, BroadcastPlan plan) {
  const bool comparison = is_comparison_op(op);
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

__global__ void cast_kernel(AccelDType from, AccelDType to, const void* x, void* y, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    store_element(y, to, i, convert_value(load_element(x, from, i), from, to));
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
  if (!known_dtype(from) || !known_dtype(to)) return cudaErrorInvalidValue;
  cast_kernel<<<grid_for(count), kThreads, 0, stream>>>(from, to, x, y, count);
  return cudaGetLastError();
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
