// The primitive ops as C++ functions: argument checks, output shapes and
// attribute structs, then dispatch (see accel/ops.hpp and docs/op-set.md).
#include <accel/ops.hpp>

#include <accel/error.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include "runtime/dispatch.hpp"
#include "runtime/op_arguments.hpp"
#include "runtime/op_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace accel::ops {
namespace {

using arguments::invalid;
using arguments::make_attributes;
using arguments::normalize_axis;
using arguments::require_float;
using detail::OutputSpec;
using detail::run_op;

Tensor run_single(AccelOp op, std::initializer_list<Tensor> inputs, OutputSpec output, const void* attributes) {
  std::vector<Tensor> input_list(inputs);
  return run_op(op, input_list, std::span<const OutputSpec>(&output, 1), attributes).front();
}

void require_rank(AccelOp op, const Tensor& tensor, int32_t rank, const char* what) {
  if (tensor.rank() != rank) {
    invalid(op, fmt::format("{} must have rank {}, got shape {}", what, rank, tensor.shape().to_string()));
  }
}

void require_same_dtype(AccelOp op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    invalid(op, fmt::format("operands have different dtypes {} and {}", dtype_name(a.dtype()), dtype_name(b.dtype())));
  }
}

// TensorFlow's output size and padding for one spatial dimension.
struct WindowGeometry {
  int64_t output;
  int32_t pad_before;
  int32_t pad_after;
};

WindowGeometry window_geometry(AccelOp op, int64_t input, int64_t window, int32_t stride, int32_t dilation,
                               Padding padding) {
  if (stride <= 0 || dilation <= 0) invalid(op, "strides and dilations must be positive");
  int64_t effective = (window - 1) * dilation + 1;
  if (padding == Padding::kValid) {
    return {sdk::window_positions(input, effective, stride), 0, 0};
  }
  int64_t output = (input + stride - 1) / stride;
  int64_t total = std::max<int64_t>((output - 1) * stride + effective - input, 0);
  return {output, static_cast<int32_t>(total / 2), static_cast<int32_t>(total - total / 2)};
}

AccelConv2dAttributes conv_attributes(AccelOp op, const Shape& input, const Shape& filter,
                                      const Conv2DOptions& options, Shape* output) {
  auto attributes = make_attributes<AccelConv2dAttributes>();
  WindowGeometry rows = window_geometry(op, input[1], filter[0], options.strides[0], options.dilations[0], options.padding);
  WindowGeometry cols = window_geometry(op, input[2], filter[1], options.strides[1], options.dilations[1], options.padding);
  attributes.stride_h = options.strides[0];
  attributes.stride_w = options.strides[1];
  attributes.dilation_h = options.dilations[0];
  attributes.dilation_w = options.dilations[1];
  attributes.pad_top = rows.pad_before;
  attributes.pad_bottom = rows.pad_after;
  attributes.pad_left = cols.pad_before;
  attributes.pad_right = cols.pad_after;
  *output = Shape{input[0], rows.output, cols.output, filter[3]};
  return attributes;
}

AccelPoolAttributes pool_attributes(AccelOp op, const Shape& input, const Pool2DOptions& options, Shape* output) {
  if (input.rank() != 4) invalid(op, "input must be NHWC (rank 4), got " + input.to_string());
  if (options.window[0] <= 0 || options.window[1] <= 0) invalid(op, "pool window must be positive");
  auto attributes = make_attributes<AccelPoolAttributes>();
  WindowGeometry rows = window_geometry(op, input[1], options.window[0], options.strides[0], 1, options.padding);
  WindowGeometry cols = window_geometry(op, input[2], options.window[1], options.strides[1], 1, options.padding);
  attributes.window_h = options.window[0];
  attributes.window_w = options.window[1];
  attributes.stride_h = options.strides[0];
  attributes.stride_w = options.strides[1];
  attributes.pad_top = rows.pad_before;
  attributes.pad_bottom = rows.pad_after;
  attributes.pad_left = cols.pad_before;
  attributes.pad_right = cols.pad_after;
  *output = Shape{input[0], rows.output, cols.output, input[3]};
  return attributes;
}

