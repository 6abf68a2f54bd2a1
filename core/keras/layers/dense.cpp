#include <accel/keras/layers.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

namespace accel::keras {

Dense::Dense(int64_t units, DenseOptions options)
    : Layer("Dense", options.name),
      units_(units),
      options_(std::move(options)),
      activation_(get_activation(options_.activation)) {
  if (units_ <= 0) throw InvalidArgumentError("Dense: units must be positive, got " + std::to_string(units_));
}

LayerShape Dense::compute_output_shape(const LayerShape& input_shape) const {
  LayerShape output = input_shape;
  output.back() = units_;
  return output;
}

void Dense::build_weights(const LayerShape& input_shape) {
  if (input_shape.size() < 2 || input_shape.back() <= 0) {
    throw InvalidArgumentError("Dense '" + name() + "' needs inputs of rank >= 2 with a known last axis, got " +
                               format_layer_shape(input_shape));
  }
  kernel_ = add_weight("kernel", Shape{input_shape.back(), units_}, *options_.kernel_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", Shape{units_}, *options_.bias_initializer);
}

Tensor Dense::call(const Tensor& inputs, bool) {
  const Tensor bias = options_.use_bias ? bias_.value() : Tensor();  // first: see Conv2D::call
  Tensor outputs = ops::matmul(inputs, kernel_.value());
  if (options_.use_bias) outputs = ops::add(outputs, bias);
  return activation_(outputs);
}

Activation::Activation(const std::string& activation, std::string name)
    : Layer("Activation", std::move(name)), activation_name_(activation), activation_(get_activation(activation)) {}

Tensor Activation::call(const Tensor& inputs, bool) { return activation_(inputs); }

LayerShape Flatten::compute_output_shape(const LayerShape& input_shape) const {
  int64_t features = 1;
  for (size_t axis = 1; axis < input_shape.size(); ++axis) features *= input_shape[axis];
  return {input_shape.empty() ? kUnknownDim : input_shape[0], features};
}

Tensor Flatten::call(const Tensor& inputs, bool) {
  return inputs.reshape(Shape{inputs.shape().dim(0), -1});
}

}  // namespace accel::keras
