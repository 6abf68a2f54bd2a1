// Op dispatch of the CUDA plugin (see op_dispatch.hpp): checks every call's
// inputs, outputs and attributes, then launches cuBLAS / cuDNN / own kernels
// on the device's stream.
#include "op_dispatch.hpp"

#include "cuda_check.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace accel::cuda {

// ------------------------------------------------------------ tensor views

void View::strides(int64_t* out) const { row_major_strides(rank, shape, out); }

void invalid(const std::string& message) {
  throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, message);
}

void check_launch(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return;
  if (error == cudaErrorInvalidValue) {
    (void)cudaGetLastError();
    invalid(std::string(what) + ": unsupported arguments for the CUDA kernel");
  }
  check_cuda(error, what);
}

View view_of(const AccelTensor& tensor, const char* role) {
  if (tensor.struct_size < sizeof(AccelTensor)) invalid(std::string(role) + ": AccelTensor too small");
  View view;
  view.dtype = tensor.dtype;
  if (sdk::dtype_size(tensor.dtype) == 0) invalid(std::string(role) + ": unknown dtype");
  if (tensor.rank < 0 || tensor.rank > kMaxRank) {
    invalid(std::string(role) + ": rank " + std::to_string(tensor.rank) + " outside [0, 8]");
  }
  view.rank = tensor.rank;
  int64_t count = 1;
  for (int32_t d = 0; d < tensor.rank; ++d) {
    const int64_t dim = tensor.shape[d];
    if (dim < 0) invalid(std::string(role) + ": negative dimension");
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / 8 / dim) {
      invalid(std::string(role) + ": too many elements");
    }
    count *= dim;
    view.shape[d] = dim;
  }
  view.count = count;
  if (count == 0) return view;
  const AccelBuffer* buffer = tensor.buffer;
  if (buffer == nullptr || buffer->pointer == nullptr) invalid(std::string(role) + ": no buffer");
  const uint64_t bytes = view.bytes();
  if (tensor.byte_offset > buffer->bytes || bytes > buffer->bytes - tensor.byte_offset) {
    throw sdk::PluginError(ACCEL_STATUS_OUT_OF_RANGE,
                           std::string(role) + ": " + std::to_string(bytes) + " bytes at offset " +
                               std::to_string(tensor.byte_offset) + " pass the end of a buffer of " +
                               std::to_string(buffer->bytes) + " bytes");
  }
  if (tensor.byte_offset % sdk::dtype_size(tensor.dtype) != 0) {
    invalid(std::string(role) + ": byte offset not aligned to the element size");
  }
  view.data = static_cast<char*>(buffer->pointer) + tensor.byte_offset;
  return view;
}

// ------------------------------------------------------- shared checks

void expect_counts(const AccelOpCall& call, int32_t inputs, int32_t outputs, const char* name) {
  if (call.num_inputs != inputs || call.num_outputs != outputs ||
      (inputs > 0 && call.inputs == nullptr) || (outputs > 0 && call.outputs == nullptr)) {
    invalid(std::string(name) + ": expected " + std::to_string(inputs) + " inputs and " +
            std::to_string(outputs) + " outputs, got " + std::to_string(call.num_inputs) +
            " and " + std::to_string(call.num_outputs));
  }
}

std::string shape_text(const View& v) {
  std::string text = "[";
  for (int32_t d = 0; d < v.rank; ++d) text += (d ? "," : "") + std::to_string(v.shape[d]);
  return text + "]";
}

bool same_shape(const View& a, const View& b) {
  if (a.rank != b.rank) return false;
  for (int32_t d = 0; d < a.rank; ++d) {
    if (a.shape[d] != b.shape[d]) return false;
  }
  return true;
}

void expect_dtype(const View& v, AccelDType dtype, const char* name) {
  if (v.dtype != dtype) {
    invalid(std::string(name) + ": dtype " + sdk::dtype_name(v.dtype) + ", expected " +
            sdk::dtype_name(dtype));
  }
}

// ------------------------------------------------------- shared helpers

