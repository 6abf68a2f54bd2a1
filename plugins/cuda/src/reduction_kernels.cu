// Reduction-shaped kernels of the CUDA plugin: reduce sum/mean/max/min over
// any axes (float family accumulates in double, integers in int64 with
// wrap-around; reductions that keep a run of neighbouring elements read
// coalesced and split their rows over many blocks), argmax, softmax / log-softmax and sparse softmax cross-entropy
// over the last axis, and NHWC max / average pooling forward and backward.
// Pool backward gathers per input element, or, for max pooling whose windows
// tile the input, scatters per window (no atomics either way, deterministic).
#include "device_math.cuh"
#include "kernels.hpp"

#include <math.h>

namespace accel::cuda {
namespace {

template <typename T> struct AccumulatorOf { using type = double; };
template <> struct AccumulatorOf<int32_t> { using type = int64_t; };
template <> struct AccumulatorOf<int64_t> { using type = int64_t; };
template <typename T> using Accumulator = typename AccumulatorOf<T>::type;

template <typename T> __device__ __forceinline__ Accumulator<T> reduce_identity(AccelOp op) {
  if constexpr (std::is_same_v<T, int32_t>) {
    if (op == ACCEL_OP_REDUCE_MAX) return INT32_MIN;
    if (op == ACCEL_OP_REDUCE_MIN) return INT32_MAX;
    return 0;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    if (op == ACCEL_OP_REDUCE_MAX) return INT64_MIN;
    if (op == ACCEL_OP_REDUCE_MIN) return INT64_MAX;
    return 0;
  } else {
    if (op == ACCEL_OP_REDUCE_MAX) return -static_cast<double>(INFINITY);
    if (op == ACCEL_OP_REDUCE_MIN) return static_cast<double>(INFINITY);
    return 0.0;
  }
}

template <typename A> __device__ __forceinline__ A reduce_combine(AccelOp op, A a, A b) {
  switch (op) {
    case ACCEL_OP_REDUCE_MAX: return nan_max(a, b);
    case ACCEL_OP_REDUCE_MIN: return nan_min(a, b);
    default:
      if constexpr (std::is_integral_v<A>) {
        return wrap_add(a, b);
      } else {
        return a + b;
      }
  }
}

template <typename T>
__device__ __forceinline__ void reduce_write(AccelOp op, T* y, int64_t o, Accumulator<T> acc,
                                             int64_t reduced_count) {
  if constexpr (std::is_integral_v<Accumulator<T>>) {
    const T sum = static_cast<T>(acc);  // modular narrowing (defined since C++20)
    if (op == ACCEL_OP_REDUCE_MEAN) {
      // As the CPU reference: the wrapped sum of T divided (toward zero) in
      // int64, 0 for an empty reduction. Not the plain sum, were it reached.
      y[o] = reduced_count == 0 ? T{0} : static_cast<T>(static_cast<int64_t>(sum) / reduced_count);
    } else {
      y[o] = sum;
    }
  } else {
    double value = acc;
    if (op == ACCEL_OP_REDUCE_MEAN) value /= static_cast<double>(reduced_count);
    store(y, o, static_cast<float>(value));
  }
}

// One thread per output: for short reductions.
template <typename T>
__global__ void reduce_thread_kernel(AccelOp op, const T* x, T* y, ReducePlan p) {
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < p.out_count;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t base = strided_offset(o, p.kept_rank, p.kept_shape, p.kept_stride);
    Accumulator<T> acc = reduce_identity<T>(op);
    for (int64_t r = 0; r < p.reduced_count; ++r) {
      int64_t at = base + strided_offset(r, p.reduced_rank, p.reduced_shape, p.reduced_stride);
      acc = reduce_combine(op, acc, static_cast<Accumulator<T>>(load(x, at)));
    }
    reduce_write(op, y, o, acc, p.reduced_count);
  }
}

// One block per output: for long reductions.
template <typename T>
__global__ void reduce_block_kernel(AccelOp op, const T* x, T* y, ReducePlan p) {
  __shared__ Accumulator<T> partial[kThreads];
  for (int64_t o = blockIdx.x; o < p.out_count; o += gridDim.x) {
    int64_t base = strided_offset(o, p.kept_rank, p.kept_shape, p.kept_stride);
    Accumulator<T> acc = reduce_identity<T>(op);
    for (int64_t r = threadIdx.x; r < p.reduced_count; r += blockDim.x) {
      int64_t at = base + strided_offset(r, p.reduced_rank, p.reduced_shape, p.reduced_stride);
      acc = reduce_combine(op, acc, static_cast<Accumulator<T>>(load(x, at)));
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) partial[threadIdx.x] = reduce_combine(op, partial[threadIdx.x],
                                                                 partial[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) reduce_write(op, y, o, partial[0], p.reduced_count);
    __syncthreads();
  }
}

// Banded reductions that keep a run of `inner` neighbouring elements
// (x[outer][rows][inner] -> y[outer][inner]): a block's 32 x 8 threads read 32
// neighbouring columns of 8 rows at a time, so a warp's loads are one
// coalesced row segment, and the rows are split into the plan's chunks
// (blockIdx.z) so that enough blocks run when `outer` and `inner` are small
// (batch norm over [N*H*W, C] keeps only C; reduce_plan.cpp chooses the split).
// With one chunk a block writes y; with several it writes its slice's partial
// result, and finish_columns_kernel combines the slices in order. No atomics:
// the same shapes give the same bits.
constexpr int kColumnTile = 32;  // threadIdx.x: columns (reduce_plan.cpp's tile)
constexpr int kRowLanes = 8;     // threadIdx.y: rows read side by side
static_assert(sizeof(Accumulator<float>) == 8 && sizeof(Accumulator<int32_t>) == 8,
              "reduce_scratch_bytes sizes partial results as 8 bytes");

template <typename T>
__global__ void reduce_columns_kernel(AccelOp op, const T* x, T* y, Accumulator<T>* partials, int64_t rows,
                                      int64_t inner, int64_t rows_per_chunk) {
  __shared__ Accumulator<T> lanes[kRowLanes][kColumnTile + 1];
  const int64_t column = static_cast<int64_t>(blockIdx.x) * kColumnTile + threadIdx.x;
  const int64_t outer_index = blockIdx.y;
  const int64_t chunk = blockIdx.z;
  Accumulator<T> acc = reduce_identity<T>(op);
  if (column < inner) {
    const int64_t begin = chunk * rows_per_chunk;
    const int64_t end = begin + rows_per_chunk < rows ? begin + rows_per_chunk : rows;
    const T* band = x + outer_index * rows * inner + column;
    for (int64_t row = begin + threadIdx.y; row < end; row += kRowLanes) {
      acc = reduce_combine(op, acc, static_cast<Accumulator<T>>(load(band, row * inner)));
    }
  }
  lanes[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || column >= inner) return;
  for (int lane = 1; lane < kRowLanes; ++lane) acc = reduce_combine(op, acc, lanes[lane][threadIdx.x]);
  if (gridDim.z == 1) {
    reduce_write(op, y, outer_index * inner + column, acc, rows);
  } else {
    partials[(outer_index * gridDim.z + chunk) * inner + column] = acc;
  }
}

template <typename T>
__global__ void finish_columns_kernel(AccelOp op, const Accumulator<T>* partials, T* y, int64_t outer,
                                      int64_t inner, int64_t chunks, int64_t rows) {
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < outer * inner;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t outer_index = o / inner, column = o % inner;
    const Accumulator<T>* slices = partials + outer_index * chunks * inner + column;
    Accumulator<T> acc = reduce_identity<T>(op);
    for (int64_t chunk = 0; chunk < chunks; ++chunk) acc = reduce_combine(op, acc, slices[chunk * inner]);
    reduce_write(op, y, o, acc, rows);
  }
}

template <typename T>
__global__ void argmax_kernel(const T* x, int64_t* y, int64_t outer, int64_t axis_dim,
                              int64_t inner) {
  const int64_t count = outer * inner;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t o = i / inner, k = i % inner;
    const int64_t base = o * axis_dim * inner + k;
    Compute<T> best = load(x, base);
    int64_t best_index = 0;
    for (int64_t j = 1; j < axis_dim; ++j) {
      Compute<T> v = load(x, base + j * inner);
      if (best < v) {  // first maximum wins, as std::max_element
        best = v;
        best_index = j;
      }
    }
    y[i] = best_index;
  }
}