void check_conv_operands(AccelOp op, const Shape& input, const Shape& filter) {
  if (input.rank() != 4) invalid(op, "input must be NHWC (rank 4), got " + input.to_string());
  if (filter.rank() != 4) invalid(op, "filter must be HWIO (rank 4), got " + filter.to_string());
  if (input[3] != filter[2]) {
    invalid(op, fmt::format("input has {} channels but the filter expects {} (input {}, filter {})", input[3],
                            filter[2], input.to_string(), filter.to_string()));
  }
}

Tensor unary(AccelOp op, const Tensor& x) {
  DType dtype = op == ACCEL_OP_LOGICAL_NOT ? DType::kBool : x.dtype();
  return run_single(op, {x}, {x.shape(), dtype}, nullptr);
}

Tensor binary(AccelOp op, const Tensor& a, const Tensor& b, bool comparison = false) {
  require_same_dtype(op, a, b);
  Shape shape = broadcast_shapes(a.shape(), b.shape());
  return run_single(op, {a, b}, {shape, comparison ? DType::kBool : a.dtype()}, nullptr);
}

Tensor reduce(AccelOp op, const Tensor& x, std::vector<int32_t> axes, bool keep_dims) {
  if (axes.empty()) {
    axes.resize(static_cast<size_t>(x.rank()));
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (axes.size() > ACCEL_MAX_RANK) invalid(op, "too many axes");
  for (int32_t& axis : axes) axis = normalize_axis(op, axis, x.rank());
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  auto attributes = make_attributes<AccelReduceAttributes>();
  attributes.num_axes = static_cast<int32_t>(axes.size());
  std::copy(axes.begin(), axes.end(), attributes.axes);
  attributes.keep_dims = keep_dims ? 1 : 0;
  std::vector<int64_t> dims;
  for (int32_t axis = 0; axis < x.rank(); ++axis) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), axis);
    if (!reduced) dims.push_back(x.shape()[axis]);
    else if (keep_dims) dims.push_back(1);
  }
  return run_single(op, {x}, {Shape(std::move(dims)), x.dtype()}, &attributes);
}

Tensor random(AccelOp op, const Shape& shape, uint64_t seed, double a, double b, DType dtype, uint64_t offset) {
  if (!is_floating(dtype)) invalid(op, fmt::format("random values must be floating point, got {}", dtype_name(dtype)));
  auto attributes = make_attributes<AccelRandomAttributes>();
  attributes.seed = seed;
  attributes.counter_offset = offset;
  attributes.a = a;
  attributes.b = b;
  std::vector<OutputSpec> outputs = {{shape, dtype}};
  return run_op(op, {}, outputs, &attributes).front();
}

void check_same_shape(AccelOp op, const Tensor& variable, const Tensor& other, const char* what) {
  if (other.shape() != variable.shape() || other.dtype() != variable.dtype()) {
    invalid(op, fmt::format("{} is {} {} but the variable is {} {}", what, dtype_name(other.dtype()),
                            other.shape().to_string(), dtype_name(variable.dtype()), variable.shape().to_string()));
  }
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  int32_t rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  for (int32_t index = 0; index < rank; ++index) {
    int32_t axis_a = a.rank() - rank + index;
    int32_t axis_b = b.rank() - rank + index;
    int64_t dim_a = axis_a >= 0 ? a[axis_a] : 1;
    int64_t dim_b = axis_b >= 0 ? b[axis_b] : 1;
    if (dim_a != dim_b && dim_a != 1 && dim_b != 1) {
      throw InvalidArgumentError(fmt::format("shapes {} and {} are not broadcastable (dimension {} is {} vs {})",
                                             a.to_string(), b.to_string(), index, dim_a, dim_b));
    }
    dims[static_cast<size_t>(index)] = dim_a == 1 ? dim_b : dim_a;
  }
  return Shape(std::move(dims));
}

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  constexpr AccelOp op = ACCEL_OP_MATMUL;
  require_same_dtype(op, a, b);
  if (a.rank() < 2 || b.rank() < 2) {
    invalid(op, fmt::format("operands must have rank >= 2, got {} and {}", a.shape().to_string(), b.shape().to_string()));
  }
  int64_t m = transpose_a ? a.shape().dim(-1) : a.shape().dim(-2);
  int64_t k = transpose_a ? a.shape().dim(-2) : a.shape().dim(-1);
  int64_t k_b = transpose_b ? b.shape().dim(-1) : b.shape().dim(-2);
  int64_t n = transpose_b ? b.shape().dim(-2) : b.shape().dim(-1);
  if (k != k_b) {
    invalid(op, fmt::format("inner dimensions differ: {} x {} (transpose_a={}, transpose_b={})", a.shape().to_string(),
                            b.shape().to_string(), transpose_a, transpose_b));
  }
  // docs/op-set.md: the batch axes are equal, or one operand is a plain
  // matrix (rank 2) shared by every batch of the other.
  std::vector<int64_t> dims(a.shape().dims().begin(), a.shape().dims().end() - 2);
  if (b.rank() > 2) {
    std::vector<int64_t> batch_b(b.shape().dims().begin(), b.shape().dims().end() - 2);
    if (a.rank() == 2) {
      dims = std::move(batch_b);
    } else if (batch_b != dims) {
      invalid(op, fmt::format("batch dimensions differ: {} x {} (equal batch axes, or one operand of rank 2 shared "
                              "by every batch)",
                              a.shape().to_string(), b.shape().to_string()));
    }
  }
  dims.push_back(m);
  dims.push_back(n);
  auto attributes = make_attributes<AccelMatmulAttributes>();
  attributes.transpose_a = transpose_a;
  attributes.transpose_b = transpose_b;
  return run_single(op, {a, b}, {Shape(std::move(dims)), a.dtype()}, &attributes);
}