namespace {

float to_float_saturating(double value) {
  if (std::isnan(value)) return std::numeric_limits<float>::quiet_NaN();
  if (value > static_cast<double>(FLT_MAX)) return std::numeric_limits<float>::infinity();
  if (value < -static_cast<double>(FLT_MAX)) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(value);
}

int64_t to_int_saturating(double value, double low, double high) {
  if (std::isnan(value)) return 0;
  value = std::trunc(value);
  if (value <= low) return static_cast<int64_t>(low);
  if (value >= high) return static_cast<int64_t>(high);
  return static_cast<int64_t>(value);
}

}  // namespace

// The element bit pattern of `value` in `dtype` (low bytes of the result).
uint64_t scalar_bits(AccelDType dtype, double value) {
  switch (dtype) {
    case ACCEL_DTYPE_F32: {
      float f = to_float_saturating(value);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      return bits;
    }
    case ACCEL_DTYPE_BF16: return sdk::float_to_bf16(to_float_saturating(value));
    case ACCEL_DTYPE_F16: return sdk::float_to_f16(to_float_saturating(value));
    case ACCEL_DTYPE_I32:
      return static_cast<uint32_t>(static_cast<int32_t>(to_int_saturating(value, -2147483648.0, 2147483647.0)));
    case ACCEL_DTYPE_I64: {
      if (std::isnan(value)) return 0;
      if (value >= 9223372036854775807.0) return static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      if (value <= -9223372036854775808.0) return static_cast<uint64_t>(std::numeric_limits<int64_t>::min());
      return static_cast<uint64_t>(static_cast<int64_t>(std::trunc(value)));
    }
    case ACCEL_DTYPE_U8: return static_cast<uint64_t>(to_int_saturating(value, 0.0, 255.0));
    case ACCEL_DTYPE_BOOL: return value != 0.0 ? 1 : 0;
    default: invalid("unknown dtype");
  }
}

void broadcast_strides(const View& input, const View& out, int64_t* strides, const char* name) {
  if (input.rank > out.rank) {
    invalid(std::string(name) + ": cannot broadcast " + shape_text(input) + " to " + shape_text(out));
  }
  int64_t in_strides[kMaxRank];
  input.strides(in_strides);
  const int32_t lead = out.rank - input.rank;
  for (int32_t d = 0; d < out.rank; ++d) {
    if (d < lead) {
      strides[d] = 0;
      continue;
    }
    const int64_t dim = input.shape[d - lead];
    if (dim == out.shape[d]) {
      strides[d] = in_strides[d - lead];
    } else if (dim == 1) {
      strides[d] = 0;
    } else {
      invalid(std::string(name) + ": cannot broadcast " + shape_text(input) + " to " + shape_text(out));
    }
  }
}

ReducePlan reduce_plan(const View& x, const bool* reduced) {
  return plan_reduction(x.rank, x.shape, reduced);
}

namespace {

BroadcastPlan make_plan(const View& out, const View* const* inputs, int count, const char* name) {
  BroadcastPlan plan;
  plan.rank = out.rank;
  plan.count = out.count;
  plan.contiguous = true;
  for (int32_t d = 0; d < out.rank; ++d) plan.shape[d] = out.shape[d];
  for (int k = 0; k < count; ++k) {
    broadcast_strides(*inputs[k], out, plan.strides[k], name);
    if (!same_shape(*inputs[k], out)) plan.contiguous = false;
  }
  return plan;
}

OpCost cost_of(const AccelOpCall& call, double flops_per_output) {
  OpCost cost;
  for (int32_t i = 0; i < call.num_inputs; ++i) cost.bytes += static_cast<double>(sdk::byte_size(call.inputs[i]));
  for (int32_t i = 0; i < call.num_outputs; ++i) {
    cost.bytes += static_cast<double>(sdk::byte_size(call.outputs[i]));
    cost.flops += flops_per_output * static_cast<double>(sdk::element_count(call.outputs[i]));
  }
  return cost;
}

// ---------------------------------------------------------------- handlers

void run_unary(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "unary op");
  View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
  if (x.count != y.count || x.dtype != y.dtype) invalid("unary op: output must match the input");
  check_launch(launch_unary(call.op, x.dtype, x.data, y.data, x.count, device.stream), "unary");
}

