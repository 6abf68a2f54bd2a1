// Which cuDNN convolution algorithms to try for a shape, and in what order.
// cuDNN answers in one of two ways: its heuristics rank the algorithms without
// running them (cudnnGet*Algorithm_v7), or a timed search runs each one on the
// real operands (cudnnFind*AlgorithmEx, what TensorFlow's autotuning and
// PyTorch's cudnn.benchmark use). Both answers are lists of perf records in
// cuDNN's order; this file keeps the ones the device may run, so that
// conv_cudnn.cpp tries them in that order and caches the first that runs.
// Host code only: the tests check it without a GPU.
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace accel::cuda {

// An algorithm to try and the math mode to run it in.
struct AlgorithmCandidate {
  int algorithm = 0;
  cudnnMathType_t math = CUDNN_FMA_MATH;
};

// Where cuDNN's list came from.
enum class AlgorithmSource {
  kHeuristics,  // ranked by prediction, not run; statuses say what cuDNN supports
  kTimedSearch  // each one ran; sorted by measured time, fastest first
};

// Whether a device may run `math`: exact fp32 needs CUDNN_FMA_MATH; TF32 also
// allows the tensor-op kernels. CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION never:
// for fp32 data it lets cuDNN convert the operands to fp16, far less precise
// than TF32.
bool math_allowed(bool allow_tf32, cudnnMathType_t math);

// Whether an algorithm sums the products of each output directly (the GEMM
// and direct kernels), rather than through an FFT or a Winograd transform,
// whose rounding error grows with the transform and may exceed what a sum of
// products in another order gives.
bool sums_products_directly(cudnnConvolutionFwdAlgo_t algorithm);
bool sums_products_directly(cudnnConvolutionBwdDataAlgo_t algorithm);
bool sums_products_directly(cudnnConvolutionBwdFilterAlgo_t algorithm);

// The candidates to try, in cuDNN's order: those whose status is success and
// whose math the device allows. With TF32 an algorithm runs in the math mode
// cuDNN paired it with; exact fp32 runs it FMA-only. A timed search for exact
// fp32 keeps the algorithms that sum products directly: speed alone would
// also pick FFT and Winograd ones, which round worse than exact fp32 promises
// (the heuristics' list is kept whole, as cuDNN ranks it). A timed search's
// record that needed more workspace than was offered (`offered_workspace`) is
// left out; heuristics records are not, the caller sizes their workspace. The
// same algorithm and math twice (the search may time both math modes of one
// algorithm, which exact fp32 folds into one) is tried once.
template <typename Perf>
std::vector<AlgorithmCandidate> candidates_to_try(const Perf* records, int count, AlgorithmSource source,
                                                  bool allow_tf32, size_t offered_workspace) {
  std::vector<AlgorithmCandidate> candidates;
  for (int i = 0; i < count; ++i) {
    const Perf& record = records[i];
    if (record.status != CUDNN_STATUS_SUCCESS || !math_allowed(allow_tf32, record.mathType)) continue;
    if (source == AlgorithmSource::kTimedSearch) {
      if (record.memory > offered_workspace) continue;
      if (!allow_tf32 && !sums_products_directly(record.algo)) continue;
    }
    const AlgorithmCandidate candidate{static_cast<int>(record.algo),
                                       allow_tf32 ? record.mathType : CUDNN_FMA_MATH};
    bool seen = false;
    for (const AlgorithmCandidate& earlier : candidates) {
      seen = seen || (earlier.algorithm == candidate.algorithm && earlier.math == candidate.math);
    }
    if (!seen) candidates.push_back(candidate);
  }
  return candidates;
}

// The workspace to offer a timed search: the most any algorithm asks for
// (`asked`, one entry per algorithm whose size cuDNN could tell), at most
// `cap`. An algorithm that needs more is not timed; the search still times
// the others.
uint64_t search_workspace_bytes(const std::vector<uint64_t>& asked, uint64_t cap);

// The largest workspace a timed search is offered (TensorFlow's autotuner
// offers 4 GiB by default; the caching allocator's limit still applies, and
// the search offers less when that much cannot be had).
constexpr uint64_t kSearchWorkspaceCap = uint64_t{1} << 30;

// The setting `cuda.cudnn_autotune` (environment ACCEL_CUDA_CUDNN_AUTOTUNE):
// unset, empty, "1" or "true" times the algorithms once per shape (the default, as
// TensorFlow's TF_CUDNN_USE_AUTOTUNE); "0" or "false" takes cuDNN's heuristic
// choice without running anything. Any other value throws PluginError
// (INVALID_ARGUMENT) naming the setting and the values it takes.
bool cudnn_autotune_enabled(const char* setting);

}  // namespace accel::cuda
