#include <accel/keras/layers/separable_conv2d.hpp>

#include "conv_utils.hpp"
#include "grouped_convolution.hpp"

#include <accel/error.hpp>

namespace accel::keras {

SeparableConv2D::SeparableConv2D(int64_t filters, std::array<int32_t, 2> kernel_size, SeparableConv2DOptions options)
    : Layer("SeparableConv2D", options.name),
      filters_(filters),
      kernel_size_(kernel_size),
      options_(std::move(options)),
      padding_(conv_utils::parse_padding(options_.padding, "SeparableConv2D '" + name() + "'")),
      activation_(get_activation(options_.activation)) {
  const std::string where = "SeparableConv2D '" + name() + "'";
  if (filters_ <= 0) throw InvalidArgumentError(where + ": filters must be positive, got " + std::to_string(filters_));
  if (options_.depth_multiplier <= 0) {
    throw InvalidArgumentError(where + ": depth_multiplier must be positive, got " +
                               std::to_string(options_.depth_multiplier));
  }
  conv_utils::check_window_arguments(kernel_size_, options_.strides, options_.dilation_rate, where);
}

LayerShape SeparableConv2D::compute_output_shape(const LayerShape& input_shape) const {
  return conv_utils::convolution_output_shape(input_shape, kernel_size_, padding_, options_.strides,
                                              options_.dilation_rate, filters_, "SeparableConv2D '" + name() + "'");
}

void SeparableConv2D::build_weights(const LayerShape& input_shape) {
  conv_utils::check_image_input(input_shape, "SeparableConv2D '" + name() + "'");
  const int64_t depthwise_channels = input_shape[3] * options_.depth_multiplier;
  depthwise_kernel_ =
      add_weight("depthwise_kernel", Shape{kernel_size_[0], kernel_size_[1], input_shape[3], options_.depth_multiplier},
                 *options_.depthwise_initializer);
  pointwise_kernel_ = add_weight("pointwise_kernel", Shape{1, 1, depthwise_channels, filters_},
                                 *options_.pointwise_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", Shape{filters_}, *options_.bias_initializer);
}

Tensor SeparableConv2D::call(const Tensor& inputs, bool) {
  // The strides and dilation belong to the depthwise pass; the pointwise one is a plain 1x1 (tf.nn.separable_conv2d).
  const ops::Conv2DOptions depthwise{
      .strides = options_.strides, .padding = padding_, .dilations = options_.dilation_rate};
  const Tensor bias = options_.use_bias ? bias_.value() : Tensor();  // first: see Conv2D::call
  const Tensor spread = grouped_convolution::depthwise_conv2d(inputs, depthwise_kernel_.value(), depthwise);
  Tensor outputs = grouped_convolution::conv2d(spread, pointwise_kernel_.value(), /*groups=*/1, ops::Conv2DOptions{});
  if (options_.use_bias) outputs = ops::add(outputs, bias);  // broadcasts over the channel axis
  return activation_(outputs);
}

}  // namespace accel::keras
