#include <accel/keras/layers/conv2d.hpp>

#include "conv_utils.hpp"
#include "grouped_convolution.hpp"

#include <accel/error.hpp>

namespace accel::keras {

Conv2D::Conv2D(int64_t filters, std::array<int32_t, 2> kernel_size, Conv2DOptions options)
    : Layer("Conv2D", options.name),
      filters_(filters),
      kernel_size_(kernel_size),
      options_(std::move(options)),
      padding_(conv_utils::parse_padding(options_.padding, "Conv2D '" + name() + "'")),
      activation_(get_activation(options_.activation)) {
  const std::string where = "Conv2D '" + name() + "'";
  if (filters_ <= 0) throw InvalidArgumentError(where + ": filters must be positive, got " + std::to_string(filters_));
  if (options_.groups <= 0) {
    throw InvalidArgumentError(where + ": groups must be positive, got " + std::to_string(options_.groups));
  }
  if (filters_ % options_.groups != 0) {
    throw InvalidArgumentError(where + ": the number of filters must be evenly divisible by the number of groups, got groups=" +
                               std::to_string(options_.groups) + ", filters=" + std::to_string(filters_));
  }
  conv_utils::check_window_arguments(kernel_size_, options_.strides, options_.dilation_rate, where);
}

LayerShape Conv2D::compute_output_shape(const LayerShape& input_shape) const {
  return conv_utils::convolution_output_shape(input_shape, kernel_size_, padding_, options_.strides,
                                              options_.dilation_rate, filters_, "Conv2D '" + name() + "'");
}

void Conv2D::build_weights(const LayerShape& input_shape) {
  const std::string where = "Conv2D '" + name() + "'";
  conv_utils::check_image_input(input_shape, where);
  if (input_shape[3] % options_.groups != 0) {
    throw InvalidArgumentError(where + ": the number of input channels must be evenly divisible by the number of "
                               "groups, got groups=" + std::to_string(options_.groups) + " for an input of " +
                               std::to_string(input_shape[3]) + " channels " + format_layer_shape(input_shape));
  }
  kernel_ = add_weight("kernel", Shape{kernel_size_[0], kernel_size_[1], input_shape[3] / options_.groups, filters_},
                       *options_.kernel_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", Shape{filters_}, *options_.bias_initializer);
}

Tensor Conv2D::call(const Tensor& inputs, bool) {
  const ops::Conv2DOptions convolution{
      .strides = options_.strides, .padding = padding_, .dilations = options_.dilation_rate};
  // The bias is read (under a mixed policy: cast) before the convolution, so
  // that a compiled step can fuse the add into its epilogue, whose extra
  // inputs must exist before the op they follow.
  const Tensor bias = options_.use_bias ? bias_.value() : Tensor();
  Tensor outputs = grouped_convolution::conv2d(inputs, kernel_.value(), options_.groups, convolution);
  if (options_.use_bias) outputs = ops::add(outputs, bias);  // broadcasts over the channel axis
  return activation_(outputs);
}

}  // namespace accel::keras
