// BATCH_NORM and BATCH_NORM_BACKWARD (plugin API 1.6) on float32 [rows,
// features] (x with every axis but the last flattened): two passes over the
// activations each way. The first sums two per-feature quantities over slices
// of rows (warps read 32 neighbouring features, coalesced; the slices come
// from the column reductions' plan, reduce_plan.cpp), a second kernel adds the
// slices in order and turns the sums into per-feature coefficients, and the
// last pass applies them elementwise. Sums are in double, no atomics: the
// same shapes give the same bits.
#include "device_math.cuh"
#include "kernels.hpp"

#include <math.h>

namespace accel::cuda {
namespace {

constexpr int kFeatureTile = 32;  // threadIdx.x: features
constexpr int kRowLanes = 8;      // threadIdx.y: rows read side by side

// Forward: sum(x) and sum(x^2). Backward: sum(dy) and sum(dy * (x - mean)).
// partials[chunk][0][feature] and [chunk][1][feature].
template <bool kBackward>
__global__ void batch_norm_sums_kernel(const float* x, const float* dy, const float* mean, double* partials,
                                       int64_t rows, int64_t features, int64_t rows_per_chunk) {
  __shared__ double first_lanes[kRowLanes][kFeatureTile + 1];
  __shared__ double second_lanes[kRowLanes][kFeatureTile + 1];
  const int64_t feature = static_cast<int64_t>(blockIdx.x) * kFeatureTile + threadIdx.x;
  const int64_t chunk = blockIdx.z;
  double first = 0.0, second = 0.0;
  if (feature < features) {
    const int64_t begin = chunk * rows_per_chunk;
    const int64_t end = begin + rows_per_chunk < rows ? begin + rows_per_chunk : rows;
    const double centre = kBackward ? static_cast<double>(mean[feature]) : 0.0;
    for (int64_t row = begin + threadIdx.y; row < end; row += kRowLanes) {
      const double value = x[row * features + feature];
      if constexpr (kBackward) {
        const double gradient = dy[row * features + feature];
        first += gradient;
        second += gradient * (value - centre);
      } else {
        first += value;
        second += value * value;
      }
    }
  }
  first_lanes[threadIdx.y][threadIdx.x] = first;
  second_lanes[threadIdx.y][threadIdx.x] = second;
  __syncthreads();
  if (threadIdx.y != 0 || feature >= features) return;
  for (int lane = 1; lane < kRowLanes; ++lane) {
    first += first_lanes[lane][threadIdx.x];
    second += second_lanes[lane][threadIdx.x];
  }
  partials[(chunk * 2) * features + feature] = first;
  partials[(chunk * 2 + 1) * features + feature] = second;
}

// The slices' sums added in order, one thread per feature. Forward writes
// mean and variance and y = x * coefficients[0] + coefficients[1]; backward
// writes dscale and doffset and dx = c0 * dy + c1 * (x - mean) + c2.
template <bool kBackward>
__global__ void batch_norm_finish_kernel(const double* partials, int64_t chunks, int64_t rows, int64_t features,
                                         double epsilon, const float* scale, const float* offset_or_mean,
                                         const float* variance_in, float* first_out, float* second_out,
                                         float* coefficients) {
  for (int64_t feature = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; feature < features;
       feature += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double first = 0.0, second = 0.0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      first += partials[(chunk * 2) * features + feature];
      second += partials[(chunk * 2 + 1) * features + feature];
    }
    const double count = static_cast<double>(rows);
    if constexpr (kBackward) {
      const double inverse = rsqrt(static_cast<double>(variance_in[feature]) + epsilon);
      const double scale_gradient = second * inverse;
      const double gain = scale[feature] * inverse;
      const double per_row = rows > 0 ? count : 1.0;
      first_out[feature] = static_cast<float>(scale_gradient);  // dscale
      second_out[feature] = static_cast<float>(first);          // doffset
      coefficients[feature] = static_cast<float>(gain);
      coefficients[features + feature] = static_cast<float>(-gain * inverse * scale_gradient / per_row);
      coefficients[2 * features + feature] = static_cast<float>(-gain * first / per_row);
    } else {
      const double mean = rows > 0 ? first / count : static_cast<double>(NAN);
      const double variance = rows > 0 ? fmax(0.0, second / count - mean * mean) : static_cast<double>(NAN);
      const double inverse = rsqrt(variance + epsilon);
      first_out[feature] = static_cast<float>(mean);
      second_out[feature] = static_cast<float>(variance);
      coefficients[feature] = static_cast<float>(scale[feature] * inverse);
      coefficients[features + feature] =
          static_cast<float>(offset_or_mean[feature] - mean * scale[feature] * inverse);
    }
  }
}

// Index is uint32_t where the tensor allows it: the feature of an element is
// its index modulo the features, and a 64-bit remainder costs several times
// the 32-bit one on a GPU, enough to show in a pass that only streams memory.
template <typename Index>
__global__ void batch_norm_apply_kernel(const float* x, const float* coefficients, float* y, Index count,
                                        Index features) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index feature = i % features;
    y[i] = x[i] * coefficients[feature] + coefficients[features + feature];
  }
}

