// Error checks for CUDA runtime calls: a failed call becomes a PluginError with
// the call, the CUDA error name and text, mapped to the closest status code.
// Shared by every .cpp of the CUDA plugin (never by .cu device code).
#pragma once

#include <accel/plugin/plugin_sdk.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace accel::cuda {

inline AccelStatusCode status_code_for(cudaError_t error) noexcept {
  switch (error) {
    case cudaErrorMemoryAllocation: return ACCEL_STATUS_RESOURCE_EXHAUSTED;
    case cudaErrorInvalidValue: return ACCEL_STATUS_INVALID_ARGUMENT;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorDevicesUnavailable: return ACCEL_STATUS_UNAVAILABLE;
    default: return ACCEL_STATUS_INTERNAL;
  }
}

// "cudaErrorMemoryAllocation (out of memory)": the error's name and text.
inline std::string cuda_error_text(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

// Throws when `error` is not cudaSuccess. Clears the thread's last-error state
// first so that a handled, non-sticky error does not resurface later.
inline void check_cuda(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return;
  (void)cudaGetLastError();
  throw sdk::PluginError(status_code_for(error),
                         std::string("CUDA error in ") + what + ": " + cuda_error_text(error));
}

}  // namespace accel::cuda

#define ACCEL_CUDA_CHECK(call) ::accel::cuda::check_cuda((call), #call)
