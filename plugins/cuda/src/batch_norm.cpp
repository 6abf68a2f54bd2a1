// BATCH_NORM and BATCH_NORM_BACKWARD (plugin API 1.6), float32: checks the
// operands (x [..., features], per-feature tensors [features]) and runs the
// plugin's kernels (batch_norm_kernels.cu), two passes over the activations
// each way. cuDNN's batch normalization is not used: its NHWC float32 path
// takes the variance as an inverse standard deviation and its running
// variance unbiased, so matching the op's biased variance would cost extra
// kernels around it, and the plugin's own two passes already read each
// activation the fewest times the op allows.
#include "cuda_device.hpp"
#include "op_dispatch.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <string>

namespace accel::cuda {
namespace {

// x seen as [rows, features], its last axis the features.
BatchNormPlan plan_for(const View& x, const char* op) {
  if (x.rank < 1) invalid(std::string(op) + ": x must have at least one axis, got " + shape_text(x));
  const int64_t features = x.shape[x.rank - 1];
  return plan_batch_norm(features == 0 ? 0 : x.count / features, features);
}

void expect_like_x(const View& tensor, const View& x, const char* op, const char* role) {
  if (tensor.dtype != ACCEL_DTYPE_F32 || !same_shape(tensor, x)) {
    invalid(std::string(op) + ": " + role + " must be float32 " + shape_text(x) + " like x, got " +
            shape_text(tensor));
  }
}

void expect_per_feature(const View& tensor, int64_t features, const char* op, const char* role) {
  if (tensor.dtype != ACCEL_DTYPE_F32 || tensor.rank != 1 || tensor.shape[0] != features) {
    invalid(std::string(op) + ": " + role + " must be float32 [" + std::to_string(features) +
            "] (x's last axis), got " + shape_text(tensor));
  }
}

double epsilon_of(const AccelOpCall& call, const char* op) {
  const double epsilon = sdk::attributes_of<AccelBatchNormAttributes>(call).epsilon;
  if (!(epsilon > 0.0)) invalid(std::string(op) + ": epsilon must be positive, got " + std::to_string(epsilon));
  return epsilon;
}

template <typename T>
T* data(const View& view) {
  return static_cast<T*>(view.data);
}

}  // namespace

void run_batch_norm(AccelDevice& device, const AccelOpCall& call) {
  constexpr const char* kOp = "BATCH_NORM";
  expect_counts(call, 3, 3, kOp);
  const View x = view_of(call.inputs[0], "x"), scale = view_of(call.inputs[1], "scale"),
             offset = view_of(call.inputs[2], "offset");
  const View y = view_of(call.outputs[0], "y"), mean = view_of(call.outputs[1], "mean"),
             variance = view_of(call.outputs[2], "variance");
  const BatchNormPlan plan = plan_for(x, kOp);
  expect_like_x(x, x, kOp, "x");
  expect_like_x(y, x, kOp, "y");
  for (const auto& [view, role] : {std::pair{&scale, "scale"}, {&offset, "offset"}, {&mean, "mean"},
                                   {&variance, "variance"}}) {
    expect_per_feature(*view, plan.features, kOp, role);
  }
  const double epsilon = epsilon_of(call, kOp);
  Scratch scratch(*device.allocator, batch_norm_scratch_bytes(plan));
  check_launch(launch_batch_norm(data<const float>(x), data<const float>(scale), data<const float>(offset),
                                 data<float>(y), data<float>(mean), data<float>(variance), plan, epsilon,
                                 scratch.get(), device.stream),
               "batch_norm");
}

void run_batch_norm_backward(AccelDevice& device, const AccelOpCall& call) {
  constexpr const char* kOp = "BATCH_NORM_BACKWARD";
  expect_counts(call, 5, 3, kOp);
  const View dy = view_of(call.inputs[0], "dy"), x = view_of(call.inputs[1], "x"),
             scale = view_of(call.inputs[2], "scale"), mean = view_of(call.inputs[3], "mean"),
             variance = view_of(call.inputs[4], "variance");
  const View dx = view_of(call.outputs[0], "dx"), dscale = view_of(call.outputs[1], "dscale"),
             doffset = view_of(call.outputs[2], "doffset");
  const BatchNormPlan plan = plan_for(x, kOp);
  expect_like_x(x, x, kOp, "x");
  expect_like_x(dy, x, kOp, "dy");
  expect_like_x(dx, x, kOp, "dx");
  for (const auto& [view, role] : {std::pair{&scale, "scale"}, {&mean, "mean"}, {&variance, "variance"},
                                   {&dscale, "dscale"}, {&doffset, "doffset"}}) {
    expect_per_feature(*view, plan.features, kOp, role);
  }
  const double epsilon = epsilon_of(call, kOp);
  Scratch scratch(*device.allocator, batch_norm_scratch_bytes(plan));
  check_launch(launch_batch_norm_backward(data<const float>(dy), data<const float>(x), data<const float>(scale),
                                          data<const float>(mean), data<const float>(variance), data<float>(dx),
                                          data<float>(dscale), data<float>(doffset), plan, epsilon, scratch.get(),
                                          device.stream),
               "batch_norm_backward");
}

}  // namespace accel::cuda
