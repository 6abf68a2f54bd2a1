#include <accel/keras/layers/depthwise_conv2d.hpp>

#include "conv_utils.hpp"
#include "grouped_convolution.hpp"

#include <accel/error.hpp>

namespace accel::keras {

DepthwiseConv2D::DepthwiseConv2D(std::array<int32_t, 2> kernel_size, DepthwiseConv2DOptions options)
    : Layer("DepthwiseConv2D", options.name),
      kernel_size_(kernel_size),
      options_(std::move(options)),
      padding_(conv_utils::parse_padding(options_.padding, "DepthwiseConv2D '" + name() + "'")),
      activation_(get_activation(options_.activation)) {
  const std::string where = "DepthwiseConv2D '" + name() + "'";
  if (options_.depth_multiplier <= 0) {
    throw InvalidArgumentError(where + ": depth_multiplier must be positive, got " +
                               std::to_string(options_.depth_multiplier));
  }
  conv_utils::check_window_arguments(kernel_size_, options_.strides, options_.dilation_rate, where);
}

LayerShape DepthwiseConv2D::compute_output_shape(const LayerShape& input_shape) const {
  const std::string where = "DepthwiseConv2D '" + name() + "'";
  conv_utils::check_image_input(input_shape, where);  // before input_shape[3] is read
  return conv_utils::convolution_output_shape(input_shape, kernel_size_, padding_, options_.strides,
                                              options_.dilation_rate, input_shape[3] * options_.depth_multiplier, where);
}

void DepthwiseConv2D::build_weights(const LayerShape& input_shape) {
  conv_utils::check_image_input(input_shape, "DepthwiseConv2D '" + name() + "'");
  depthwise_kernel_ =
      add_weight("depthwise_kernel", Shape{kernel_size_[0], kernel_size_[1], input_shape[3], options_.depth_multiplier},
                 *options_.depthwise_initializer);
  if (options_.use_bias) {
    bias_ = add_weight("bias", Shape{input_shape[3] * options_.depth_multiplier}, *options_.bias_initializer);
  }
}

Tensor DepthwiseConv2D::call(const Tensor& inputs, bool) {
  const ops::Conv2DOptions convolution{
      .strides = options_.strides, .padding = padding_, .dilations = options_.dilation_rate};
  const Tensor bias = options_.use_bias ? bias_.value() : Tensor();  // first: see Conv2D::call
  Tensor outputs = grouped_convolution::depthwise_conv2d(inputs, depthwise_kernel_.value(), convolution);
  if (options_.use_bias) outputs = ops::add(outputs, bias);  // broadcasts over the channel axis
  return activation_(outputs);
}

}  // namespace accel::keras
