// Which cuDNN convolution algorithms to try (see conv_algorithm_choice.hpp).
#include "conv_algorithm_choice.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <algorithm>
#include <cstring>
#include <string>

namespace accel::cuda {

bool math_allowed(bool allow_tf32, cudnnMathType_t math) {
  if (math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return false;
  return allow_tf32 || math != CUDNN_TENSOR_OP_MATH;
}

bool sums_products_directly(cudnnConvolutionFwdAlgo_t algorithm) {
  switch (algorithm) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT:
      return true;
    default:  // FFT, FFT_TILING, WINOGRAD, WINOGRAD_NONFUSED
      return false;
  }
}

bool sums_products_directly(cudnnConvolutionBwdDataAlgo_t algorithm) {
  return algorithm == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || algorithm == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
}

bool sums_products_directly(cudnnConvolutionBwdFilterAlgo_t algorithm) {
  return algorithm == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || algorithm == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 ||
         algorithm == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
}

uint64_t search_workspace_bytes(const std::vector<uint64_t>& asked, uint64_t cap) {
  uint64_t most = 0;
  for (uint64_t bytes : asked) most = std::max(most, std::min(bytes, cap));
  return most;
}

bool cudnn_autotune_enabled(const char* setting) {
  if (setting == nullptr || *setting == '\0' || std::strcmp(setting, "1") == 0 || std::strcmp(setting, "true") == 0) return true;
  if (std::strcmp(setting, "0") == 0 || std::strcmp(setting, "false") == 0) return false;
  throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT,
                         std::string("setting cuda.cudnn_autotune (ACCEL_CUDA_CUDNN_AUTOTUNE) is \"") + setting +
                             "\"; expected 1 or true (time cuDNN's algorithms once per shape, the default) "
                             "or 0 or false (take cuDNN's heuristic choice)");
}

}  // namespace accel::cuda