void run_binary(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 2, 1, "binary op");
  View a = view_of(call.inputs[0], "a"), b = view_of(call.inputs[1], "b");
  View y = view_of(call.outputs[0], "y");
  if (a.dtype != b.dtype) invalid("binary op: inputs of different dtypes");
  expect_dtype(y, is_comparison(call.op) ? ACCEL_DTYPE_BOOL : a.dtype, "binary op output");
  const View* inputs[] = {&a, &b};
  BroadcastPlan plan = make_plan(y, inputs, 2, "binary op");
  check_launch(launch_binary(call.op, a.dtype, a.data, b.data, y.data, plan, device.stream),
               "binary");
}

void run_select(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 3, 1, "select");
  View c = view_of(call.inputs[0], "cond"), a = view_of(call.inputs[1], "a"),
       b = view_of(call.inputs[2], "b"), y = view_of(call.outputs[0], "y");
  expect_dtype(c, ACCEL_DTYPE_BOOL, "select cond");
  if (a.dtype != b.dtype || y.dtype != a.dtype) invalid("select: a, b and output dtypes differ");
  const View* inputs[] = {&c, &a, &b};
  BroadcastPlan plan = make_plan(y, inputs, 3, "select");
  check_launch(launch_select(sdk::dtype_size(a.dtype), c.data, a.data, b.data, y.data, plan,
                             device.stream),
               "select");
}

void run_reduce(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "reduce");
  const auto& attributes = sdk::attributes_of<AccelReduceAttributes>(call);
  View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
  expect_dtype(y, x.dtype, "reduce output");
  if (attributes.num_axes < 0 || attributes.num_axes > x.rank) invalid("reduce: bad num_axes");
  bool reduced[kMaxRank] = {};
  for (int32_t i = 0; i < attributes.num_axes; ++i) {
    const int32_t axis = attributes.axes[i];
    if (axis < 0 || axis >= x.rank || reduced[axis]) invalid("reduce: axes must be unique and in range");
    reduced[axis] = true;
  }
  const ReducePlan plan = reduce_plan(x, reduced);
  if (plan.out_count != y.count) invalid("reduce: output has the wrong number of elements");
  Scratch scratch(*device.allocator, reduce_scratch_bytes(plan));
  check_launch(launch_reduce(call.op, x.dtype, x.data, y.data, plan, scratch.get(), device.stream), "reduce");
}

int32_t normalize_axis(int32_t axis, int32_t rank, const char* name) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) invalid(std::string(name) + ": axis out of range");
  return axis;
}

void split_at(const View& v, int32_t axis, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int32_t d = 0; d < axis; ++d) *outer *= v.shape[d];
  for (int32_t d = axis + 1; d < v.rank; ++d) *inner *= v.shape[d];
}

void run_argmax(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "argmax");
  const auto& attributes = sdk::attributes_of<AccelAxisAttributes>(call);
  View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
  expect_dtype(y, ACCEL_DTYPE_I64, "argmax output");
  const int32_t axis = normalize_axis(attributes.axis, x.rank, "argmax");
  int64_t outer, inner;
  split_at(x, axis, &outer, &inner);
  if (outer * inner != y.count) invalid("argmax: output has the wrong number of elements");
  if (y.count > 0 && x.shape[axis] == 0) invalid("argmax over an empty axis");
  check_launch(launch_argmax(x.dtype, x.data, static_cast<int64_t*>(y.data), outer, x.shape[axis],
                             inner, device.stream),
               "argmax");
}

void run_sparse_xent(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 2, 2, "sparse_softmax_cross_entropy");
  View logits = view_of(call.inputs[0], "logits"), labels = view_of(call.inputs[1], "labels");
  View loss = view_of(call.outputs[0], "loss"), backprop = view_of(call.outputs[1], "backprop");
  if (logits.rank != 2 || labels.rank != 1 || labels.shape[0] != logits.shape[0]) {
    invalid("sparse_softmax_cross_entropy: expected logits [B,C] and labels [B]");
  }
  if (!is_int(labels.dtype)) invalid("sparse_softmax_cross_entropy: labels must be int32 or int64");
  if (loss.rank != 1 || loss.shape[0] != logits.shape[0] || !same_shape(backprop, logits) ||
      loss.dtype != logits.dtype || backprop.dtype != logits.dtype) {
    invalid("sparse_softmax_cross_entropy: outputs must be loss [B] and backprop [B,C]");
  }
  if (logits.shape[0] > 0 && logits.shape[1] == 0) invalid("sparse_softmax_cross_entropy: no classes");
  check_launch(launch_sparse_softmax_xent(logits.dtype, logits.data, labels.data,
                                          labels.dtype == ACCEL_DTYPE_I64, loss.data,
                                          backprop.data, logits.shape[0], logits.shape[1],
                                          device.stream),
               "sparse_softmax_cross_entropy");
}

