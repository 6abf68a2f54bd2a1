// SOFTMAX and LOG_SOFTMAX over the last axis. float32 runs on cuDNN's softmax
// (libcudnn_ops), each row an instance of `cols` channels:
// CUDNN_SOFTMAX_ACCURATE subtracts the row's maximum before exponentiating, as
// the CPU reference does, and CUDNN_SOFTMAX_LOG is the log form computed the
// same way. The 16-bit dtypes, and tensors past cuDNN's int range, run on the
// plugin's own kernel (reduction_kernels.cu), which accumulates in float.
#include "cudnn_support.hpp"
#include "op_dispatch.hpp"

#include <cudnn.h>

namespace accel::cuda {
namespace {

void cudnn_softmax(AccelDevice& device, bool log, const View& x, const View& y, int64_t rows,
                   int64_t cols) {
  cudnnHandle_t handle = cudnn_handle(device);  // the first cuDNN op loads cuDNN
  const CudnnLibrary& dnn = cudnn_library(device.host);
  const auto rows_desc =
      tensor_descriptor(dnn, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, rows, cols, 1, 1, "softmax");
  const float alpha = 1.0f, beta = 0.0f;
  check_cudnn(dnn,
              dnn.cudnnSoftmaxForward(handle, log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                      CUDNN_SOFTMAX_MODE_INSTANCE, &alpha, rows_desc.get(), x.data,
                                      &beta, rows_desc.get(), y.data),
              "cudnnSoftmaxForward");
}

}  // namespace

void run_softmax(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "softmax");
  View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
  if (!same_shape(x, y) || x.dtype != y.dtype || x.rank < 1) invalid("softmax: output must match the input");
  const int64_t cols = x.shape[x.rank - 1];
  if (x.count == 0) return;
  const int64_t rows = x.count / cols;
  const bool log = call.op == ACCEL_OP_LOG_SOFTMAX;
  if (x.dtype == ACCEL_DTYPE_F32 && fits_cudnn_int(x.count)) {
    cudnn_softmax(device, log, x, y, rows, cols);
    return;
  }
  check_launch(launch_softmax(x.dtype, x.data, y.data, rows, cols, log, device.stream), "softmax");
}

}  // namespace accel::cuda
