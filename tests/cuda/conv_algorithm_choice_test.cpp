// Which cuDNN convolution algorithms the CUDA plugin tries, and in what order
// (plugins/cuda/src/conv_algorithm_choice.cpp), host code tested without a
// GPU: cuDNN's records are built here as the heuristics or a timed search
// would return them.
#include "conv_algorithm_choice.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace accel::cuda {
namespace {

// A perf record as cuDNN returns them, of the type that goes with `algorithm`.
template <typename Perf = cudnnConvolutionFwdAlgoPerf_t, typename Algorithm>
Perf record(Algorithm algorithm, cudnnMathType_t math, size_t memory = 0,
            cudnnStatus_t status = CUDNN_STATUS_SUCCESS) {
  Perf perf{};
  perf.algo = algorithm;
  perf.status = status;
  perf.mathType = math;
  perf.memory = memory;
  return perf;
}

std::vector<int> algorithms_of(const std::vector<AlgorithmCandidate>& candidates) {
  std::vector<int> algorithms;
  for (const AlgorithmCandidate& candidate : candidates) algorithms.push_back(candidate.algorithm);
  return algorithms;
}

TEST(ConvAlgorithmChoice, KeepsCudnnsOrderAndDropsWhatFailed) {
  const cudnnConvolutionFwdAlgoPerf_t records[] = {
      record(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, CUDNN_FMA_MATH, 0, CUDNN_STATUS_NOT_SUPPORTED),
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_FMA_MATH),
      record(CUDNN_CONVOLUTION_FWD_ALGO_FFT, CUDNN_FMA_MATH, 0, CUDNN_STATUS_ALLOC_FAILED),
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_FMA_MATH),
  };
  const auto candidates = candidates_to_try(records, 4, AlgorithmSource::kTimedSearch, false, 0);
  EXPECT_EQ(algorithms_of(candidates), (std::vector<int>{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                                         CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM}));
}

TEST(ConvAlgorithmChoice, ExactFloat32RunsEveryAlgorithmWithoutTensorCores) {
  const cudnnConvolutionFwdAlgoPerf_t records[] = {
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_TENSOR_OP_MATH),
      record(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION),
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_DEFAULT_MATH),
  };
  const auto candidates = candidates_to_try(records, 3, AlgorithmSource::kHeuristics, false, 0);
  ASSERT_EQ(algorithms_of(candidates), (std::vector<int>{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM}));
  EXPECT_EQ(candidates[0].math, CUDNN_FMA_MATH);
}

TEST(ConvAlgorithmChoice, Tf32RunsEachAlgorithmInTheMathCudnnPairedItWith) {
  const cudnnConvolutionFwdAlgoPerf_t records[] = {
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_TENSOR_OP_MATH),
      record(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION),  // fp16: never
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_DEFAULT_MATH),
  };
  const auto candidates = candidates_to_try(records, 3, AlgorithmSource::kTimedSearch, true, 0);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].math, CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(candidates[1].math, CUDNN_DEFAULT_MATH);
}

TEST(ConvAlgorithmChoice, BothMathModesOfOneAlgorithmFoldIntoOneTryForExactFloat32) {
  // A timed search may return an algorithm twice, once per math mode it
  // timed; without TF32 both run as FMA, so the second is the same try.
  const cudnnConvolutionFwdAlgoPerf_t records[] = {
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_DEFAULT_MATH),
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_FMA_MATH),
      record(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, CUDNN_FMA_MATH),
  };
  const auto candidates = candidates_to_try(records, 3, AlgorithmSource::kTimedSearch, false, 0);
  EXPECT_EQ(algorithms_of(candidates),
            (std::vector<int>{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT}));
}

TEST(ConvAlgorithmChoice, ATimedRecordNeedingMoreWorkspaceThanOfferedIsLeftOut) {
  const cudnnConvolutionFwdAlgoPerf_t records[] = {
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_FMA_MATH, 4096),
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_FMA_MATH, 1024),
  };
  EXPECT_EQ(algorithms_of(candidates_to_try(records, 2, AlgorithmSource::kTimedSearch, false, 1024)),
            (std::vector<int>{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM}));
  // The heuristics' records say what an algorithm would need; the caller
  // asks for that workspace when it runs one.
  EXPECT_EQ(candidates_to_try(records, 2, AlgorithmSource::kHeuristics, false, 0).size(), 2u);
}