Tensor conv2d(const Tensor& input, const Tensor& filter, const Conv2DOptions& options) {
  constexpr AccelOp op = ACCEL_OP_CONV2D;
  check_conv_operands(op, input.shape(), filter.shape());
  require_same_dtype(op, input, filter);
  Shape output;
  auto attributes = conv_attributes(op, input.shape(), filter.shape(), options, &output);
  return run_single(op, {input, filter}, {output, input.dtype()}, &attributes);
}

Tensor conv2d_backward_input(const Tensor& output_gradient, const Tensor& filter, const Shape& input_shape,
                             const Conv2DOptions& options) {
  constexpr AccelOp op = ACCEL_OP_CONV2D_BACKWARD_INPUT;
  check_conv_operands(op, input_shape, filter.shape());
  Shape output;
  auto attributes = conv_attributes(op, input_shape, filter.shape(), options, &output);
  if (output != output_gradient.shape()) {
    invalid(op, fmt::format("output gradient is {} but the convolution of {} gives {}",
                            output_gradient.shape().to_string(), input_shape.to_string(), output.to_string()));
  }
  return run_single(op, {output_gradient, filter}, {input_shape, filter.dtype()}, &attributes);
}

Tensor conv2d_backward_filter(const Tensor& input, const Tensor& output_gradient, const Shape& filter_shape,
                              const Conv2DOptions& options) {
  constexpr AccelOp op = ACCEL_OP_CONV2D_BACKWARD_FILTER;
  check_conv_operands(op, input.shape(), filter_shape);
  Shape output;
  auto attributes = conv_attributes(op, input.shape(), filter_shape, options, &output);
  if (output != output_gradient.shape()) {
    invalid(op, fmt::format("output gradient is {} but the convolution gives {}", output_gradient.shape().to_string(),
                            output.to_string()));
  }
  return run_single(op, {input, output_gradient}, {filter_shape, input.dtype()}, &attributes);
}

Tensor max_pool2d(const Tensor& input, const Pool2DOptions& options) {
  Shape output;
  auto attributes = pool_attributes(ACCEL_OP_MAX_POOL, input.shape(), options, &output);
  return run_single(ACCEL_OP_MAX_POOL, {input}, {output, input.dtype()}, &attributes);
}

Tensor max_pool2d_backward(const Tensor& input, const Tensor& output_gradient, const Pool2DOptions& options) {
  Shape output;
  auto attributes = pool_attributes(ACCEL_OP_MAX_POOL_BACKWARD, input.shape(), options, &output);
  if (output != output_gradient.shape()) invalid(ACCEL_OP_MAX_POOL_BACKWARD, "output gradient shape mismatch");
  return run_single(ACCEL_OP_MAX_POOL_BACKWARD, {input, output_gradient}, {input.shape(), input.dtype()}, &attributes);
}