// ------------------------------------------------------------- softmax

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Reduces one float per thread over the block (blockDim.x is a power of two).
template <typename Op> __device__ float block_reduce(float v, float* shared, Op op) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  float result = shared[0];
  __syncthreads();
  return result;
}

template <typename T>
__global__ void softmax_kernel(const T* x, T* y, int64_t rows, int64_t cols, bool log_softmax) {
  __shared__ float shared[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    T* yr = y + row * cols;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, load(xr, j));
    m = block_reduce(m, shared, MaxOp{});
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(load(xr, j) - m);
    sum = block_reduce(sum, shared, SumOp{});
    const float log_sum = logf(sum);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      float shifted = load(xr, j) - m;
      store(yr, j, log_softmax ? shifted - log_sum : expf(shifted) / sum);
    }
  }
}

template <typename T>
__global__ void sparse_xent_kernel(const T* logits, const void* labels, bool labels_64, T* loss,
                                   T* backprop, int64_t rows, int64_t cols) {
  __shared__ float shared[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = logits + row * cols;
    T* br = backprop + row * cols;
    const int64_t label = labels_64 ? static_cast<const int64_t*>(labels)[row]
                                    : static_cast<const int32_t*>(labels)[row];
    const bool valid = label >= 0 && label < cols;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, load(xr, j));
    m = block_reduce(m, shared, MaxOp{});
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(load(xr, j) - m);
    sum = block_reduce(sum, shared, SumOp{});
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      float p = expf(load(xr, j) - m) / sum;
      store(br, j, valid ? p - (j == label ? 1.0f : 0.0f) : NAN);
    }
    if (threadIdx.x == 0) {
      store(loss, row, valid ? logf(sum) + m - static_cast<float>(load(xr, label)) : NAN);
    }
  }
}

