// Which ops of the op set are elementwise, and which API version added an op,
// in one place for the host, the host kernels and every plugin (host and CUDA
// device code alike). The enum's ranges alone no longer say it: ops appended
// after 1.2 (ERF) lie past FUSED_ELEMENTWISE, outside NEG .. LOGICAL_NOT.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <stdint.h>

#if defined(__CUDACC__)
#define ACCEL_SDK_HOST_DEVICE __host__ __device__
#else
#define ACCEL_SDK_HOST_DEVICE
#endif

namespace accel::sdk {

// One operand, the output of its shape: NEG .. LOGICAL_NOT, and ERF (1.3).
ACCEL_SDK_HOST_DEVICE constexpr bool is_unary_elementwise(int32_t op) noexcept {
  return (op >= ACCEL_OP_NEG && op <= ACCEL_OP_LOGICAL_NOT) || op == ACCEL_OP_ERF;
}

// Two operands with NumPy broadcasting, in the op's operand order:
// ADD .. TANH_BACKWARD (comparisons included, which yield BOOL).
ACCEL_SDK_HOST_DEVICE constexpr bool is_binary_elementwise(int32_t op) noexcept {
  return op >= ACCEL_OP_ADD && op <= ACCEL_OP_TANH_BACKWARD;
}

// The plugin API minor version that appended `op` to the op set. The host
// never asks a plugin of an older minor about it (supports_op) and never puts
// it in a FUSED_ELEMENTWISE program that plugin runs.
constexpr uint32_t op_since_minor(int32_t op) noexcept {
  if (op >= ACCEL_OP_BATCH_NORM) return 6;
  if (op >= ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER) return 4;
  if (op >= ACCEL_OP_ERF) return 3;
  if (op >= ACCEL_OP_FUSED_ELEMENTWISE) return 2;
  return 0;
}

}  // namespace accel::sdk
