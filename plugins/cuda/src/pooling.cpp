// MAX_POOL, AVG_POOL and their gradients over NHWC tensors, with TensorFlow's
// semantics: the average divides by the window cells inside the input
// (padding excluded), and the max gradient goes to the first maximum of each
// window.
//
// float32 forward pooling and the average gradient run on cuDNN's pooling
// (libcudnn_ops) wherever cuDNN can state the geometry: the same padding on
// both sides of each axis, smaller than the window (so no window is all
// padding), and element counts within cuDNN's int. The rest runs on the
// plugin's own kernels (reduction_kernels.cu): TensorFlow's SAME padding with
// an odd total (one row or column more at the end), the 16-bit dtypes, and
// the max gradient always, because cuDNN's needs the forward output (which the
// op does not carry) and does not say which of tied maxima gets the gradient;
// after relu, ties are common.
#include "cudnn_support.hpp"
#include "op_dispatch.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <cudnn.h>

#include <algorithm>

namespace accel::cuda {
namespace {

PoolGeometry pool_geometry(const AccelPoolAttributes& a, const View& x, const View& y) {
  if (x.rank != 4 || y.rank != 4 || x.shape[0] != y.shape[0] || x.shape[3] != y.shape[3]) {
    invalid("pool: expected NHWC input and output");
  }
  if (a.window_h < 1 || a.window_w < 1 || a.stride_h < 1 || a.stride_w < 1 || a.pad_top < 0 ||
      a.pad_bottom < 0 || a.pad_left < 0 || a.pad_right < 0) {
    invalid("pool: window and strides must be positive, pads non-negative");
  }
  PoolGeometry g;
  g.n = x.shape[0];
  g.h = x.shape[1];
  g.w = x.shape[2];
  g.c = x.shape[3];
  g.out_h = y.shape[1];
  g.out_w = y.shape[2];
  g.window_h = a.window_h;
  g.window_w = a.window_w;
  g.stride_h = a.stride_h;
  g.stride_w = a.stride_w;
  g.pad_top = a.pad_top;
  g.pad_left = a.pad_left;
  const int64_t expect_h = sdk::window_positions(g.h + a.pad_top + a.pad_bottom, g.window_h, g.stride_h);
  const int64_t expect_w = sdk::window_positions(g.w + a.pad_left + a.pad_right, g.window_w, g.stride_w);
  if (g.out_h != expect_h || g.out_w != expect_w) {
    invalid("pool: output " + shape_text(y) + " does not match input " + shape_text(x) +
            " with this window, stride and padding");
  }
  return g;
}

// Whether cuDNN can run this pooling of `input` (x or dx) to `output` (y or dy).
bool cudnn_can_pool(const AccelPoolAttributes& a, const View& input, const View& output) {
  return input.dtype == ACCEL_DTYPE_F32 && a.pad_top == a.pad_bottom &&
         a.pad_left == a.pad_right && a.pad_top < a.window_h && a.pad_left < a.window_w &&
         input.count > 0 && output.count > 0 && fits_cudnn_int(input.count) &&
         fits_cudnn_int(output.count);
}

// A 2-d pooling descriptor for the call's window, stride and (symmetric) padding.
CudnnDescriptor<cudnnPoolingDescriptor_t> pooling_descriptor(const CudnnLibrary& dnn, bool max_pool,
                                                             const AccelPoolAttributes& a) {
  return {dnn, dnn.cudnnCreatePoolingDescriptor, dnn.cudnnDestroyPoolingDescriptor,
          "cudnnSetPooling2dDescriptor", [&](cudnnPoolingDescriptor_t descriptor) {
            // NaNs are skipped by the max, as by the CPU reference's `x > max` scan.
            return dnn.cudnnSetPooling2dDescriptor(
                descriptor,
                max_pool ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                CUDNN_NOT_PROPAGATE_NAN, a.window_h, a.window_w, a.pad_top, a.pad_left, a.stride_h,
                a.stride_w);
          }};
}

void cudnn_pool_forward(AccelDevice& device, bool max_pool, const AccelPoolAttributes& a,
                        const PoolGeometry& g, const View& x, const View& y) {
  cudnnHandle_t handle = cudnn_handle(device);  // the first cuDNN op loads cuDNN
  const CudnnLibrary& dnn = cudnn_library(device.host);
  const auto pooling = pooling_descriptor(dnn, max_pool, a);
  const auto x_desc = nhwc_f32_descriptor(dnn, g.n, g.h, g.w, g.c, "pool");
  const auto y_desc = nhwc_f32_descriptor(dnn, g.n, g.out_h, g.out_w, g.c, "pool");
  const float alpha = 1.0f, beta = 0.0f;
  check_cudnn(dnn,
              dnn.cudnnPoolingForward(handle, pooling.get(), &alpha, x_desc.get(), x.data, &beta,
                                      y_desc.get(), y.data),
              "cudnnPoolingForward");
}

void cudnn_avg_pool_backward(AccelDevice& device, const AccelPoolAttributes& a,
                             const PoolGeometry& g, const View& dy, const View& dx) {
  cudnnHandle_t handle = cudnn_handle(device);
  const CudnnLibrary& dnn = cudnn_library(device.host);
  const auto pooling = pooling_descriptor(dnn, false, a);
  const auto x_desc = nhwc_f32_descriptor(dnn, g.n, g.h, g.w, g.c, "avg_pool_backward");
  const auto y_desc =
      nhwc_f32_descriptor(dnn, g.n, g.out_h, g.out_w, g.c, "avg_pool_backward");
  const float alpha = 1.0f, beta = 0.0f;
  // cuDNN's signature also takes the forward output and input. The average's
  // gradient depends on neither (TensorFlow passes scratch of the right size),
  // so dy and dx, of the same shapes, stand in for them.
  check_cudnn(dnn,
              dnn.cudnnPoolingBackward(handle, pooling.get(), &alpha, y_desc.get(), dy.data,
                                       y_desc.get(), dy.data, x_desc.get(), dx.data, &beta,
                                       x_desc.get(), dx.data),
              "cudnnPoolingBackward");
}

}  // namespace

void run_pool(AccelDevice& device, const AccelOpCall& call) {
  const auto& attributes = sdk::attributes_of<AccelPoolAttributes>(call);
  const bool max_pool = call.op == ACCEL_OP_MAX_POOL || call.op == ACCEL_OP_MAX_POOL_BACKWARD;
  if (call.op == ACCEL_OP_MAX_POOL || call.op == ACCEL_OP_AVG_POOL) {
    expect_counts(call, 1, 1, "pool");
    View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
    expect_dtype(y, x.dtype, "pool output");
    const PoolGeometry geometry = pool_geometry(attributes, x, y);
    if (cudnn_can_pool(attributes, x, y)) {
      cudnn_pool_forward(device, max_pool, attributes, geometry, x, y);
      return;
    }
    check_launch(launch_pool_forward(max_pool, x.dtype, x.data, y.data, geometry, device.stream),
                 "pool");
    return;
  }
  if (max_pool) {
    expect_counts(call, 2, 1, "max_pool_backward");
    View x = view_of(call.inputs[0], "x"), dy = view_of(call.inputs[1], "dy");
    View dx = view_of(call.outputs[0], "dx");
    if (!same_shape(x, dx) || x.dtype != dy.dtype || dx.dtype != x.dtype) {
      invalid("max_pool_backward: dx must match x");
    }
    check_launch(launch_pool_backward(true, x.dtype, x.data, dy.data, dx.data,
                                      pool_geometry(attributes, x, dy), device.stream),
                 "max_pool_backward");
    return;
  }
  expect_counts(call, 1, 1, "avg_pool_backward");
  View dy = view_of(call.inputs[0], "dy"), dx = view_of(call.outputs[0], "dx");
  expect_dtype(dx, dy.dtype, "avg_pool_backward output");
  const PoolGeometry geometry = pool_geometry(attributes, dx, dy);
  if (cudnn_can_pool(attributes, dx, dy)) {
    cudnn_avg_pool_backward(device, attributes, geometry, dy, dx);
    return;
  }
  check_launch(launch_pool_backward(false, dy.dtype, nullptr, dy.data, dx.data, geometry,
                                    device.stream),
               "avg_pool_backward");
}

}  // namespace accel::cuda