void copy_bytes(AccelDevice& device, void* to, const void* from, uint64_t bytes) {
  if (bytes == 0 || to == from) return;
  ACCEL_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, device.stream));
}

void run_cast(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "cast");
  View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
  if (x.count != y.count) invalid("cast: output must have the input's element count");
  if (x.dtype == y.dtype) return copy_bytes(device, y.data, x.data, x.bytes());
  check_launch(launch_cast(x.dtype, y.dtype, x.data, y.data, x.count, device.stream), "cast");
}

void run_fill(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 0, 1, "fill");
  const auto& attributes = sdk::attributes_of<AccelFillAttributes>(call);
  View y = view_of(call.outputs[0], "y");
  check_launch(launch_fill(sdk::dtype_size(y.dtype), y.data, y.count,
                           scalar_bits(y.dtype, attributes.value), device.stream),
               "fill");
}

void run_random(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 0, 1, "random");
  const auto& attributes = sdk::attributes_of<AccelRandomAttributes>(call);
  View y = view_of(call.outputs[0], "y");
  if (!is_float(y.dtype)) invalid("random ops produce float32, bfloat16 or float16");
  check_launch(launch_random(call.op, y.dtype, y.data, y.count, attributes.seed,
                             attributes.counter_offset, attributes.a, attributes.b, device.stream),
               "random");
}

void run_transpose(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "transpose");
  const auto& attributes = sdk::attributes_of<AccelTransposeAttributes>(call);
  View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
  if (x.rank != y.rank || x.dtype != y.dtype) invalid("transpose: rank or dtype mismatch");
  bool used[kMaxRank] = {};
  int64_t in_strides[kMaxRank];
  x.strides(in_strides);
  StridedCopyPlan plan;
  plan.rank = y.rank;
  plan.count = y.count;
  y.strides(plan.dst_stride);
  for (int32_t d = 0; d < y.rank; ++d) {
    const int32_t from = attributes.permutation[d];
    if (from < 0 || from >= x.rank || used[from]) invalid("transpose: not a permutation");
    used[from] = true;
    if (y.shape[d] != x.shape[from]) invalid("transpose: output shape does not match the permutation");
    plan.shape[d] = y.shape[d];
    plan.src_stride[d] = in_strides[from];
  }
  check_launch(launch_strided_copy(sdk::dtype_size(x.dtype), x.data, y.data, plan, device.stream),
               "transpose");
}

void run_copy(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "copy");
  View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
  if (x.count != y.count || x.dtype != y.dtype) invalid("copy: output must match the input");
  copy_bytes(device, y.data, x.data, x.bytes());
}

void run_broadcast_to(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "broadcast_to");
  View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
  expect_dtype(y, x.dtype, "broadcast_to output");
  StridedCopyPlan plan;
  plan.rank = y.rank;
  plan.count = y.count;
  for (int32_t d = 0; d < y.rank; ++d) plan.shape[d] = y.shape[d];
  broadcast_strides(x, y, plan.src_stride, "broadcast_to");
  y.strides(plan.dst_stride);
  check_launch(launch_strided_copy(sdk::dtype_size(x.dtype), x.data, y.data, plan, device.stream),
               "broadcast_to");
}