Tensor avg_pool2d(const Tensor& input, const Pool2DOptions& options) {
  Shape output;
  auto attributes = pool_attributes(ACCEL_OP_AVG_POOL, input.shape(), options, &output);
  return run_single(ACCEL_OP_AVG_POOL, {input}, {output, input.dtype()}, &attributes);
}

Tensor avg_pool2d_backward(const Tensor& output_gradient, const Shape& input_shape, const Pool2DOptions& options) {
  Shape output;
  auto attributes = pool_attributes(ACCEL_OP_AVG_POOL_BACKWARD, input_shape, options, &output);
  if (output != output_gradient.shape()) invalid(ACCEL_OP_AVG_POOL_BACKWARD, "output gradient shape mismatch");
  return run_single(ACCEL_OP_AVG_POOL_BACKWARD, {output_gradient}, {input_shape, output_gradient.dtype()}, &attributes);
}

Tensor neg(const Tensor& x) { return unary(ACCEL_OP_NEG, x); }
Tensor abs(const Tensor& x) { return unary(ACCEL_OP_ABS, x); }
Tensor exp(const Tensor& x) { return unary(ACCEL_OP_EXP, x); }
Tensor log(const Tensor& x) { return unary(ACCEL_OP_LOG, x); }
Tensor sqrt(const Tensor& x) { return unary(ACCEL_OP_SQRT, x); }
Tensor rsqrt(const Tensor& x) { return unary(ACCEL_OP_RSQRT, x); }
Tensor square(const Tensor& x) { return unary(ACCEL_OP_SQUARE, x); }
Tensor relu(const Tensor& x) { return unary(ACCEL_OP_RELU, x); }
Tensor sigmoid(const Tensor& x) { return unary(ACCEL_OP_SIGMOID, x); }
Tensor tanh(const Tensor& x) { return unary(ACCEL_OP_TANH, x); }
Tensor sign(const Tensor& x) { return unary(ACCEL_OP_SIGN, x); }
Tensor reciprocal(const Tensor& x) { return unary(ACCEL_OP_RECIPROCAL, x); }
Tensor logical_not(const Tensor& x) { return unary(ACCEL_OP_LOGICAL_NOT, x); }
Tensor erf(const Tensor& x) {
  require_float(ACCEL_OP_ERF, x);
  return unary(ACCEL_OP_ERF, x);
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_ADD, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_SUB, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_MUL, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_DIV, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_MAXIMUM, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_MINIMUM, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_POW, a, b); }
Tensor equal(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_EQUAL, a, b, true); }
Tensor not_equal(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_NOT_EQUAL, a, b, true); }
Tensor less(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_LESS, a, b, true); }
Tensor less_equal(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_LESS_EQUAL, a, b, true); }
Tensor greater(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_GREATER, a, b, true); }
Tensor greater_equal(const Tensor& a, const Tensor& b) { return binary(ACCEL_OP_GREATER_EQUAL, a, b, true); }
Tensor relu_backward(const Tensor& dy, const Tensor& x) { return binary(ACCEL_OP_RELU_BACKWARD, dy, x); }
Tensor sigmoid_backward(const Tensor& dy, const Tensor& y) { return binary(ACCEL_OP_SIGMOID_BACKWARD, dy, y); }
Tensor tanh_backward(const Tensor& dy, const Tensor& y) { return binary(ACCEL_OP_TANH_BACKWARD, dy, y); }

Tensor select(const Tensor& condition, const Tensor& a, const Tensor& b) {
  constexpr AccelOp op = ACCEL_OP_SELECT;
  if (condition.dtype() != DType::kBool) invalid(op, "condition must be bool, got " + std::string(dtype_name(condition.dtype())));
  require_same_dtype(op, a, b);
  Shape shape = broadcast_shapes(condition.shape(), broadcast_shapes(a.shape(), b.shape()));
  return run_single(op, {condition, a, b}, {shape, a.dtype()}, nullptr);
}

Tensor reduce_sum(const Tensor& x, std::vector<int32_t> axes, bool keep_dims) { return reduce(ACCEL_OP_REDUCE_SUM, x, std::move(axes), keep_dims); }
Tensor reduce_mean(const Tensor& x, std::vector<int32_t> axes, bool keep_dims) { return reduce(ACCEL_OP_REDUCE_MEAN, x, std::move(axes), keep_dims); }
Tensor reduce_max(const Tensor& x, std::vector<int32_t> axes, bool keep_dims) { return reduce(ACCEL_OP_REDUCE_MAX, x, std::move(axes), keep_dims); }
Tensor reduce_min(const Tensor& x, std::vector<int32_t> axes, bool keep_dims) { return reduce(ACCEL_OP_REDUCE_MIN, x, std::move(axes), keep_dims); }

