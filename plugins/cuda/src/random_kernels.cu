// Random ops of the CUDA plugin on the shared Philox-4x32-10 stream
// (accel/plugin/philox.h): element i uses stream position counter_offset + i,
// so a seed gives the same numbers as the CPU plugin. Values are formed in
// float32 exactly as docs/op-set.md states and the CPU plugin computes them:
// float(a) + float(b - a) * u for uniform, z * float(b) + float(a) for normal.
#include "device_math.cuh"
#include "kernels.hpp"

#include <accel/plugin/philox.h>

namespace accel::cuda {
namespace {

template <typename T>
__global__ void random_kernel(AccelOp op, T* y, int64_t count, uint64_t seed, uint64_t offset,
                              float a, float b, float width) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t position = offset + static_cast<uint64_t>(i);
    // Explicit round-to-nearest float ops: never fused into an FMA, so each
    // product and sum rounds as on the host.
    float value;
    if (op == ACCEL_OP_RANDOM_UNIFORM) {
      const float u = accel_bits_to_unit_float(accel_philox_bits(seed, position));
      value = __fadd_rn(a, __fmul_rn(width, u));
    } else if (op == ACCEL_OP_RANDOM_NORMAL) {
      value = __fadd_rn(__fmul_rn(accel_philox_normal(seed, position, 0), b), a);
    } else {
      value = __fadd_rn(__fmul_rn(accel_philox_truncated_normal(seed, position), b), a);
    }
    store(y, i, value);
  }
}

}  // namespace

cudaError_t launch_random(AccelOp op, AccelDType dtype, void* y, int64_t count, uint64_t seed,
                          uint64_t counter_offset, double a, double b, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  if (op != ACCEL_OP_RANDOM_UNIFORM && op != ACCEL_OP_RANDOM_NORMAL &&
      op != ACCEL_OP_RANDOM_TRUNCATED_NORMAL) {
    return cudaErrorInvalidValue;
  }
  return dispatch_float(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // The width is rounded from the double difference, not the difference of the floats.
    random_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(
        op, static_cast<T*>(y), count, seed, counter_offset, static_cast<float>(a),
        static_cast<float>(b), static_cast<float>(b - a));
    return cudaGetLastError();
  });
}

}  // namespace accel::cuda