void run_slice(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "slice");
  const auto& attributes = sdk::attributes_of<AccelSliceAttributes>(call);
  View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
  if (x.rank != y.rank || x.dtype != y.dtype) invalid("slice: rank or dtype mismatch");
  int64_t in_strides[kMaxRank];
  x.strides(in_strides);
  StridedCopyPlan plan;
  plan.rank = y.rank;
  plan.count = y.count;
  y.strides(plan.dst_stride);
  for (int32_t d = 0; d < y.rank; ++d) {
    const int64_t begin = attributes.begin[d];
    if (begin < 0 || begin > x.shape[d] || y.shape[d] > x.shape[d] - begin) {
      invalid("slice: window outside the input along axis " + std::to_string(d));
    }
    plan.shape[d] = y.shape[d];
    plan.src_stride[d] = in_strides[d];
    plan.src_offset += begin * in_strides[d];
  }
  check_launch(launch_strided_copy(sdk::dtype_size(x.dtype), x.data, y.data, plan, device.stream),
               "slice");
}

void run_concat(AccelDevice& device, const AccelOpCall& call) {
  if (call.num_inputs < 1 || call.num_outputs != 1 || call.inputs == nullptr || call.outputs == nullptr) {
    invalid("concat: expected at least one input and one output");
  }
  const auto& attributes = sdk::attributes_of<AccelAxisAttributes>(call);
  View y = view_of(call.outputs[0], "y");
  const int32_t axis = normalize_axis(attributes.axis, y.rank, "concat");
  int64_t out_strides[kMaxRank];
  y.strides(out_strides);
  // Check every input before launching anything.
  std::vector<View> inputs;
  int64_t total = 0;
  for (int32_t i = 0; i < call.num_inputs; ++i) {
    View x = view_of(call.inputs[i], "concat input");
    if (x.rank != y.rank || x.dtype != y.dtype) invalid("concat: input rank or dtype mismatch");
    for (int32_t d = 0; d < y.rank; ++d) {
      if (d != axis && x.shape[d] != y.shape[d]) invalid("concat: inputs differ off the concat axis");
    }
    total += x.shape[axis];
    inputs.push_back(x);
  }
  if (total != y.shape[axis]) invalid("concat: input sizes do not add up to the output");
  int64_t position = 0;
  for (const View& x : inputs) {
    StridedCopyPlan plan;
    plan.rank = x.rank;
    plan.count = x.count;
    for (int32_t d = 0; d < x.rank; ++d) plan.shape[d] = x.shape[d];
    x.strides(plan.src_stride);
    for (int32_t d = 0; d < y.rank; ++d) plan.dst_stride[d] = out_strides[d];
    plan.dst_offset = position * out_strides[axis];
    check_launch(launch_strided_copy(sdk::dtype_size(x.dtype), x.data, y.data, plan, device.stream),
                 "concat");
    position += x.shape[axis];
  }
}

void run_pad(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "pad");
  const auto& attributes = sdk::attributes_of<AccelPadAttributes>(call);
  View x = view_of(call.inputs[0], "x"), y = view_of(call.outputs[0], "y");
  if (x.rank != y.rank || x.dtype != y.dtype) invalid("pad: rank or dtype mismatch");
  for (int32_t d = 0; d < x.rank; ++d) {
    if (attributes.before[d] < 0 || attributes.after[d] < 0 ||
        y.shape[d] != x.shape[d] + attributes.before[d] + attributes.after[d]) {
      invalid("pad: output shape does not match the padding along axis " + std::to_string(d));
    }
  }
  check_launch(launch_pad(sdk::dtype_size(x.dtype), x.data, y.data, x.rank, x.shape, y.shape,
                          attributes.before, scalar_bits(x.dtype, attributes.value), y.count,
                          device.stream),
               "pad");
}

void run_gather(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 2, 1, "gather");
  const auto& attributes = sdk::attributes_of<AccelAxisAttributes>(call);
  View params = view_of(call.inputs[0], "params"), indices = view_of(call.inputs[1], "indices");
  View y = view_of(call.outputs[0], "y");
  if (!is_int(indices.dtype)) invalid("gather: indices must be int32 or int64");
  expect_dtype(y, params.dtype, "gather output");
  const int32_t axis = normalize_axis(attributes.axis, params.rank, "gather");
  if (y.rank != params.rank - 1 + indices.rank) invalid("gather: output rank mismatch");
  int64_t outer, inner;
  split_at(params, axis, &outer, &inner);
  if (outer * indices.count * inner != y.count) invalid("gather: output has the wrong number of elements");
  check_launch(launch_gather(sdk::dtype_size(params.dtype), params.data, indices.data,
                             indices.dtype == ACCEL_DTYPE_I64, y.data, outer, params.shape[axis],
                             indices.count, inner, device.stream),
               "gather");
}