Tensor argmax(const Tensor& x, int32_t axis) {
  constexpr AccelOp op = ACCEL_OP_ARGMAX;
  if (x.rank() == 0) invalid(op, "input must have rank >= 1");
  auto attributes = make_attributes<AccelAxisAttributes>();
  attributes.axis = normalize_axis(op, axis, x.rank());
  if (x.shape()[attributes.axis] == 0) invalid(op, "cannot take argmax over an empty axis");
  std::vector<int64_t> dims = x.shape().dims();
  dims.erase(dims.begin() + attributes.axis);
  return run_single(op, {x}, {Shape(std::move(dims)), DType::kInt64}, &attributes);
}

Tensor softmax(const Tensor& logits) {
  require_float(ACCEL_OP_SOFTMAX, logits);
  return run_single(ACCEL_OP_SOFTMAX, {logits}, {logits.shape(), logits.dtype()}, nullptr);
}

Tensor log_softmax(const Tensor& logits) {
  require_float(ACCEL_OP_LOG_SOFTMAX, logits);
  return run_single(ACCEL_OP_LOG_SOFTMAX, {logits}, {logits.shape(), logits.dtype()}, nullptr);
}

std::pair<Tensor, Tensor> sparse_softmax_cross_entropy(const Tensor& logits, const Tensor& labels) {
  constexpr AccelOp op = ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY;
  require_rank(op, logits, 2, "logits");
  require_rank(op, labels, 1, "labels");
  require_float(op, logits);
  if (labels.dtype() != DType::kInt32 && labels.dtype() != DType::kInt64) invalid(op, "labels must be int32 or int64");
  if (labels.shape()[0] != logits.shape()[0]) {
    invalid(op, fmt::format("{} labels for a batch of {} logits", labels.shape()[0], logits.shape()[0]));
  }
  std::vector<Tensor> inputs = {logits, labels};
  std::vector<OutputSpec> outputs = {{Shape{logits.shape()[0]}, logits.dtype()}, {logits.shape(), logits.dtype()}};
  std::vector<Tensor> results = run_op(op, inputs, outputs, nullptr);
  return {results[0], results[1]};
}

Tensor cast(const Tensor& x, DType dtype) { return run_single(ACCEL_OP_CAST, {x}, {x.shape(), dtype}, nullptr); }

Tensor fill(const Shape& shape, double value, DType dtype) {
  auto attributes = make_attributes<AccelFillAttributes>();
  attributes.value = value;
  std::vector<OutputSpec> outputs = {{shape, dtype}};
  return run_op(ACCEL_OP_FILL, {}, outputs, &attributes).front();
}

Tensor zeros(const Shape& shape, DType dtype) { return fill(shape, 0.0, dtype); }
Tensor ones(const Shape& shape, DType dtype) { return fill(shape, 1.0, dtype); }

Tensor random_uniform(const Shape& shape, uint64_t seed, double minval, double maxval, DType dtype, uint64_t offset) {
  return random(ACCEL_OP_RANDOM_UNIFORM, shape, seed, minval, maxval, dtype, offset);
}
Tensor random_normal(const Shape& shape, uint64_t seed, double mean, double stddev, DType dtype, uint64_t offset) {
  return random(ACCEL_OP_RANDOM_NORMAL, shape, seed, mean, stddev, dtype, offset);
}
Tensor truncated_normal(const Shape& shape, uint64_t seed, double mean, double stddev, DType dtype, uint64_t offset) {
  return random(ACCEL_OP_RANDOM_TRUNCATED_NORMAL, shape, seed, mean, stddev, dtype, offset);
}