template <typename Index>
__global__ void batch_norm_backward_apply_kernel(const float* dy, const float* x, const float* mean,
                                                 const float* coefficients, float* dx, Index count, Index features) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index feature = i % features;
    dx[i] = coefficients[feature] * dy[i] + coefficients[features + feature] * (x[i] - mean[feature]) +
            coefficients[2 * features + feature];
  }
}

// Whether a grid-stride loop over `count` elements can count in uint32_t
// (its last step may pass count by a whole grid).
bool fits_32_bits(int64_t count) {
  return count + static_cast<int64_t>(65536) * kThreads < (int64_t{1} << 32);
}

// Runs launch(count, features) with 32-bit indices where the grid-stride
// loop allows them (fewer registers, cheaper division), else 64-bit ones.
template <typename Launch>
void launch_with_index_width(int64_t count, int64_t features, Launch launch) {
  if (count <= 0) return;
  if (fits_32_bits(count)) {
    launch(static_cast<uint32_t>(count), static_cast<uint32_t>(features));
  } else {
    launch(count, features);
  }
}

// The scratch of batch_norm_scratch_bytes: the slices' sums, then the
// per-feature coefficients the apply pass reads.
struct BatchNormScratch {
  double* partials;
  float* coefficients;
};

BatchNormScratch scratch_of(void* scratch, const BatchNormPlan& plan) {
  auto* partials = static_cast<double*>(scratch);
  return {partials, reinterpret_cast<float*>(partials + plan.chunks * 2 * plan.features)};
}

dim3 sums_grid(const BatchNormPlan& plan) {
  return dim3(static_cast<unsigned>((plan.features + kFeatureTile - 1) / kFeatureTile), 1u,
              static_cast<unsigned>(plan.chunks));
}

}  // namespace

cudaError_t launch_batch_norm(const float* x, const float* scale, const float* offset, float* y, float* mean,
                              float* variance, const BatchNormPlan& plan, double epsilon, void* scratch,
                              cudaStream_t stream) {
  if (plan.features <= 0) return cudaSuccess;
  if (scratch == nullptr || plan.chunks < 1) return cudaErrorInvalidValue;
  const BatchNormScratch parts = scratch_of(scratch, plan);
  batch_norm_sums_kernel<false><<<sums_grid(plan), dim3(kFeatureTile, kRowLanes), 0, stream>>>(
      x, nullptr, nullptr, parts.partials, plan.rows, plan.features, plan.rows_per_chunk);
  batch_norm_finish_kernel<false><<<grid_for(plan.features), kThreads, 0, stream>>>(
      parts.partials, plan.chunks, plan.rows, plan.features, epsilon, scale, offset, nullptr, mean, variance,
      parts.coefficients);
  launch_with_index_width(plan.rows * plan.features, plan.features, [&](auto count, auto features) {
    batch_norm_apply_kernel<<<grid_for(count), kThreads, 0, stream>>>(x, parts.coefficients, y, count, features);
  });
  return cudaGetLastError();
}

cudaError_t launch_batch_norm_backward(const float* dy, const float* x, const float* scale, const float* mean,
                                       const float* variance, float* dx, float* dscale, float* doffset,
                                       const BatchNormPlan& plan, double epsilon, void* scratch,
                                       cudaStream_t stream) {
  if (plan.features <= 0) return cudaSuccess;
  if (scratch == nullptr || plan.chunks < 1) return cudaErrorInvalidValue;
  const BatchNormScratch parts = scratch_of(scratch, plan);
  batch_norm_sums_kernel<true><<<sums_grid(plan), dim3(kFeatureTile, kRowLanes), 0, stream>>>(
      x, dy, mean, parts.partials, plan.rows, plan.features, plan.rows_per_chunk);
  batch_norm_finish_kernel<true><<<grid_for(plan.features), kThreads, 0, stream>>>(
      parts.partials, plan.chunks, plan.rows, plan.features, epsilon, scale, mean, variance, dscale, doffset,
      parts.coefficients);
  launch_with_index_width(plan.rows * plan.features, plan.features, [&](auto count, auto features) {
    batch_norm_backward_apply_kernel<<<grid_for(count), kThreads, 0, stream>>>(dy, x, mean, parts.coefficients, dx,
                                                                               count, features);
  });
  return cudaGetLastError();
}

}  // namespace accel::cuda
