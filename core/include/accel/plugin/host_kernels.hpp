// Host-memory kernels for every op of op set v1 (see docs/op-set.md).
//
// Shared by the plugins whose buffers live in ordinary host memory (cpu,
// tpu_sim). It owns the numerics of each op and its threading (oneTBB for our
// own loops, oneDNN for GEMM and convolution); it knows nothing about buffers,
// devices or timing, which stay with the plugin. Link accel::host_kernels.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <cstdint>
#include <span>

namespace accel::host_kernels {

// A dense, row-major, contiguous tensor in host memory. `data` may be null only
// when the tensor has no elements.
struct HostTensor {
  AccelDType dtype = ACCEL_DTYPE_F32;
  int32_t rank = 0;
  int64_t shape[ACCEL_MAX_RANK] = {};
  void* data = nullptr;
};

inline int64_t element_count(const HostTensor& tensor) noexcept {
  int64_t count = 1;
  for (int32_t axis = 0; axis < tensor.rank; ++axis) count *= tensor.shape[axis];
  return count;
}

// True when execute() runs `op` whose principal dtype is `dtype`: the dtype of
// the data inputs (value inputs of SELECT, params of GATHER, logits of
// SPARSE_SOFTMAX_CROSS_ENTROPY, the source of CAST, the indices of ONE_HOT),
// or of the output for ops without inputs (FILL, RANDOM_*).
// FUSED_ELEMENTWISE: every dtype (its principal dtype is its first input's,
// or its first output's without inputs); the program's own dtypes are
// checked when it runs.
bool supports(AccelOp op, AccelDType dtype) noexcept;

// True when execute() runs `op` (MATMUL, CONV2D, CONV2D_BACKWARD_INPUT) with
// principal dtype `dtype` and the epilogue `epilogue_flags` (AccelEpilogueFlag
// bits) / `activation` (accel_plugin.h, since 1.2); flags 0 is the plain op.
bool supports_epilogue(AccelOp op, AccelDType dtype, int32_t epilogue_flags, AccelOp activation) noexcept;

// How an epilogue's bias and activation round (accel_plugin.h, since 1.2).
// kFastest: where oneDNN can, inside the primitive's accumulation (CONV2D:
// one pass over the output; results differ from the plain ops by rounding).
// kAsPlainOps: after the product is rounded to its dtype, bit for bit what
// the plain ADD and activation ops give -- what a TPU's vector unit does
// after the MXU's accumulation, and so what the emulated TPU asks for.
enum class EpilogueRounding { kFastest, kAsPlainOps };

// Runs one op. The caller has allocated the outputs with their final shapes.
// Optimizer updates (SGD/ADAM/RMSPROP_UPDATE) write their inputs in place.
// Throws accel::sdk::PluginError (InvalidArgument or Unimplemented) with a
// message naming the op, the dtypes and the shapes.
void execute(AccelOp op, std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
             const void* attributes, EpilogueRounding rounding = EpilogueRounding::kFastest);

// Useful floating-point operations of one call (2*M*N*K for a matmul, the
// same for a convolution and its gradients), 0 for ops not counted.
double flops(AccelOp op, std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
             const void* attributes) noexcept;

// The most threads any kernel uses (oneTBB loops and oneDNN's OpenMP pool).
// 0 restores the default (every core). Process-wide; safe to call any time.
void set_max_threads(int threads);
int max_threads() noexcept;

// The name of the library doing GEMM and convolution, e.g. "oneDNN 2.6.3".
const char* gemm_library() noexcept;

// Op name as in the enum without the prefix, e.g. "MATMUL" (sdk::op_set_name).
const char* op_name(AccelOp op) noexcept;

}  // namespace accel::host_kernels
