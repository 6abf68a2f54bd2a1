// cuBLAS, cuDNN and NCCL, loaded on first use. The plugin does not link them:
// dlopen'ing libcublas (+ libcublasLt) alone takes ~50 ms, more than the whole
// `accel devices` budget, and device listing never needs them. The first op
// that needs one (MATMUL: cuBLAS; CONV2D*, pooling, softmax: cuDNN; the first
// collective: NCCL) loads it with dlopen (found through the plugin's RUNPATH)
// and resolves the entry points the plugin uses into a table, once per
// process. The tables take their types from the real headers (decltype), so a
// signature cannot drift from the library's.
// The libraries are never unloaded (like the plugin itself).
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <cublas_v2.h>
#include <cudnn.h>
#include <nccl.h>

namespace accel::cuda {

// Entry points by exported symbol name (cublas_v2.h maps cublasCreate to
// cublasCreate_v2, ...). X(name) takes the type of the header's declaration;
// XO(name, type) is for names the C++ header overloads (cublas_api.h adds inline
// wrappers taking a cudaDataType compute type): `type` must match one overload
// exactly, and the exported C function is the one that matches.
#define ACCEL_CUBLAS_FUNCTIONS(X, XO)          \
  X(cublasCreate_v2)                           \
  X(cublasDestroy_v2)                          \
  X(cublasSetStream_v2)                        \
  X(cublasSetMathMode)                         \
  X(cublasGetStatusString)                     \
  X(cublasGetProperty)                         \
  XO(cublasGemmEx, CublasGemmEx)               \
  XO(cublasGemmStridedBatchedEx, CublasGemmStridedBatchedEx)

#define ACCEL_CUDNN_FUNCTIONS(X, XO)                 \
  X(cudnnCreate)                                     \
  X(cudnnDestroy)                                    \
  X(cudnnSetStream)                                  \
  X(cudnnGetErrorString)                             \
  X(cudnnGetVersion)                                 \
  X(cudnnCreateTensorDescriptor)                     \
  X(cudnnSetTensor4dDescriptor)                      \
  X(cudnnDestroyTensorDescriptor)                    \
  X(cudnnCreateFilterDescriptor)                     \
  X(cudnnSetFilter4dDescriptor)                      \
  X(cudnnDestroyFilterDescriptor)                    \
  X(cudnnCreateConvolutionDescriptor)                \
  X(cudnnSetConvolution2dDescriptor)                 \
  X(cudnnDestroyConvolutionDescriptor)               \
  X(cudnnSetConvolutionMathType)                     \
  X(cudnnGetConvolutionForwardAlgorithm_v7)          \
  X(cudnnFindConvolutionForwardAlgorithmEx)          \
  X(cudnnGetConvolutionForwardWorkspaceSize)         \
  X(cudnnConvolutionForward)                         \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)     \
  X(cudnnFindConvolutionBackwardDataAlgorithmEx)     \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)    \
  X(cudnnConvolutionBackwardData)                    \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)   \
  X(cudnnFindConvolutionBackwardFilterAlgorithmEx)   \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize)  \
  X(cudnnConvolutionBackwardFilter)                 \
  X(cudnnCreatePoolingDescriptor)                    \
  X(cudnnSetPooling2dDescriptor)                     \
  X(cudnnDestroyPoolingDescriptor)                   \
  X(cudnnPoolingForward)                             \
  X(cudnnPoolingBackward)                            \
  X(cudnnSoftmaxForward)

#define ACCEL_NCCL_FUNCTIONS(X, XO) \
  X(ncclGetVersion)                 \
  X(ncclGetUniqueId)                \
  X(ncclCommInitRank)               \
  X(ncclCommDestroy)                \
  X(ncclCommAbort)                  \
  X(ncclCommGetAsyncError)          \
  X(ncclGetErrorString)             \
  X(ncclGetLastError)               \
  X(ncclGroupStart)                 \
  X(ncclGroupEnd)                   \
  X(ncclAllReduce)

using CublasGemmEx = cublasStatus_t(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
using CublasGemmStridedBatchedEx =
    cublasStatus_t(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                   const void*, const void*, cudaDataType, int, long long int, const void*,
                   cudaDataType, int, long long int, const void*, void*, cudaDataType, int,
                   long long int, int, cublasComputeType_t, cublasGemmAlgo_t);

#define ACCEL_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
#define ACCEL_DECLARE_OVERLOADED_ENTRY(name, type) \
  decltype(static_cast<type*>(&::name)) name = nullptr;

// Entry points of libcublas.so.<CUBLAS_VER_MAJOR>, named as exported.
struct CublasLibrary {
  ACCEL_CUBLAS_FUNCTIONS(ACCEL_DECLARE_ENTRY, ACCEL_DECLARE_OVERLOADED_ENTRY)
};

// Entry points of libcudnn.so.<CUDNN_MAJOR>.
struct CudnnLibrary {
  ACCEL_CUDNN_FUNCTIONS(ACCEL_DECLARE_ENTRY, ACCEL_DECLARE_OVERLOADED_ENTRY)
};

// Entry points of libnccl.so.<NCCL_MAJOR>.
struct NcclLibrary {
  ACCEL_NCCL_FUNCTIONS(ACCEL_DECLARE_ENTRY, ACCEL_DECLARE_OVERLOADED_ENTRY)
};

#undef ACCEL_DECLARE_ENTRY
#undef ACCEL_DECLARE_OVERLOADED_ENTRY

// Load the library on the first call (thread-safe; later calls return the same
// table) and log where it came from through `host`. When it cannot be loaded
// or lacks an entry point, every call throws PluginError(UNAVAILABLE) naming
// the library and dlerror()'s text.
const CublasLibrary& cublas_library(const AccelHostApi* host);
const CudnnLibrary& cudnn_library(const AccelHostApi* host);
const NcclLibrary& nccl_library(const AccelHostApi* host);

}  // namespace accel::cuda