// ------------------------------------------------------------- pooling

// The first maximum of window (oh, ow) in scan order; false when it is empty.
// Scanned as the CPU reference scans: from -inf, a cell wins only when
// strictly greater, so NaNs are skipped (a NaN first cell must not win and
// block every later value), and a window of only NaN / -inf cells gives -inf
// with its first cell as the position.
template <typename T>
__device__ bool window_argmax(const T* x, const PoolGeometry& g, int64_t n, int64_t oh,
                              int64_t ow, int64_t c, int64_t* best_h, int64_t* best_w,
                              float* best_value) {
  bool any = false;
  float best = -INFINITY;
  for (int64_t kh = 0; kh < g.window_h; ++kh) {
    int64_t h = oh * g.stride_h - g.pad_top + kh;
    if (h < 0 || h >= g.h) continue;
    for (int64_t kw = 0; kw < g.window_w; ++kw) {
      int64_t w = ow * g.stride_w - g.pad_left + kw;
      if (w < 0 || w >= g.w) continue;
      float v = load(x, ((n * g.h + h) * g.w + w) * g.c + c);
      if (!any || v > best) {
        any = true;
        *best_h = h;
        *best_w = w;
      }
      if (v > best) best = v;
    }
  }
  *best_value = best;
  return any;
}

__device__ __forceinline__ int64_t window_count(const PoolGeometry& g, int64_t oh, int64_t ow) {
  int64_t h0 = oh * g.stride_h - g.pad_top, w0 = ow * g.stride_w - g.pad_left;
  int64_t h1 = min(h0 + g.window_h, g.h), w1 = min(w0 + g.window_w, g.w);
  h0 = max(h0, int64_t{0});
  w0 = max(w0, int64_t{0});
  return (h1 > h0 && w1 > w0) ? (h1 - h0) * (w1 - w0) : 0;
}

template <typename T>
__global__ void pool_forward_kernel(bool max_pool, const T* x, T* y, PoolGeometry g) {
  const int64_t count = g.n * g.out_h * g.out_w * g.c;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c = i % g.c, ow = (i / g.c) % g.out_w, oh = (i / (g.c * g.out_w)) % g.out_h;
    int64_t n = i / (g.c * g.out_w * g.out_h);
    if (max_pool) {
      int64_t bh = 0, bw = 0;
      float best = -INFINITY;
      window_argmax(x, g, n, oh, ow, c, &bh, &bw, &best);
      store(y, i, best);
    } else {
      float sum = 0.0f;
      for (int64_t kh = 0; kh < g.window_h; ++kh) {
        int64_t h = oh * g.stride_h - g.pad_top + kh;
        if (h < 0 || h >= g.h) continue;
        for (int64_t kw = 0; kw < g.window_w; ++kw) {
          int64_t w = ow * g.stride_w - g.pad_left + kw;
          if (w < 0 || w >= g.w) continue;
          sum += load(x, ((n * g.h + h) * g.w + w) * g.c + c);
        }
      }
      // Times the reciprocal, as the CPU reference scales (bit-identical sums).
      int64_t valid = window_count(g, oh, ow);
      store(y, i, valid > 0 ? sum * (1.0f / static_cast<float>(valid)) : 0.0f);
    }
  }
}

