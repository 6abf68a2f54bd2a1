// Op dispatch of the CUDA plugin: validated views of the call's tensors and
// the checks and plans the op handlers share, the truthful supports_op table,
// and execute_op routing each op to cuBLAS, cuDNN or the plugin's own kernels.
// Called with the device mutex held and the device current on the thread.
#pragma once

#include "cuda_device.hpp"
#include "kernels.hpp"
#include "op_timer.hpp"

#include <accel/plugin/op_classes.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include <cstdint>
#include <string>

namespace accel::cuda {

// A checked tensor: device pointer (null only when empty), dtype and shape.
struct View {
  void* data = nullptr;
  AccelDType dtype = ACCEL_DTYPE_F32;
  int32_t rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t count = 0;
  uint64_t bytes() const { return static_cast<uint64_t>(count) * sdk::dtype_size(dtype); }
  // Row-major element strides.
  void strides(int64_t* out) const;
};

View view_of(const AccelTensor& tensor, const char* role);

// Dtype classes and the comparisons of the op set (docs/op-set.md); unary and
// binary elementwise ops are sdk::is_unary_elementwise / is_binary_elementwise.
inline bool is_float(AccelDType t) {
  return t == ACCEL_DTYPE_F32 || t == ACCEL_DTYPE_BF16 || t == ACCEL_DTYPE_F16;
}
inline bool is_int(AccelDType t) { return t == ACCEL_DTYPE_I32 || t == ACCEL_DTYPE_I64; }
inline bool is_known(AccelDType t) { return sdk::dtype_size(t) != 0; }
inline bool is_comparison(AccelOp op) { return op >= ACCEL_OP_EQUAL && op <= ACCEL_OP_GREATER_EQUAL; }

// Checks shared by the op handlers; each throws PluginError(INVALID_ARGUMENT)
// naming `name` and what was expected.
[[noreturn]] void invalid(const std::string& message);
void check_launch(cudaError_t error, const char* what);
void expect_counts(const AccelOpCall& call, int32_t inputs, int32_t outputs, const char* name);
void expect_dtype(const View& v, AccelDType dtype, const char* name);
bool same_shape(const View& a, const View& b);
std::string shape_text(const View& v);

// Helpers shared by the op handlers.
// The element bit pattern of `value` in `dtype` (low bytes of the result), as
// FILL converts a double.
uint64_t scalar_bits(AccelDType dtype, double value);
// Broadcast strides of `input` against the output shape (right-aligned);
// InvalidArgument naming `name` when it does not broadcast.
void broadcast_strides(const View& input, const View& out, int64_t* strides, const char* name);
// The reduction of the dense `x` over the axes marked in `reduced`.
ReducePlan reduce_plan(const View& x, const bool* reduced);

int32_t supports(const AccelDevice& device, AccelOp op, AccelDType dtype);
OpCost execute_op(AccelDevice& device, const AccelOpCall& call);

// matmul_cublas.cpp
OpCost run_matmul(AccelDevice& device, const AccelOpCall& call);
// conv_cudnn.cpp (CONV2D, CONV2D_BACKWARD_INPUT, CONV2D_BACKWARD_FILTER)
OpCost run_conv(AccelDevice& device, const AccelOpCall& call);
// pooling.cpp (MAX_POOL, AVG_POOL and their gradients)
void run_pool(AccelDevice& device, const AccelOpCall& call);
// softmax.cpp (SOFTMAX, LOG_SOFTMAX)
void run_softmax(AccelDevice& device, const AccelOpCall& call);
// batch_norm.cpp (BATCH_NORM, BATCH_NORM_BACKWARD, since plugin API 1.6)
void run_batch_norm(AccelDevice& device, const AccelOpCall& call);
void run_batch_norm_backward(AccelDevice& device, const AccelOpCall& call);
// fused_elementwise.cpp (FUSED_ELEMENTWISE, since plugin API 1.2)
OpCost run_fused_elementwise(AccelDevice& device, const AccelOpCall& call);

}  // namespace accel::cuda
