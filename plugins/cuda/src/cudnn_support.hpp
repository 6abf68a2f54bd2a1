// What every cuDNN caller of the plugin shares: turning a cudnnStatus_t into a
// PluginError, checking that dimensions fit cuDNN's int, and one owner for
// cuDNN descriptors (tensor, filter, convolution, pooling). The convolution,
// pooling and softmax files use these instead of each keeping its own.
#pragma once

#include "math_libraries.hpp"

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <string>

namespace accel::cuda {

// Throws PluginError (RESOURCE_EXHAUSTED for CUDNN_STATUS_ALLOC_FAILED, else
// INTERNAL) naming `what` and cuDNN's text, unless `status` is success.
void check_cudnn(const CudnnLibrary& dnn, cudnnStatus_t status, const char* what);

// True when `value` fits cuDNN's int parameters.
bool fits_cudnn_int(int64_t value);

// The four dimensions of a 4-d tensor or filter as cuDNN's ints, or
// PluginError(UNIMPLEMENTED) naming `op` unless each dimension and the element
// count fit int (cudnnSetTensor4dDescriptor refuses more than 2^31 - 1
// elements with CUDNN_STATUS_NOT_SUPPORTED, which would read as INTERNAL).
std::array<int, 4> cudnn_dimensions(int64_t n, int64_t c, int64_t h, int64_t w, const char* op);

// An owned cuDNN descriptor: made by `create`, filled by `set`, destroyed by
// `destroy` on every path, also when `set` fails (the destructor of a throwing
// constructor never runs). `set_name` names the setter in errors.
template <typename Handle>
class CudnnDescriptor {
 public:
  using Create = cudnnStatus_t (*)(Handle*);
  using Destroy = cudnnStatus_t (*)(Handle);

  template <typename Set>
  CudnnDescriptor(const CudnnLibrary& dnn, Create create, Destroy destroy, const char* set_name,
                  Set set)
      : destroy_(destroy) {
    check_cudnn(dnn, create(&handle_), ("creating the descriptor for " + std::string(set_name)).c_str());
    const cudnnStatus_t status = set(handle_);
    if (status != CUDNN_STATUS_SUCCESS) {
      (void)destroy_(handle_);
      check_cudnn(dnn, status, set_name);
    }
  }
  ~CudnnDescriptor() { (void)destroy_(handle_); }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;

  Handle get() const { return handle_; }

 private:
  Destroy destroy_;
  Handle handle_ = nullptr;
};

using TensorDescriptor = CudnnDescriptor<cudnnTensorDescriptor_t>;

// A 4-d tensor; dimensions in cuDNN's order (n, c, h, w), `format` says how
// they lie in memory.
TensorDescriptor tensor_descriptor(const CudnnLibrary& dnn, cudnnTensorFormat_t format,
                                   cudnnDataType_t type, int64_t n, int64_t c, int64_t h,
                                   int64_t w, const char* op);

// cuDNN's data type of a float tensor: float32, bfloat16 or float16.
inline cudnnDataType_t cudnn_data_type(AccelDType dtype) {
  switch (dtype) {
    case ACCEL_DTYPE_BF16: return CUDNN_DATA_BFLOAT16;
    case ACCEL_DTYPE_F16: return CUDNN_DATA_HALF;
    default: return CUDNN_DATA_FLOAT;
  }
}

// An NHWC activation of `type`.
inline TensorDescriptor nhwc_descriptor(const CudnnLibrary& dnn, cudnnDataType_t type, int64_t n, int64_t h,
                                        int64_t w, int64_t c, const char* op) {
  return tensor_descriptor(dnn, CUDNN_TENSOR_NHWC, type, n, c, h, w, op);
}

// An NHWC float32 activation.
inline TensorDescriptor nhwc_f32_descriptor(const CudnnLibrary& dnn, int64_t n, int64_t h,
                                            int64_t w, int64_t c, const char* op) {
  return tensor_descriptor(dnn, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, n, c, h, w, op);
}

}  // namespace accel::cuda