void run_one_hot(AccelDevice& device, const AccelOpCall& call) {
  expect_counts(call, 1, 1, "one_hot");
  const auto& attributes = sdk::attributes_of<AccelOneHotAttributes>(call);
  View indices = view_of(call.inputs[0], "indices"), y = view_of(call.outputs[0], "y");
  if (!is_int(indices.dtype)) invalid("one_hot: indices must be int32 or int64");
  if (y.rank != indices.rank + 1) invalid("one_hot: output must be [..., depth]");
  for (int32_t d = 0; d < indices.rank; ++d) {
    if (y.shape[d] != indices.shape[d]) invalid("one_hot: output must be [..., depth]");
  }
  check_launch(launch_one_hot(sdk::dtype_size(y.dtype), indices.data,
                              indices.dtype == ACCEL_DTYPE_I64, y.data, indices.count,
                              y.shape[y.rank - 1], scalar_bits(y.dtype, attributes.on_value),
                              scalar_bits(y.dtype, attributes.off_value), device.stream),
               "one_hot");
}

// Inputs of an optimizer update: all of `var`'s dtype and element count.
std::vector<View> optimizer_inputs(const AccelOpCall& call, const char* name) {
  if (call.num_outputs != 0 || call.inputs == nullptr) invalid(std::string(name) + ": takes no outputs");
  std::vector<View> views;
  for (int32_t i = 0; i < call.num_inputs; ++i) {
    views.push_back(view_of(call.inputs[i], name));
    if (views.back().dtype != views[0].dtype || views.back().count != views[0].count) {
      invalid(std::string(name) + ": every input must match var's dtype and size");
    }
  }
  return views;
}

void run_sgd(AccelDevice& device, const AccelOpCall& call) {
  const auto& attributes = sdk::attributes_of<AccelSgdAttributes>(call);
  const bool momentum = attributes.momentum != 0.0;
  if (call.num_inputs != (momentum ? 3 : 2) && call.num_inputs != 3) {
    invalid("sgd_update: expected var, grad[, velocity]");
  }
  std::vector<View> v = optimizer_inputs(call, "sgd_update");
  check_launch(launch_sgd_update(v[0].dtype, v[0].data, v[1].data, momentum ? v[2].data : nullptr,
                                 v[0].count, static_cast<float>(attributes.learning_rate),
                                 static_cast<float>(attributes.momentum), attributes.nesterov != 0,
                                 device.stream),
               "sgd_update");
}

void run_adam(AccelDevice& device, const AccelOpCall& call) {
  const auto& attributes = sdk::attributes_of<AccelAdamAttributes>(call);
  if (call.num_inputs != 4) invalid("adam_update: expected var, m, v, grad");
  if (attributes.step < 1) invalid("adam_update: step is 1-based");
  std::vector<View> v = optimizer_inputs(call, "adam_update");
  const double t = static_cast<double>(attributes.step);
  const double lr_t = attributes.learning_rate * std::sqrt(1.0 - std::pow(attributes.beta2, t)) /
                      (1.0 - std::pow(attributes.beta1, t));
  check_launch(launch_adam_update(v[0].dtype, v[0].data, v[1].data, v[2].data, v[3].data,
                                  v[0].count, static_cast<float>(lr_t),
                                  static_cast<float>(attributes.beta1),
                                  static_cast<float>(attributes.beta2),
                                  static_cast<float>(attributes.epsilon), device.stream),
               "adam_update");
}

void run_rmsprop(AccelDevice& device, const AccelOpCall& call) {
  const auto& attributes = sdk::attributes_of<AccelRmspropAttributes>(call);
  if (call.num_inputs != 5) invalid("rmsprop_update: expected var, ms, mom, mg, grad");
  std::vector<View> v = optimizer_inputs(call, "rmsprop_update");
  check_launch(launch_rmsprop_update(v[0].dtype, v[0].data, v[1].data, v[2].data, v[3].data,
                                     v[4].data, v[0].count,
                                     static_cast<float>(attributes.learning_rate),
                                     static_cast<float>(attributes.rho),
                                     static_cast<float>(attributes.momentum),
                                     static_cast<float>(attributes.epsilon),
                                     attributes.centered != 0, device.stream),
               "rmsprop_update");
}

}  // namespace

