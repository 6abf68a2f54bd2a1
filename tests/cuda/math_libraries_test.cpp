// The cuBLAS / cuDNN / NCCL tables the CUDA plugin loads on first use
// (plugins/cuda/src/math_libraries.cpp, compiled into this test): every entry
// point the plugin calls resolves in the libraries found through the RUNPATH,
// and their majors are the ones the plugin was built against. Runs without a
// GPU (loading and resolving needs none). The loading happens in a death
// test's child process, so this process still shows what discovery alone maps
// (CudaPluginLazyLoading in cuda_plugin_test.cpp).
#include "math_libraries.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

namespace {

void log_to_stderr(AccelLogLevel, const char* plugin, const char* message) {
  std::fprintf(stderr, "%s: %s\n", plugin, message);
}

// Loads the three tables; exits 0 when they resolved with the expected majors.
[[noreturn]] void load_all() {
  AccelHostApi host{};
  host.struct_size = sizeof(host);
  host.log = log_to_stderr;
  try {
    const accel::cuda::CublasLibrary& cublas = accel::cuda::cublas_library(&host);
    const accel::cuda::CudnnLibrary& cudnn = accel::cuda::cudnn_library(&host);
    int major = 0;
    if (cublas.cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS) std::exit(3);
    const accel::cuda::NcclLibrary& nccl = accel::cuda::nccl_library(&host);
    const size_t cudnn_version = cudnn.cudnnGetVersion();
    int nccl_version = 0;
    if (nccl.ncclGetVersion(&nccl_version) != ncclSuccess) std::exit(4);
    std::exit(major == CUBLAS_VER_MAJOR && cudnn_version / 10000 == CUDNN_MAJOR && nccl_version / 10000 == NCCL_MAJOR
                  ? 0
                  : 2);
  } catch (const accel::sdk::PluginError& error) {
    std::fprintf(stderr, "status %d: %s\n", static_cast<int>(error.code()), error.what());
    std::exit(1);
  }
}

TEST(CudaMathLibraries, EveryEntryPointResolves) {
  EXPECT_EXIT(load_all(), ::testing::ExitedWithCode(0),
              "cuBLAS .* loaded on first use from .*libcublas\\.so(.|\n)*"
              "cuDNN .* loaded on first use from .*libcudnn\\.so(.|\n)*"
              "NCCL .* loaded on first use from .*libnccl\\.so");
}

}  // namespace