Tensor transpose(const Tensor& x, std::vector<int32_t> permutation) {
  constexpr AccelOp op = ACCEL_OP_TRANSPOSE;
  if (permutation.empty()) {
    for (int32_t axis = x.rank() - 1; axis >= 0; --axis) permutation.push_back(axis);
  }
  if (static_cast<int32_t>(permutation.size()) != x.rank()) {
    invalid(op, fmt::format("permutation has {} entries for rank {}", permutation.size(), x.rank()));
  }
  std::vector<bool> seen(permutation.size(), false);
  auto attributes = make_attributes<AccelTransposeAttributes>();
  std::vector<int64_t> dims;
  for (size_t index = 0; index < permutation.size(); ++index) {
    int32_t axis = normalize_axis(op, permutation[index], x.rank());
    if (seen[static_cast<size_t>(axis)]) invalid(op, "permutation repeats an axis");
    seen[static_cast<size_t>(axis)] = true;
    attributes.permutation[index] = axis;
    dims.push_back(x.shape()[axis]);
  }
  return run_single(op, {x}, {Shape(std::move(dims)), x.dtype()}, &attributes);
}

Tensor copy(const Tensor& x) { return run_single(ACCEL_OP_COPY, {x}, {x.shape(), x.dtype()}, nullptr); }

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  if (broadcast_shapes(x.shape(), shape) != shape) {
    invalid(ACCEL_OP_BROADCAST_TO, fmt::format("cannot broadcast {} to {}", x.shape().to_string(), shape.to_string()));
  }
  return run_single(ACCEL_OP_BROADCAST_TO, {x}, {shape, x.dtype()}, nullptr);
}

Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size) {
  constexpr AccelOp op = ACCEL_OP_SLICE;
  if (static_cast<int32_t>(begin.size()) != x.rank() || static_cast<int32_t>(size.size()) != x.rank()) {
    invalid(op, fmt::format("begin and size need {} entries for shape {}", x.rank(), x.shape().to_string()));
  }
  auto attributes = make_attributes<AccelSliceAttributes>();
  for (int32_t axis = 0; axis < x.rank(); ++axis) {
    size_t index = static_cast<size_t>(axis);
    if (size[index] == -1) size[index] = x.shape()[axis] - begin[index];
    if (begin[index] < 0 || size[index] < 0 || begin[index] + size[index] > x.shape()[axis]) {
      invalid(op, fmt::format("slice [{}, {}+{}) is out of range on axis {} of shape {}", begin[index], begin[index],
                              size[index], axis, x.shape().to_string()));
    }
    attributes.begin[axis] = begin[index];
  }
  return run_single(op, {x}, {Shape(std::move(size)), x.dtype()}, &attributes);
}

Tensor concat(const std::vector<Tensor>& tensors, int32_t axis) {
  constexpr AccelOp op = ACCEL_OP_CONCAT;
  if (tensors.empty()) invalid(op, "needs at least one tensor");
  const Tensor& first = tensors.front();
  auto attributes = make_attributes<AccelAxisAttributes>();
  attributes.axis = normalize_axis(op, axis, first.rank());
  std::vector<int64_t> dims = first.shape().dims();
  dims[static_cast<size_t>(attributes.axis)] = 0;
  for (const Tensor& tensor : tensors) {
    require_same_dtype(op, first, tensor);
    if (tensor.rank() != first.rank()) invalid(op, "all tensors must have the same rank");
    for (int32_t dim = 0; dim < first.rank(); ++dim) {
      if (dim != attributes.axis && tensor.shape()[dim] != first.shape()[dim]) {
        invalid(op, fmt::format("shapes {} and {} differ outside axis {}", first.shape().to_string(),
                                tensor.shape().to_string(), attributes.axis));
      }
    }
    dims[static_cast<size_t>(attributes.axis)] += tensor.shape()[attributes.axis];
  }
  std::vector<OutputSpec> outputs = {{Shape(std::move(dims)), first.dtype()}};
  return run_op(op, tensors, outputs, &attributes).front();
}

Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings, double value) {
  constexpr AccelOp op = ACCEL_OP_PAD;
  if (static_cast<int32_t>(paddings.size()) != x.rank()) {
    invalid(op, fmt::format("{} paddings for rank {}", paddings.size(), x.rank()));
  }
  auto attributes = make_attributes<AccelPadAttributes>();
  attributes.value = value;
  std::vector<int64_t> dims;
  for (int32_t axis = 0; axis < x.rank(); ++axis) {
    auto [before, after] = paddings[static_cast<size_t>(axis)];
    if (before < 0 || after < 0) invalid(op, "paddings must be non-negative");
    attributes.before[axis] = before;
    attributes.after[axis] = after;
    dims.push_back(x.shape()[axis] + before + after);
  }
  return run_single(op, {x}, {Shape(std::move(dims)), x.dtype()}, &attributes);
}

