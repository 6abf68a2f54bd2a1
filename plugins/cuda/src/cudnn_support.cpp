// Shared cuDNN helpers (see cudnn_support.hpp).
#include "cudnn_support.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <cuda_runtime_api.h>

#include <initializer_list>
#include <limits>
#include <string>

namespace accel::cuda {

void check_cudnn(const CudnnLibrary& dnn, cudnnStatus_t status, const char* what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  (void)cudaGetLastError();  // a failed launch inside cuDNN must not poison the next op
  throw sdk::PluginError(status == CUDNN_STATUS_ALLOC_FAILED ? ACCEL_STATUS_RESOURCE_EXHAUSTED
                                                             : ACCEL_STATUS_INTERNAL,
                         std::string(what) + " failed: " + dnn.cudnnGetErrorString(status));
}

bool fits_cudnn_int(int64_t value) {
  return value >= 0 && value <= std::numeric_limits<int>::max();
}

int cudnn_int(int64_t value, const char* op) {
  if (!fits_cudnn_int(value)) {
    throw sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED,
                           std::string(op) + ": dimension " + std::to_string(value) +
                               " exceeds cuDNN's int range");
  }
  return static_cast<int>(value);
}

void check_cudnn_dimensions(int64_t n, int64_t c, int64_t h, int64_t w, const char* op) {
  int64_t elements = 1;
  for (const int64_t dimension : {n, c, h, w}) {
    (void)cudnn_int(dimension, op);
    elements *= dimension;  // both factors fit int here, so the product fits int64_t
    if (!fits_cudnn_int(elements)) {
      throw sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED,
                             std::string(op) + ": " + std::to_string(n) + "x" + std::to_string(c) +
                                 "x" + std::to_string(h) + "x" + std::to_string(w) +
                                 " has more elements than cuDNN's int range");
    }
  }
}

TensorDescriptor::TensorDescriptor(const CudnnLibrary& dnn, cudnnTensorFormat_t format,
                                   cudnnDataType_t type, int64_t n, int64_t c, int64_t h,
                                   int64_t w, const char* op)
    : dnn_(dnn) {
  check_cudnn_dimensions(n, c, h, w, op);
  const int n_int = cudnn_int(n, op), c_int = cudnn_int(c, op);
  const int h_int = cudnn_int(h, op), w_int = cudnn_int(w, op);
  check_cudnn(dnn_, dnn_.cudnnCreateTensorDescriptor(&descriptor_), "cudnnCreateTensorDescriptor");
  const cudnnStatus_t status =
      dnn_.cudnnSetTensor4dDescriptor(descriptor_, format, type, n_int, c_int, h_int, w_int);
  if (status != CUDNN_STATUS_SUCCESS) {
    (void)dnn_.cudnnDestroyTensorDescriptor(descriptor_);
    check_cudnn(dnn_, status, "cudnnSetTensor4dDescriptor");
  }
}

TensorDescriptor::~TensorDescriptor() { (void)dnn_.cudnnDestroyTensorDescriptor(descriptor_); }

}  // namespace accel::cuda
