// Op dispatch of the CUDA plugin: validated views of the call's tensors, the
// truthful supports_op table, and execute_op routing each op to cuBLAS,
// cuDNN or the plugin's own kernels. Called with the device mutex held and the
// device current on the thread.
#pragma once

#include "cuda_device.hpp"
#include "kernels.hpp"
#include "op_timer.hpp"

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

// Checks shared by the op handlers; each throws PluginError(INVALID_ARGUMENT)
// naming `name` and what was expected.
[[noreturn]] void invalid(const std::string& message);
void check_launch(cudaError_t error, const char* what);
void expect_counts(const AccelOpCall& call, int32_t inputs, int32_t outputs, const char* name);
void expect_dtype(const View& v, AccelDType dtype, const char* name);
bool same_shape(const View& a, const View& b);
std::string shape_text(const View& v);

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

}  // namespace accel::cuda
