// Fused optimizer updates of the CUDA plugin (Keras rules, see accel_plugin.h):
// SGD with optional (Nesterov) momentum, Adam with the bias correction folded
// into lr_t by the caller and epsilon added to the uncorrected sqrt(v), and
// RMSprop (plain or centered, optional momentum; epsilon inside the root with
// momentum, added to it without, as tf.keras 2.x). In place, float arithmetic.
#include "device_math.cuh"
#include "kernels.hpp"

namespace accel::cuda {
namespace {

#define ACCEL_GRID_STRIDE(i, count)                                                      \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (count); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <typename T>
__global__ void sgd_kernel(T* var, const T* grad, T* velocity, int64_t count, float lr,
                           float momentum, bool nesterov) {
  ACCEL_GRID_STRIDE(i, count) {
    const float g = load(grad, i);
    float w = load(var, i);
    if (velocity == nullptr) {
      w -= lr * g;
    } else {
      // Keras: v = momentum * v - lr * g; w += v (or momentum * v - lr * g with Nesterov).
      const float v = momentum * load(velocity, i) - lr * g;
      store(velocity, i, v);
      w += nesterov ? momentum * v - lr * g : v;
    }
    store(var, i, w);
  }
}

template <typename T>
__global__ void adam_kernel(T* var, T* m, T* v, const T* grad, int64_t count, float lr_t,
                            float beta1, float beta2, float epsilon) {
  ACCEL_GRID_STRIDE(i, count) {
    const float g = load(grad, i);
    const float m_new = beta1 * load(m, i) + (1.0f - beta1) * g;
    const float v_new = beta2 * load(v, i) + (1.0f - beta2) * g * g;
    store(m, i, m_new);
    store(v, i, v_new);
    store(var, i, load(var, i) - lr_t * m_new / (sqrtf(v_new) + epsilon));
  }
}

template <typename T>
__global__ void rmsprop_kernel(T* var, T* ms, T* mom, T* mg, const T* grad, int64_t count,
                               float lr, float rho, float momentum, float epsilon,
                               bool centered) {
  ACCEL_GRID_STRIDE(i, count) {
    const float g = load(grad, i);
    const float ms_new = rho * load(ms, i) + (1.0f - rho) * g * g;
    store(ms, i, ms_new);
    float denominator = ms_new;
    if (centered) {
      const float mg_new = rho * load(mg, i) + (1.0f - rho) * g;
      store(mg, i, mg_new);
      denominator -= mg_new * mg_new;
    }
    float w = load(var, i);
    if (momentum > 0.0f) {
      // ApplyRMSProp / ApplyCenteredRMSProp: epsilon inside the root.
      const float mom_new = momentum * load(mom, i) + lr * g / sqrtf(denominator + epsilon);
      store(mom, i, mom_new);
      w -= mom_new;
    } else {
      // Keras's own update without momentum: epsilon added to the root.
      w -= lr * g / (sqrtf(denominator) + epsilon);
    }
    store(var, i, w);
  }
}

}  // namespace

cudaError_t launch_sgd_update(AccelDType dtype, void* var, const void* grad, void* velocity,
                              int64_t count, float learning_rate, float momentum, bool nesterov,
                              cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  return dispatch_float(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sgd_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(
        static_cast<T*>(var), static_cast<const T*>(grad), static_cast<T*>(velocity), count,
        learning_rate, momentum, nesterov);
    return cudaGetLastError();
  });
}

cudaError_t launch_adam_update(AccelDType dtype, void* var, void* m, void* v, const void* grad,
                               int64_t count, float lr_t, float beta1, float beta2,
                               float epsilon, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  return dispatch_float(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    adam_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(
        static_cast<T*>(var), static_cast<T*>(m), static_cast<T*>(v),
        static_cast<const T*>(grad), count, lr_t, beta1, beta2, epsilon);
    return cudaGetLastError();
  });
}

cudaError_t launch_rmsprop_update(AccelDType dtype, void* var, void* ms, void* mom, void* mg,
                                  const void* grad, int64_t count, float learning_rate, float rho,
                                  float momentum, float epsilon, bool centered,
                                  cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  if ((centered && mg == nullptr) || (momentum > 0.0f && mom == nullptr)) {
    return cudaErrorInvalidValue;
  }
  return dispatch_float(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    rmsprop_kernel<T><<<grid_for(count), kThreads, 0, stream>>>(
        static_cast<T*>(var), static_cast<T*>(ms), static_cast<T*>(mom), static_cast<T*>(mg),
        static_cast<const T*>(grad), count, learning_rate, rho, momentum, epsilon, centered);
    return cudaGetLastError();
  });
}

}  // namespace accel::cuda
