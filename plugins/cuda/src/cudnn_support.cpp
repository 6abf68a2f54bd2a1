// Shared cuDNN helpers (see cudnn_support.hpp).
#include "cudnn_support.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <cuda_runtime_api.h>

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

std::array<int, 4> cudnn_dimensions(int64_t n, int64_t c, int64_t h, int64_t w, const char* op) {
  const std::array<int64_t, 4> dimensions{n, c, h, w};
  std::array<int, 4> ints{};
  int64_t elements = 1;
  for (size_t d = 0; d < dimensions.size(); ++d) {
    if (!fits_cudnn_int(dimensions[d])) {
      throw sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED,
                             std::string(op) + ": dimension " + std::to_string(dimensions[d]) +
                                 " exceeds cuDNN's int range");
    }
    elements *= dimensions[d];  // both factors fit int here, so the product fits int64_t
    if (!fits_cudnn_int(elements)) {
      throw sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED,
                             std::string(op) + ": " + std::to_string(n) + "x" + std::to_string(c) +
                                 "x" + std::to_string(h) + "x" + std::to_string(w) +
                                 " has more elements than cuDNN's int range");
    }
    ints[d] = static_cast<int>(dimensions[d]);
  }
  return ints;
}

TensorDescriptor tensor_descriptor(const CudnnLibrary& dnn, cudnnTensorFormat_t format,
                                   cudnnDataType_t type, int64_t n, int64_t c, int64_t h,
                                   int64_t w, const char* op) {
  const std::array<int, 4> size = cudnn_dimensions(n, c, h, w, op);
  return TensorDescriptor(dnn, dnn.cudnnCreateTensorDescriptor, dnn.cudnnDestroyTensorDescriptor,
                          "cudnnSetTensor4dDescriptor", [&](cudnnTensorDescriptor_t descriptor) {
                            return dnn.cudnnSetTensor4dDescriptor(descriptor, format, type, size[0],
                                                                  size[1], size[2], size[3]);
                          });
}

}  // namespace accel::cuda