TEST(ConvAlgorithmChoice, ATimedSearchForExactFloat32KeepsTheAlgorithmsThatSumProductsDirectly) {
  const cudnnConvolutionFwdAlgoPerf_t records[] = {
      record(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, CUDNN_FMA_MATH),
      record(CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, CUDNN_FMA_MATH),
      record(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_FMA_MATH),
      record(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, CUDNN_FMA_MATH),
      record(CUDNN_CONVOLUTION_FWD_ALGO_FFT, CUDNN_FMA_MATH),
      record(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, CUDNN_FMA_MATH),
  };
  EXPECT_EQ(algorithms_of(candidates_to_try(records, 6, AlgorithmSource::kTimedSearch, false, 0)),
            (std::vector<int>{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT}));
  // TF32 rounds each product far more than any transform does: all of them.
  EXPECT_EQ(candidates_to_try(records, 6, AlgorithmSource::kTimedSearch, true, 0).size(), 6u);
  // The heuristics' ranking is taken as cuDNN gives it.
  EXPECT_EQ(candidates_to_try(records, 6, AlgorithmSource::kHeuristics, false, 0).size(), 6u);

  EXPECT_TRUE(sums_products_directly(CUDNN_CONVOLUTION_BWD_DATA_ALGO_0));
  EXPECT_TRUE(sums_products_directly(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1));
  EXPECT_FALSE(sums_products_directly(CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING));
  EXPECT_FALSE(sums_products_directly(CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED));
  EXPECT_TRUE(sums_products_directly(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3));
  EXPECT_FALSE(sums_products_directly(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT));
  EXPECT_FALSE(sums_products_directly(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED));
}

TEST(ConvAlgorithmChoice, OtherPerfRecordTypesWork) {
  const auto filter = record<cudnnConvolutionBwdFilterAlgoPerf_t>(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, CUDNN_FMA_MATH);
  const auto data = record<cudnnConvolutionBwdDataAlgoPerf_t>(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, CUDNN_DEFAULT_MATH);
  EXPECT_EQ(algorithms_of(candidates_to_try(&filter, 1, AlgorithmSource::kTimedSearch, false, 0)),
            (std::vector<int>{CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1}));
  EXPECT_EQ(algorithms_of(candidates_to_try(&data, 1, AlgorithmSource::kHeuristics, true, 0)),
            (std::vector<int>{CUDNN_CONVOLUTION_BWD_DATA_ALGO_1}));
}

TEST(ConvAlgorithmChoice, SearchIsOfferedTheLargestWorkspaceAskedForUpToTheCap) {
  EXPECT_EQ(search_workspace_bytes({}, 1 << 20), 0u);
  EXPECT_EQ(search_workspace_bytes({0, 4096, 512}, 1 << 20), 4096u);
  EXPECT_EQ(search_workspace_bytes({uint64_t{8} << 30, 4096}, kSearchWorkspaceCap), kSearchWorkspaceCap);
}

TEST(ConvAlgorithmChoice, AutotuneSettingTakesOnOffAndRefusesAnythingElse) {
  EXPECT_TRUE(cudnn_autotune_enabled(nullptr));
  EXPECT_TRUE(cudnn_autotune_enabled(""));
  EXPECT_TRUE(cudnn_autotune_enabled("1"));
  EXPECT_TRUE(cudnn_autotune_enabled("true"));
  EXPECT_FALSE(cudnn_autotune_enabled("0"));
  EXPECT_FALSE(cudnn_autotune_enabled("false"));
  try {
    cudnn_autotune_enabled("yes please");
    FAIL() << "expected PluginError";
  } catch (const sdk::PluginError& error) {
    EXPECT_EQ(error.code(), ACCEL_STATUS_INVALID_ARGUMENT);
    const std::string message = error.what();
    EXPECT_NE(message.find("cuda.cudnn_autotune"), std::string::npos) << message;
    EXPECT_NE(message.find("ACCEL_CUDA_CUDNN_AUTOTUNE"), std::string::npos) << message;
    EXPECT_NE(message.find("\"yes please\""), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace accel::cuda
