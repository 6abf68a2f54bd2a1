// keras.activations by name, each composed of primitive ops with the
// formulas and constants TensorFlow uses (tf.nn.gelu, tf.nn.silu,
// tf.math.softplus, tf.nn.elu / selu / leaky_relu), so values match Keras to
// float rounding and gradients come from the ops' own gradients.
#include <accel/keras/activations.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "utils/constant_like.hpp"

#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace accel::keras {
namespace {

using detail::constant_like;

// Machine epsilon of a float dtype, for softplus's thresholds.
double epsilon_of(DType dtype) {
  switch (dtype) {
    case DType::kBFloat16: return 0.0078125;       // 2^-7
    case DType::kFloat16: return 0.0009765625;     // 2^-10
    default: return 1.1920928955078125e-07;        // 2^-23, float32
  }
}

struct NamedActivation {
  std::string_view name;
  Tensor (*function)(const Tensor&);
};

// Every name get_activation() knows, in the order its error message lists them.
const std::array<NamedActivation, 13> kActivations = {{
    {"linear", [](const Tensor& x) { return x; }},
    {"relu", [](const Tensor& x) { return ops::relu(x); }},
    {"sigmoid", [](const Tensor& x) { return ops::sigmoid(x); }},
    {"tanh", [](const Tensor& x) { return ops::tanh(x); }},
    {"softmax", [](const Tensor& x) { return softmax(x); }},
    {"gelu", [](const Tensor& x) { return gelu(x); }},
    {"gelu_approximate", [](const Tensor& x) { return gelu(x, /*approximate=*/true); }},
    {"swish", [](const Tensor& x) { return swish(x); }},
    {"silu", [](const Tensor& x) { return silu(x); }},
    {"softplus", [](const Tensor& x) { return softplus(x); }},
    {"elu", [](const Tensor& x) { return elu(x); }},
    {"selu", [](const Tensor& x) { return selu(x); }},
    {"leaky_relu", [](const Tensor& x) { return leaky_relu(x); }},
}};

std::string known_names() {
  std::string names;
  for (const NamedActivation& activation : kActivations) {
    if (!names.empty()) names += ", ";
    names += activation.name;
  }
  return names;
}

}  // namespace

ActivationFunction get_activation(std::string_view name) {
  if (name.empty()) return kActivations[0].function;  // Keras's None: linear
  for (const NamedActivation& activation : kActivations) {
    if (activation.name == name) return activation.function;
  }
  throw InvalidArgumentError("unknown activation '" + std::string(name) + "'; expected one of " + known_names());
}

Tensor gelu(const Tensor& x, bool approximate) {
  const Tensor half_x = ops::mul(constant_like(0.5, x), x);
  const Tensor one = constant_like(1.0, x);
  if (approximate) {
    const Tensor cubic = ops::mul(constant_like(0.044715, x), ops::mul(ops::square(x), x));
    const Tensor inner = ops::mul(constant_like(0.7978845608028654, x), ops::add(x, cubic));  // sqrt(2 / pi)
    return ops::mul(half_x, ops::add(one, ops::tanh(inner)));
  }
  return ops::mul(half_x, ops::add(one, ops::erf(ops::div(x, constant_like(1.4142135623730951, x)))));
}

Tensor silu(const Tensor& x) { return ops::mul(x, ops::sigmoid(x)); }

Tensor swish(const Tensor& x) { return silu(x); }

Tensor softplus(const Tensor& x) {
  const double threshold = std::log(epsilon_of(x.dtype())) + 2.0;  // -13.94 for float32
  const Tensor low = constant_like(threshold, x), high = constant_like(-threshold, x);
  // Every branch runs on every element, so each reads x clamped to where it
  // is chosen: an e^x that overflowed in a branch not taken would turn the
  // select's zero gradient into 0 * inf = NaN.
  const Tensor small = ops::exp(ops::minimum(x, low));
  const Tensor middle = ops::log(ops::add(ops::exp(ops::minimum(ops::maximum(x, low), high)), constant_like(1.0, x)));
  return ops::select(ops::greater(x, high), x, ops::select(ops::less(x, low), small, middle));
}

Tensor elu(const Tensor& x, double alpha) {
  const Tensor zero = constant_like(0.0, x);
  // e^x - 1 on min(x, 0): the branch for x > 0 never overflows (see softplus).
  const Tensor negative =
      ops::mul(constant_like(alpha, x), ops::sub(ops::exp(ops::minimum(x, zero)), constant_like(1.0, x)));
  return ops::select(ops::greater(x, zero), x, negative);
}

Tensor selu(const Tensor& x) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return ops::mul(constant_like(kScale, x), elu(x, kAlpha));
}

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return ops::select(ops::greater(x, constant_like(0.0, x)), x, ops::mul(x, constant_like(negative_slope, x)));
}

Tensor softmax(const Tensor& x, int32_t axis) {
  const int32_t rank = x.rank();
  if (rank == 0) throw InvalidArgumentError("softmax: expected a tensor of rank 1 or more, got a scalar");
  const int32_t resolved = axis < 0 ? axis + rank : axis;
  if (resolved < 0 || resolved >= rank) {
    throw InvalidArgumentError("softmax: axis " + std::to_string(axis) + " is out of range for shape " +
                               x.shape().to_string() + " (rank " + std::to_string(rank) + ")");
  }
  if (resolved == rank - 1) return ops::softmax(x);
  // Swapping `axis` with the last one is its own inverse: the same
  // permutation moves the result back.
  std::vector<int32_t> permutation(static_cast<size_t>(rank));
  std::iota(permutation.begin(), permutation.end(), 0);
  std::swap(permutation[static_cast<size_t>(resolved)], permutation.back());
  return ops::transpose(ops::softmax(ops::transpose(x, permutation)), permutation);
}

}  // namespace accel::keras
