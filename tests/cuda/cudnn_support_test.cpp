// The CUDA plugin's shared cuDNN helpers (plugins/cuda/src/cudnn_support.cpp,
// compiled into this test) against the real libcudnn. Descriptors are host
// objects, so these run without a GPU: every descriptor is destroyed on every
// path, and errors have the status and text the plugin reports. A test binary
// of its own: loading cuDNN here must not show in cuda_plugin_tests, which
// checks that discovery maps no cuDNN.
#include "cudnn_support.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using accel::cuda::CudnnLibrary;
using accel::cuda::TensorDescriptor;

const CudnnLibrary& cudnn() {
  static const AccelHostApi host = [] {
    AccelHostApi api{};
    api.struct_size = sizeof(api);
    api.log = [](AccelLogLevel, const char*, const char*) {};
    return api;
  }();
  return accel::cuda::cudnn_library(&host);
}

// Runs `make` and returns the PluginError it throws.
template <typename Make>
accel::sdk::PluginError error_of(Make make) {
  try {
    make();
  } catch (const accel::sdk::PluginError& error) {
    return error;
  }
  ADD_FAILURE() << "no PluginError";
  return accel::sdk::PluginError(ACCEL_STATUS_OK, "");
}

// Counts destructions, then destroys for real.
int g_destroyed = 0;
cudnnStatus_t counting_destroy(cudnnTensorDescriptor_t descriptor) {
  ++g_destroyed;
  return cudnn().cudnnDestroyTensorDescriptor(descriptor);
}

TEST(CudnnDescriptor, IsDestroyedOnceWhenItGoesAndWhenItsSetterFails) {
  const CudnnLibrary& dnn = cudnn();
  g_destroyed = 0;
  {
    TensorDescriptor made(dnn, dnn.cudnnCreateTensorDescriptor, counting_destroy, "cudnnSetTensor4dDescriptor",
                          [&](cudnnTensorDescriptor_t descriptor) {
                            return dnn.cudnnSetTensor4dDescriptor(descriptor, CUDNN_TENSOR_NHWC,
                                                                  CUDNN_DATA_FLOAT, 2, 3, 4, 5);
                          });
    EXPECT_NE(made.get(), nullptr);
    EXPECT_EQ(g_destroyed, 0);
  }
  EXPECT_EQ(g_destroyed, 1);
  const auto error = error_of([&] {
    TensorDescriptor refused(dnn, dnn.cudnnCreateTensorDescriptor, counting_destroy, "cudnnSetTensor4dDescriptor",
                             [&](cudnnTensorDescriptor_t descriptor) {
                               return dnn.cudnnSetTensor4dDescriptor(descriptor, CUDNN_TENSOR_NHWC,
                                                                     CUDNN_DATA_FLOAT, 0, 3, 4, 5);
                             });
  });
  EXPECT_EQ(g_destroyed, 2);
  EXPECT_EQ(error.code(), ACCEL_STATUS_INTERNAL);
  EXPECT_EQ(std::string(error.what()), "cudnnSetTensor4dDescriptor failed: CUDNN_STATUS_BAD_PARAM");
}

TEST(CudnnDescriptor, ANhwcTensorIsMade) {
  const auto descriptor = accel::cuda::nhwc_f32_descriptor(cudnn(), 2, 28, 28, 32, "conv2d");
  EXPECT_NE(descriptor.get(), nullptr);
}

TEST(CudnnDescriptor, TensorsPastCudnnsIntRangeAreUnimplemented) {
  const auto too_many = error_of([] { accel::cuda::nhwc_f32_descriptor(cudnn(), 65536, 1, 1, 32768, "pool"); });
  EXPECT_EQ(too_many.code(), ACCEL_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(std::string(too_many.what()), "pool: 65536x32768x1x1 has more elements than cuDNN's int range");
  const auto too_long = error_of([] { accel::cuda::cudnn_dimensions(1, 2147483648LL, 1, 1, "conv2d"); });
  EXPECT_EQ(too_long.code(), ACCEL_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(std::string(too_long.what()), "conv2d: dimension 2147483648 exceeds cuDNN's int range");
  EXPECT_EQ(accel::cuda::cudnn_dimensions(65535, 32768, 1, 1, "pool"), (std::array<int, 4>{65535, 32768, 1, 1}));
}

}  // namespace
