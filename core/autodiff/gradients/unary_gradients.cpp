// Gradients of the unary elementwise ops: dx = dy * f'(x), written with the
// op's output where that is cheaper or more accurate (exp, sqrt, sigmoid...).
#include "builtin_gradients.hpp"
#include "gradient_math.hpp"

namespace accel::autodiff {
namespace {

// Adapts "dx from (x, y, dy)" to a GradientFunction of a one-input op.
template <typename Rule>
GradientFunction unary(Rule rule) {
  return [rule](const GradientContext& context) -> std::vector<Tensor> {
    return {rule(context.input(0), context.output(0), context.output_gradient())};
  };
}

}  // namespace

void register_unary_gradients(GradientRegistry& registry) {
  using namespace ops;
  registry.register_gradient(ACCEL_OP_NEG, "Neg", unary([](const Tensor&, const Tensor&, const Tensor& dy) {
    return neg(dy);
  }));
  registry.register_gradient(ACCEL_OP_ABS, "Abs", unary([](const Tensor& x, const Tensor&, const Tensor& dy) {
    return mul(dy, sign(x));
  }));
  registry.register_gradient(ACCEL_OP_EXP, "Exp", unary([](const Tensor&, const Tensor& y, const Tensor& dy) {
    return mul(dy, y);
  }));
  registry.register_gradient(ACCEL_OP_LOG, "Log", unary([](const Tensor& x, const Tensor&, const Tensor& dy) {
    return div(dy, x);
  }));
  // d sqrt(x) = 1 / (2 sqrt(x))
  registry.register_gradient(ACCEL_OP_SQRT, "Sqrt", unary([](const Tensor&, const Tensor& y, const Tensor& dy) {
    return div(mul(dy, scalar_like(0.5, dy)), y);
  }));
  // d x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3
  registry.register_gradient(ACCEL_OP_RSQRT, "Rsqrt", unary([](const Tensor&, const Tensor& y, const Tensor& dy) {
    return mul(mul(dy, scalar_like(-0.5, dy)), mul(square(y), y));
  }));
  registry.register_gradient(ACCEL_OP_SQUARE, "Square", unary([](const Tensor& x, const Tensor&, const Tensor& dy) {
    return mul(dy, mul(x, scalar_like(2.0, x)));
  }));
  // From the output, as TensorFlow's ReluGrad: y > 0 exactly where x > 0, and
  // a compiled step can then fuse the ReLU into the MATMUL / CONV2D before it
  // (nothing else reads the pre-activation).
  registry.register_gradient(ACCEL_OP_RELU, "Relu", unary([](const Tensor&, const Tensor& y, const Tensor& dy) {
    return relu_backward(dy, y);
  }));
  registry.register_gradient(ACCEL_OP_SIGMOID, "Sigmoid", unary([](const Tensor&, const Tensor& y, const Tensor& dy) {
    return sigmoid_backward(dy, y);
  }));
  registry.register_gradient(ACCEL_OP_TANH, "Tanh", unary([](const Tensor&, const Tensor& y, const Tensor& dy) {
    return tanh_backward(dy, y);
  }));
  // Piecewise constant: TensorFlow gives zeros (connected), not None.
  registry.register_gradient(ACCEL_OP_SIGN, "Sign", unary([](const Tensor& x, const Tensor&, const Tensor&) {
    return zeros(x.shape(), x.dtype());
  }));
  // d 1/x = -1/x^2 = -y^2
  registry.register_gradient(ACCEL_OP_RECIPROCAL, "Reciprocal", unary([](const Tensor&, const Tensor& y, const Tensor& dy) {
    return neg(mul(dy, square(y)));
  }));
  // d erf(x) = 2/sqrt(pi) exp(-x^2), TensorFlow's ErfGrad.
  registry.register_gradient(ACCEL_OP_ERF, "Erf", unary([](const Tensor& x, const Tensor&, const Tensor& dy) {
    const double two_over_sqrt_pi = 1.1283791670955126;
    return mul(dy, mul(scalar_like(two_over_sqrt_pi, x), exp(neg(square(x)))));
  }));
}

}  // namespace accel::autodiff
