// Gradients of matmul, conv2d and pooling, and of the conv/pool backward ops
// themselves (they are linear in their gradient operand, which second-order
// gradients need).
#include "builtin_gradients.hpp"
#include "gradient_math.hpp"

#include <accel/error.hpp>

#include <utility>

namespace accel::autodiff {
namespace {

// Swaps the last two axes (the matrix axes of a batch of matrices).
Tensor transpose_matrices(const Tensor& x) {
  std::vector<int32_t> permutation(static_cast<size_t>(x.rank()));
  for (int32_t axis = 0; axis < x.rank(); ++axis) permutation[static_cast<size_t>(axis)] = axis;
  std::swap(permutation[permutation.size() - 1], permutation[permutation.size() - 2]);
  return ops::transpose(x, permutation);
}

// y = op_a(a) @ op_b(b) over the last two axes, where op_x transposes when its
// flag is set; a carries the batch axes and b has the same ones or none.
// Every product below keeps dy (or a) as the first operand, so it is valid
// under that rule, and a b without batch axes gets its gradient summed over them.
std::vector<Tensor> matmul_gradient(const GradientContext& context) {
  const auto attributes = context.op().attributes<AccelMatmulAttributes>();
  const bool transpose_a = attributes.transpose_a != 0;
  const bool transpose_b = attributes.transpose_b != 0;
  const Tensor& a = context.input(0);
  const Tensor& b = context.input(1);
  const Tensor& dy = context.output_gradient();
  Tensor da, db;
  if (context.needs_input_gradient(0)) {
    // d op_a(a) = dy @ op_b(b)^T
    const Tensor d_op_a = ops::matmul(dy, b, false, !transpose_b);
    da = transpose_a ? transpose_matrices(d_op_a) : d_op_a;
    if (a.rank() == 2 && da.rank() > 2) da = sum_to_shape(da, a.shape());  // a matrix shared by b's batches
  }
  if (context.needs_input_gradient(1)) {
    // d op_b(b) = op_a(a)^T @ dy, and d b is its transpose when transpose_b:
    // (op_a(a)^T @ dy)^T = dy^T @ op_a(a).
    if (b.rank() == 2 && a.rank() > 2 && !transpose_a) {
      // A shared matrix (a Dense kernel applied to [batch, steps, features]):
      // the batch of products summed over the batch is one product over all
      // rows, which one GEMM with a long inner dimension computes far faster
      // than a batch of small ones and a reduction.
      int64_t rows = 1;
      for (int32_t axis = 0; axis + 1 < a.rank(); ++axis) rows *= a.shape()[axis];
      const Tensor rows_a = a.reshape(Shape{rows, a.shape()[a.rank() - 1]});
      const Tensor rows_dy = dy.reshape(Shape{rows, dy.shape()[dy.rank() - 1]});
      db = transpose_b ? ops::matmul(rows_dy, rows_a, true, false) : ops::matmul(rows_a, rows_dy, true, false);
    } else {
      db = transpose_b ? ops::matmul(dy, a, true, transpose_a)
                       : ops::matmul(a, dy, !transpose_a, false);
      db = sum_to_shape(db, b.shape());
    }
  }
  return {da, db};
}

// y = conv2d(x, w): dx = conv2d_backward_input(dy, w), dw = conv2d_backward_filter(x, dy).
std::vector<Tensor> conv2d_gradient(const GradientContext& context) {
  const ops::Conv2DOptions options =
      conv2d_options(context.op().attributes<AccelConv2dAttributes>());
  const Tensor& x = context.input(0);
  const Tensor& filter = context.input(1);
  const Tensor& dy = context.output_gradient();
  Tensor dx, dfilter;
  if (context.needs_input_gradient(0)) {
    dx = ops::conv2d_backward_input(dy, filter, x.shape(), options);
  }
  if (context.needs_input_gradient(1)) {
    dfilter = ops::conv2d_backward_filter(x, dy, filter.shape(), options);
  }
  return {dx, dfilter};
}

// dx = conv2d_backward_input(dy, w) is the adjoint of conv2d(., w), so
// <g, dx> = <conv2d(g, w), dy>: d/d(dy) = conv2d(g, w), d/dw = backward_filter(g, dy).
std::vector<Tensor> conv2d_backward_input_gradient(const GradientContext& context) {
  const ops::Conv2DOptions options =
      conv2d_options(context.op().attributes<AccelConv2dAttributes>());
  const Tensor& dy = context.input(0);
  const Tensor& filter = context.input(1);
  const Tensor& g = context.output_gradient();
  Tensor d_dy, dfilter;
  if (context.needs_input_gradient(0)) d_dy = ops::conv2d(g, filter, options);
  if (context.needs_input_gradient(1)) {
    dfilter = ops::conv2d_backward_filter(g, dy, filter.shape(), options);
  }
  return {d_dy, dfilter};
}

// dw = conv2d_backward_filter(x, dy): <g, dw> = <conv2d(x, g), dy>, so
// d/dx = backward_input(dy, g), d/d(dy) = conv2d(x, g).
std::vector<Tensor> conv2d_backward_filter_gradient(const GradientContext& context) {
  const ops::Conv2DOptions options =
      conv2d_options(context.op().attributes<AccelConv2dAttributes>());
  const Tensor& x = context.input(0);
  const Tensor& dy = context.input(1);
  const Tensor& g = context.output_gradient();
  Tensor dx, d_dy;
  if (context.needs_input_gradient(0)) {
    dx = ops::conv2d_backward_input(dy, g, x.shape(), options);
  }
  if (context.needs_input_gradient(1)) d_dy = ops::conv2d(x, g, options);
  return {dx, d_dy};
}

std::vector<Tensor> max_pool_gradient(const GradientContext& context) {
  const ops::Pool2DOptions options = pool2d_options(context.op().attributes<AccelPoolAttributes>());
  return {ops::max_pool2d_backward(context.input(0), context.output_gradient(), options)};
}

std::vector<Tensor> avg_pool_gradient(const GradientContext& context) {
  const ops::Pool2DOptions options = pool2d_options(context.op().attributes<AccelPoolAttributes>());
  return {ops::avg_pool2d_backward(context.output_gradient(), context.input(0).shape(), options)};
}

// avg_pool2d_backward is linear in dy and the adjoint of avg_pool2d.
std::vector<Tensor> avg_pool_backward_gradient(const GradientContext& context) {
  const ops::Pool2DOptions options = pool2d_options(context.op().attributes<AccelPoolAttributes>());
  return {ops::avg_pool2d(context.output_gradient(), options)};
}

// Routing g back through the argmax of each window needs an op the set lacks
// (TensorFlow's MaxPoolGradGrad); fail loudly rather than return a wrong zero.
std::vector<Tensor> max_pool_backward_gradient(const GradientContext&) {
  throw UnimplementedError(
      "the gradient of MaxPoolGrad (second-order gradients through max pooling) is not "
      "implemented");
}

}  // namespace

void register_linear_algebra_gradients(GradientRegistry& registry) {
  registry.register_gradient(ACCEL_OP_MATMUL, "MatMul", matmul_gradient);
  registry.register_gradient(ACCEL_OP_CONV2D, "Conv2D", conv2d_gradient);
  registry.register_gradient(ACCEL_OP_CONV2D_BACKWARD_INPUT, "Conv2DBackpropInput",
                             conv2d_backward_input_gradient);
  registry.register_gradient(ACCEL_OP_CONV2D_BACKWARD_FILTER, "Conv2DBackpropFilter",
                             conv2d_backward_filter_gradient);
  registry.register_gradient(ACCEL_OP_MAX_POOL, "MaxPool", max_pool_gradient);
  registry.register_gradient(ACCEL_OP_MAX_POOL_BACKWARD, "MaxPoolGrad", max_pool_backward_gradient);
  registry.register_gradient(ACCEL_OP_AVG_POOL, "AvgPool", avg_pool_gradient);
  registry.register_gradient(ACCEL_OP_AVG_POOL_BACKWARD, "AvgPoolGrad", avg_pool_backward_gradient);
}

}  // namespace accel::autodiff
