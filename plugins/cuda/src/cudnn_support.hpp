// What every cuDNN caller of the plugin shares: turning a cudnnStatus_t into a
// PluginError, checking that a dimension fits cuDNN's int, and an owning
// tensor descriptor. The convolution, pooling and softmax files use these
// instead of each keeping its own.
#pragma once

#include "math_libraries.hpp"

#include <cudnn.h>

#include <cstdint>

namespace accel::cuda {

// Throws PluginError (RESOURCE_EXHAUSTED for CUDNN_STATUS_ALLOC_FAILED, else
// INTERNAL) naming `what` and cuDNN's text, unless `status` is success.
void check_cudnn(const CudnnLibrary& dnn, cudnnStatus_t status, const char* what);

// True when every value fits cuDNN's int parameters (dimensions and the
// element strides of a packed tensor).
bool fits_cudnn_int(int64_t value);

// `value` as an int, or PluginError(UNIMPLEMENTED) naming the op.
int cudnn_int(int64_t value, const char* op);

// PluginError(UNIMPLEMENTED) naming the op unless a 4-d tensor of these
// dimensions fits cuDNN's legacy descriptors: each dimension and the element
// count within int (cudnnSetTensor4dDescriptor refuses more than 2^31 - 1
// elements with CUDNN_STATUS_NOT_SUPPORTED, which would read as INTERNAL).
void check_cudnn_dimensions(int64_t n, int64_t c, int64_t h, int64_t w, const char* op);

// An owned 4-d tensor descriptor.
class TensorDescriptor {
 public:
  // Dimensions in cuDNN's order (n, c, h, w); `format` says how they lie in memory.
  TensorDescriptor(const CudnnLibrary& dnn, cudnnTensorFormat_t format, cudnnDataType_t type,
                   int64_t n, int64_t c, int64_t h, int64_t w, const char* op);
  ~TensorDescriptor();
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;

  // An NHWC float32 activation.
  static TensorDescriptor nhwc_f32(const CudnnLibrary& dnn, int64_t n, int64_t h, int64_t w,
                                   int64_t c, const char* op) {
    return {dnn, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, n, c, h, w, op};
  }

  cudnnTensorDescriptor_t get() const { return descriptor_; }

 private:
  const CudnnLibrary& dnn_;
  cudnnTensorDescriptor_t descriptor_ = nullptr;
};

}  // namespace accel::cuda
