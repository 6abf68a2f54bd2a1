// Activation functions by Keras name (keras.activations), and the functions
// themselves for callers that pass arguments (gelu's `approximate`, elu's
// `alpha`, softmax's `axis`). This file owns the list of names
// get_activation() knows; each is built from primitive ops, so every one is
// differentiable on any device and fuses in compiled steps.
//
// Names: linear (also ""), relu, sigmoid, tanh, softmax (last axis), gelu
// (exact, through erf), gelu_approximate (Keras's gelu(x, approximate=True),
// the tanh form), swish and silu (the same function), softplus, elu, selu,
// leaky_relu (Keras 3's default slope 0.2; Keras 2 has it only as the
// LeakyReLU layer, whose default is 0.3).
#pragma once

#include <accel/tensor.hpp>

#include <cstdint>
#include <functional>
#include <string_view>

namespace accel::keras {

using ActivationFunction = std::function<Tensor(const Tensor&)>;

// Throws InvalidArgumentError listing the known names for an unknown one.
ActivationFunction get_activation(std::string_view name);

// 0.5 x (1 + erf(x / sqrt(2))); with `approximate`,
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), as tf.nn.gelu.
Tensor gelu(const Tensor& x, bool approximate = false);

// x * sigmoid(x). Keras calls it swish and silu.
Tensor silu(const Tensor& x);
Tensor swish(const Tensor& x);

// log(1 + e^x) as TensorFlow computes it: x above -log(eps) - 2 (about
// 13.9), e^x below log(eps) + 2, log(e^x + 1) between; its gradient is
// sigmoid(x), finite everywhere.
Tensor softplus(const Tensor& x);

// x for x > 0, else alpha (e^x - 1).
Tensor elu(const Tensor& x, double alpha = 1.0);

// scale * elu(x, alpha) with Keras's constants (alpha 1.67326324...,
// scale 1.05070098...).
Tensor selu(const Tensor& x);

// x for x >= 0, else negative_slope * x.
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.2);

// Softmax along `axis` (negative counts from the end), as
// keras.activations.softmax(x, axis): the softmax op runs on the last axis,
// so another axis is transposed there and back. InvalidArgumentError for a
// scalar or an axis outside the rank.
Tensor softmax(const Tensor& x, int32_t axis = -1);

}  // namespace accel::keras
