// The epilogue kernel of MATMUL, CONV2D and CONV2D_BACKWARD_INPUT (plugin
// API 1.2), run on the device's stream right after cuBLAS / cuDNN: bias add
// over the last axis, activation, ReLU mask, with the plain ops' formulas
// (elementwise_formulas.cuh), in float; the result is rounded once when stored.
#include "device_math.cuh"
#include "elementwise_formulas.cuh"
#include "kernels.hpp"

#include <cstdint>

namespace accel::cuda {
namespace {

template <typename T>
__global__ void epilogue_kernel(T* y, EpiloguePlan plan) {
  const T* bias = static_cast<const T*>(plan.bias);
  const T* mask = static_cast<const T*>(plan.mask);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < plan.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = plan.staged != nullptr ? plan.staged[i] : static_cast<float>(load(y, i));
    if (bias != nullptr) v = binary_float(ACCEL_OP_ADD, v, load(bias, i % plan.columns));
    if (plan.activation) v = unary_float<float>(plan.activation_op, v);
    if (mask != nullptr) v = binary_float(ACCEL_OP_RELU_BACKWARD, v, load(mask, i));
    store(y, i, v);
  }
}

}  // namespace

cudaError_t launch_epilogue(AccelDType dtype, void* y, const EpiloguePlan& plan, cudaStream_t stream) {
  if (plan.count <= 0) return cudaSuccess;
  if (plan.columns <= 0) return cudaErrorInvalidValue;
  return dispatch_float(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    epilogue_kernel<T><<<grid_for(plan.count), kThreads, 0, stream>>>(static_cast<T*>(y), plan);
    return cudaGetLastError();
  });
}

}  // namespace accel::cuda