// First output index whose window [o*stride - pad, o*stride - pad + window) holds `at`.
__device__ __forceinline__ int64_t first_window(int64_t at, int64_t pad, int64_t window,
                                                int64_t stride) {
  int64_t numerator = at + pad - window + 1;
  return numerator <= 0 ? 0 : (numerator + stride - 1) / stride;
}

template <typename T>
__global__ void pool_backward_kernel(bool max_pool, const T* x, const T* dy, T* dx,
                                     PoolGeometry g) {
  const int64_t count = g.n * g.h * g.w * g.c;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c = i % g.c, w = (i / g.c) % g.w, h = (i / (g.c * g.w)) % g.h;
    int64_t n = i / (g.c * g.w * g.h);
    int64_t oh0 = first_window(h, g.pad_top, g.window_h, g.stride_h);
    int64_t oh1 = min(g.out_h - 1, (h + g.pad_top) / g.stride_h);
    int64_t ow0 = first_window(w, g.pad_left, g.window_w, g.stride_w);
    int64_t ow1 = min(g.out_w - 1, (w + g.pad_left) / g.stride_w);
    float sum = 0.0f;
    for (int64_t oh = oh0; oh <= oh1; ++oh) {
      for (int64_t ow = ow0; ow <= ow1; ++ow) {
        const float grad = load(dy, ((n * g.out_h + oh) * g.out_w + ow) * g.c + c);
        if (max_pool) {
          int64_t bh = -1, bw = -1;
          float best = 0.0f;
          if (window_argmax(x, g, n, oh, ow, c, &bh, &bw, &best) && bh == h && bw == w) {
            sum += grad;
          }
        } else {
          int64_t valid = window_count(g, oh, ow);
          if (valid > 0) sum += grad * (1.0f / static_cast<float>(valid));
        }
      }
    }
    store(dx, i, sum);
  }
}

// Max pooling whose windows tile the input (stride = window, no padding): each
// input cell is in at most one window, so one thread per window finds its
// maximum once and writes all of the window's cells (the gradient at the
// maximum, zero elsewhere), where pool_backward_kernel finds each window's
// maximum once per cell. Cells past the last whole window are zeroed before.
template <typename T>
__global__ void max_pool_backward_tiled_kernel(const T* x, const T* dy, T* dx, PoolGeometry g) {
  const int64_t count = g.n * g.out_h * g.out_w * g.c;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = i % g.c, ow = (i / g.c) % g.out_w, oh = (i / (g.c * g.out_w)) % g.out_h;
    const int64_t n = i / (g.c * g.out_w * g.out_h);
    int64_t best_h = -1, best_w = -1;
    float best = 0.0f;
    const bool any = window_argmax(x, g, n, oh, ow, c, &best_h, &best_w, &best);
    const float grad = 0.0f + load(dy, i);  // as the gathering kernel's sum: -0 becomes +0
    for (int64_t kh = 0; kh < g.window_h; ++kh) {
      const int64_t h = oh * g.stride_h + kh;
      for (int64_t kw = 0; kw < g.window_w; ++kw) {
        const int64_t w = ow * g.stride_w + kw;
        store(dx, ((n * g.h + h) * g.w + w) * g.c + c, any && h == best_h && w == best_w ? grad : 0.0f);
      }
    }
  }
}

bool windows_tile(const PoolGeometry& g) {
  return g.pad_top == 0 && g.pad_left == 0 && g.stride_h == g.window_h && g.stride_w == g.window_w &&
         g.out_h * g.stride_h <= g.h && g.out_w * g.stride_w <= g.w;
}

}  // namespace