// ------------------------------------------------------------- supports_op

int32_t supports(const AccelDevice& /*device*/, AccelOp op, AccelDType dtype) {
  if (!is_known(dtype)) return 0;
  const bool f = is_float(dtype), i = is_int(dtype);
  switch (op) {
    case ACCEL_OP_MATMUL: return f;
    case ACCEL_OP_CONV2D:
    case ACCEL_OP_CONV2D_BACKWARD_INPUT:
    // Answered without loading cuDNN (the host asks about every op at device
    // open); a cuDNN that cannot be loaded fails the op with UNAVAILABLE.
    // bfloat16 and float16 on the tensor cores, float32 accumulation.
    case ACCEL_OP_CONV2D_BACKWARD_FILTER: return f;
    case ACCEL_OP_MAX_POOL:
    case ACCEL_OP_MAX_POOL_BACKWARD:
    case ACCEL_OP_AVG_POOL:
    case ACCEL_OP_AVG_POOL_BACKWARD: return f;
    case ACCEL_OP_NEG:
    case ACCEL_OP_ABS:
    case ACCEL_OP_SQUARE:
    case ACCEL_OP_RELU:
    case ACCEL_OP_SIGN: return f || i;
    case ACCEL_OP_LOGICAL_NOT: return dtype == ACCEL_DTYPE_BOOL;
    case ACCEL_OP_ADD:
    case ACCEL_OP_SUB:
    case ACCEL_OP_MUL:
    case ACCEL_OP_MAXIMUM:
    case ACCEL_OP_MINIMUM: return f || i;
    case ACCEL_OP_EQUAL:
    case ACCEL_OP_NOT_EQUAL: return f || i || dtype == ACCEL_DTYPE_BOOL;
    case ACCEL_OP_LESS:
    case ACCEL_OP_LESS_EQUAL:
    case ACCEL_OP_GREATER:
    case ACCEL_OP_GREATER_EQUAL: return f || i;
    case ACCEL_OP_SELECT: return 1;
    case ACCEL_OP_REDUCE_SUM:
    case ACCEL_OP_REDUCE_MAX:
    case ACCEL_OP_REDUCE_MIN:
    case ACCEL_OP_ARGMAX: return f || i;
    case ACCEL_OP_REDUCE_MEAN: return f || i;  // integers: wrapped sum, division toward zero
    case ACCEL_OP_CAST:
    case ACCEL_OP_FILL:
    case ACCEL_OP_TRANSPOSE:
    case ACCEL_OP_COPY:
    case ACCEL_OP_BROADCAST_TO:
    case ACCEL_OP_SLICE:
    case ACCEL_OP_CONCAT:
    case ACCEL_OP_PAD:
    case ACCEL_OP_GATHER: return 1;
    case ACCEL_OP_ONE_HOT: return i;
    case ACCEL_OP_RANDOM_UNIFORM:
    case ACCEL_OP_RANDOM_NORMAL:
    case ACCEL_OP_RANDOM_TRUNCATED_NORMAL:
    case ACCEL_OP_SGD_UPDATE:
    case ACCEL_OP_ADAM_UPDATE:
    case ACCEL_OP_RMSPROP_UPDATE:
    case ACCEL_OP_SOFTMAX:
    case ACCEL_OP_LOG_SOFTMAX:
    case ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY: return f;
    case ACCEL_OP_BATCH_NORM:
    case ACCEL_OP_BATCH_NORM_BACKWARD: return dtype == ACCEL_DTYPE_F32;
    // Every valid program, whatever dtypes it uses besides the principal one.
    case ACCEL_OP_FUSED_ELEMENTWISE: return 1;
    default:
      // Remaining float-only unary and binary ops.
      if (sdk::is_unary_elementwise(op) || sdk::is_binary_elementwise(op)) return f;
      return 0;
  }
}

// ------------------------------------------------------------- execute_op