Tensor gather(const Tensor& params, const Tensor& indices, int32_t axis) {
  constexpr AccelOp op = ACCEL_OP_GATHER;
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) invalid(op, "indices must be int32 or int64");
  auto attributes = make_attributes<AccelAxisAttributes>();
  attributes.axis = normalize_axis(op, axis, params.rank());
  std::vector<int64_t> dims(params.shape().dims().begin(), params.shape().dims().begin() + attributes.axis);
  dims.insert(dims.end(), indices.shape().dims().begin(), indices.shape().dims().end());
  dims.insert(dims.end(), params.shape().dims().begin() + attributes.axis + 1, params.shape().dims().end());
  return run_single(op, {params, indices}, {Shape(std::move(dims)), params.dtype()}, &attributes);
}

Tensor one_hot(const Tensor& indices, int64_t depth, double on_value, double off_value, DType dtype) {
  constexpr AccelOp op = ACCEL_OP_ONE_HOT;
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64 && indices.dtype() != DType::kUInt8) {
    invalid(op, "indices must be int32, int64 or uint8");
  }
  if (depth < 0) invalid(op, "depth must be non-negative");
  auto attributes = make_attributes<AccelOneHotAttributes>();
  attributes.on_value = on_value;
  attributes.off_value = off_value;
  std::vector<int64_t> dims = indices.shape().dims();
  dims.push_back(depth);
  return run_single(op, {indices}, {Shape(std::move(dims)), dtype}, &attributes);
}

void sgd_update(const Tensor& variable, const Tensor& gradient, const Tensor& velocity, double learning_rate,
                double momentum, bool nesterov) {
  constexpr AccelOp op = ACCEL_OP_SGD_UPDATE;
  check_same_shape(op, variable, gradient, "gradient");
  auto attributes = make_attributes<AccelSgdAttributes>();
  attributes.learning_rate = learning_rate;
  attributes.momentum = momentum;
  attributes.nesterov = nesterov;
  std::vector<Tensor> inputs = {variable, gradient};
  if (momentum != 0.0) {
    check_same_shape(op, variable, velocity, "velocity");
    inputs.push_back(velocity);
  }
  run_op(op, inputs, {}, &attributes);
}

void adam_update(const Tensor& variable, const Tensor& m, const Tensor& v, const Tensor& gradient,
                 double learning_rate, double beta1, double beta2, double epsilon, int64_t step) {
  constexpr AccelOp op = ACCEL_OP_ADAM_UPDATE;
  check_same_shape(op, variable, m, "m");
  check_same_shape(op, variable, v, "v");
  check_same_shape(op, variable, gradient, "gradient");
  if (step < 1) invalid(op, "step must be >= 1");
  auto attributes = make_attributes<AccelAdamAttributes>();
  attributes.learning_rate = learning_rate;
  attributes.beta1 = beta1;
  attributes.beta2 = beta2;
  attributes.epsilon = epsilon;
  attributes.step = step;
  std::vector<Tensor> inputs = {variable, m, v, gradient};
  run_op(op, inputs, {}, &attributes);
}

void rmsprop_update(const Tensor& variable, const Tensor& mean_square, const Tensor& momentum_slot,
                    const Tensor& mean_gradient, const Tensor& gradient, double learning_rate, double rho,
                    double momentum, double epsilon, bool centered) {
  constexpr AccelOp op = ACCEL_OP_RMSPROP_UPDATE;
  check_same_shape(op, variable, mean_square, "mean_square");
  check_same_shape(op, variable, momentum_slot, "momentum slot");
  check_same_shape(op, variable, mean_gradient, "mean_gradient");
  check_same_shape(op, variable, gradient, "gradient");
  auto attributes = make_attributes<AccelRmspropAttributes>();
  attributes.learning_rate = learning_rate;
  attributes.rho = rho;
  attributes.momentum = momentum;
  attributes.epsilon = epsilon;
  attributes.centered = centered;
  std::vector<Tensor> inputs = {variable, mean_square, momentum_slot, mean_gradient, gradient};
  run_op(op, inputs, {}, &attributes);
}

}  // namespace accel::ops