cudaError_t launch_reduce(AccelOp op, AccelDType dtype, const void* x, void* y,
                          const ReducePlan& plan, void* scratch, cudaStream_t stream) {
  if (plan.out_count <= 0) return cudaSuccess;
  return dispatch_numeric(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (plan.column_kernels) {
      if (plan.chunks > 1 && scratch == nullptr) return cudaErrorInvalidValue;  // no reduce_scratch_bytes given
      auto* partials = static_cast<Accumulator<T>*>(scratch);
      const dim3 grid(static_cast<unsigned>((plan.inner + kColumnTile - 1) / kColumnTile),
                      static_cast<unsigned>(plan.outer), static_cast<unsigned>(plan.chunks));
      reduce_columns_kernel<T><<<grid, dim3(kColumnTile, kRowLanes), 0, stream>>>(
          op, static_cast<const T*>(x), static_cast<T*>(y), partials, plan.reduced_count, plan.inner,
          plan.rows_per_chunk);
      if (plan.chunks > 1) {
        finish_columns_kernel<T><<<grid_for(plan.out_count), kThreads, 0, stream>>>(
            op, partials, static_cast<T*>(y), plan.outer, plan.inner, plan.chunks, plan.reduced_count);
      }
    } else if (plan.reduced_count <= 32) {
      reduce_thread_kernel<T><<<grid_for(plan.out_count), kThreads, 0, stream>>>(
          op, static_cast<const T*>(x), static_cast<T*>(y), plan);
    } else {
      unsigned blocks = plan.out_count > 65536 ? 65536u : static_cast<unsigned>(plan.out_count);
      reduce_block_kernel<T><<<blocks, kThreads, 0, stream>>>(op, static_cast<const T*>(x),
                                                              static_cast<T*>(y), plan);
    }
    return cudaGetLastError();
  });
}

cudaError_t launch_argmax(AccelDType dtype, const void* x, int64_t* y, int64_t outer,
                          int64_t axis_dim, int64_t inner, cudaStream_t stream) {
  if (outer * inner <= 0) return cudaSuccess;
  if (axis_dim <= 0) return cudaErrorInvalidValue;
  return dispatch_numeric(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    argmax_kernel<T><<<grid_for(outer * inner), kThreads, 0, stream>>>(
        static_cast<const T*>(x), y, outer, axis_dim, inner);
    return cudaGetLastError();
  });
}

cudaError_t launch_softmax(AccelDType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                           bool log_softmax, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  return dispatch_float(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    unsigned blocks = rows > 65536 ? 65536u : static_cast<unsigned>(rows);
    softmax_kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(x),
                                                       static_cast<T*>(y), rows, cols,
                                                       log_softmax);
    return cudaGetLastError();
  });
}

cudaError_t launch_sparse_softmax_xent(AccelDType dtype, const void* logits, const void* labels,
                                       bool labels_64, void* loss, void* backprop, int64_t rows,
                                       int64_t cols, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  if (cols <= 0) return cudaErrorInvalidValue;
  return dispatch_float(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    unsigned blocks = rows > 65536 ? 65536u : static_cast<unsigned>(rows);
    sparse_xent_kernel<T><<<blocks, kThreads, 0, stream>>>(
        static_cast<const T*>(logits), labels, labels_64, static_cast<T*>(loss),
        static_cast<T*>(backprop), rows, cols);
    return cudaGetLastError();
  });
}

cudaError_t launch_pool_forward(bool max_pool, AccelDType dtype, const void* x, void* y,
                                const PoolGeometry& g, cudaStream_t stream) {
  const int64_t count = g.n * g.out_h * g.out_w * g.c;
  if (count <= 0) return cudaSuccess;
  if (g.stride_h <= 0 || g.stride_w <= 0) return cudaErrorInvalidValue;
  return dispatch_float(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    pool_forward_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(
        max_pool, static_cast<const T*>(x), static_cast<T*>(y), g);
    return cudaGetLastError();
  });
}

cudaError_t launch_pool_backward(bool max_pool, AccelDType dtype, const void* x, const void* dy,
                                 void* dx, const PoolGeometry& g, cudaStream_t stream) {
  const int64_t count = g.n * g.h * g.w * g.c;
  if (count <= 0) return cudaSuccess;
  if (g.stride_h <= 0 || g.stride_w <= 0) return cudaErrorInvalidValue;
  return dispatch_float(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (max_pool && windows_tile(g)) {
      if (g.out_h * g.stride_h != g.h || g.out_w * g.stride_w != g.w) {
        const cudaError_t cleared = cudaMemsetAsync(dx, 0, static_cast<size_t>(count) * sizeof(T), stream);
        if (cleared != cudaSuccess) return cleared;
      }
      const int64_t windows = g.n * g.out_h * g.out_w * g.c;
      if (windows > 0) {
        max_pool_backward_tiled_kernel<T><<<grid_for(windows), kThreads, 0, stream>>>(
            static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx), g);
      }
    } else {
      pool_backward_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(
          max_pool, static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx), g);
    }
    return cudaGetLastError();
  });
}

}  // namespace accel::cuda