OpCost execute_op(AccelDevice& device, const AccelOpCall& call) {
  if (call.struct_size < sizeof(AccelOpCall)) invalid("AccelOpCall too small");
  if (call.num_inputs < 0 || call.num_outputs < 0) invalid("negative input or output count");
  const AccelOp op = call.op;
  // The dtype supports_op was asked about: the first input's (a for select), else the output's.
  const AccelTensor* lead = nullptr;
  if (op == ACCEL_OP_SELECT && call.num_inputs >= 2 && call.inputs != nullptr) {
    lead = &call.inputs[1];
  } else if (call.num_inputs > 0 && call.inputs != nullptr) {
    lead = &call.inputs[0];
  } else if (call.num_outputs > 0 && call.outputs != nullptr) {
    lead = &call.outputs[0];
  }
  if (lead == nullptr) invalid("op call without tensors");
  if (!supports(device, op, lead->dtype)) {
    throw sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED,
                           "the cuda plugin does not run op " + std::to_string(static_cast<int>(op)) +
                               " on " + sdk::dtype_name(lead->dtype));
  }
  if (op == ACCEL_OP_MATMUL) return run_matmul(device, call);
  if (op == ACCEL_OP_FUSED_ELEMENTWISE) return run_fused_elementwise(device, call);
  if (op >= ACCEL_OP_CONV2D && op <= ACCEL_OP_CONV2D_BACKWARD_FILTER) return run_conv(device, call);
  if (op >= ACCEL_OP_MAX_POOL && op <= ACCEL_OP_AVG_POOL_BACKWARD) {
    run_pool(device, call);
    return cost_of(call, 1.0);
  }
  if (sdk::is_unary_elementwise(op)) {
    run_unary(device, call);
    return cost_of(call, 1.0);
  }
  if (sdk::is_binary_elementwise(op)) {
    run_binary(device, call);
    return cost_of(call, 1.0);
  }
  switch (op) {
    case ACCEL_OP_SELECT: run_select(device, call); break;
    case ACCEL_OP_REDUCE_SUM:
    case ACCEL_OP_REDUCE_MEAN:
    case ACCEL_OP_REDUCE_MAX:
    case ACCEL_OP_REDUCE_MIN: run_reduce(device, call); break;
    case ACCEL_OP_ARGMAX: run_argmax(device, call); break;
    case ACCEL_OP_SOFTMAX:
    case ACCEL_OP_LOG_SOFTMAX: run_softmax(device, call); break;
    case ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY: run_sparse_xent(device, call); break;
    case ACCEL_OP_CAST: run_cast(device, call); break;
    case ACCEL_OP_FILL: run_fill(device, call); break;
    case ACCEL_OP_RANDOM_UNIFORM:
    case ACCEL_OP_RANDOM_NORMAL:
    case ACCEL_OP_RANDOM_TRUNCATED_NORMAL: run_random(device, call); break;
    case ACCEL_OP_TRANSPOSE: run_transpose(device, call); break;
    case ACCEL_OP_COPY: run_copy(device, call); break;
    case ACCEL_OP_BROADCAST_TO: run_broadcast_to(device, call); break;
    case ACCEL_OP_SLICE: run_slice(device, call); break;
    case ACCEL_OP_CONCAT: run_concat(device, call); break;
    case ACCEL_OP_PAD: run_pad(device, call); break;
    case ACCEL_OP_GATHER: run_gather(device, call); break;
    case ACCEL_OP_ONE_HOT: run_one_hot(device, call); break;
    case ACCEL_OP_SGD_UPDATE: run_sgd(device, call); break;
    case ACCEL_OP_ADAM_UPDATE: run_adam(device, call); break;
    case ACCEL_OP_RMSPROP_UPDATE: run_rmsprop(device, call); break;
    case ACCEL_OP_BATCH_NORM: run_batch_norm(device, call); break;
    case ACCEL_OP_BATCH_NORM_BACKWARD: run_batch_norm_backward(device, call); break;
    default:
      throw sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED,
                             "op " + std::to_string(static_cast<int>(op)) +
                                 " is not implemented by the cuda plugin");
  }
  return cost_of(call, 1.0);
}

}  // namespace accel::cuda
