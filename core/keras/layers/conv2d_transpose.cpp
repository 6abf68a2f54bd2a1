#include <accel/keras/layers/conv2d_transpose.hpp>

#include "conv_utils.hpp"

#include <accel/error.hpp>

namespace accel::keras {

Conv2DTranspose::Conv2DTranspose(int64_t filters, std::array<int32_t, 2> kernel_size, Conv2DTransposeOptions options)
    : Layer("Conv2DTranspose", options.name),
      filters_(filters),
      kernel_size_(kernel_size),
      options_(std::move(options)),
      padding_(conv_utils::parse_padding(options_.padding, "Conv2DTranspose '" + name() + "'")),
      activation_(get_activation(options_.activation)) {
  if (filters_ <= 0) throw InvalidArgumentError(where() + ": filters must be positive, got " + std::to_string(filters_));
  conv_utils::check_positive(kernel_size_, "kernel_size", where());
  conv_utils::check_positive(options_.strides, "strides", where());
  conv_utils::check_positive(options_.dilation_rate, "dilation_rate", where());
  if (options_.output_padding) {
    for (size_t axis = 0; axis < 2; ++axis) {
      const int32_t padding = (*options_.output_padding)[axis], stride = options_.strides[axis];
      if (padding < 0 || padding >= stride) {  // Keras: "Strides must be greater than output padding"
        throw InvalidArgumentError(where() + ": output_padding must be at least 0 and below the stride, got " +
                                   std::to_string(padding) + " for stride " + std::to_string(stride));
      }
    }
  }
}

int64_t Conv2DTranspose::output_length(size_t axis, int64_t input_length) const {
  std::optional<int64_t> output_padding;
  if (options_.output_padding) output_padding = (*options_.output_padding)[axis];
  const int64_t length = conv_utils::deconv_output_length(input_length, kernel_size_[axis], padding_, output_padding,
                                                          options_.strides[axis], options_.dilation_rate[axis]);
  if (length == kUnknownDim) return length;
  // TensorFlow's conv2d_transpose requires it too: an even kernel with
  // "same" padding and output_padding 0 gives a size that a convolution
  // does not map back to the input.
  const int64_t back = conv_utils::conv_output_length(length, kernel_size_[axis], padding_, options_.strides[axis],
                                                      options_.dilation_rate[axis]);
  if (length <= 0 || back != input_length) {
    throw InvalidArgumentError(where() + ": an input of " + std::to_string(input_length) + " along spatial axis " +
                               std::to_string(axis) + " gives an output of " + std::to_string(length) +
                               ", which the convolution maps to " + std::to_string(back) + ", not back to " +
                               std::to_string(input_length) + "; choose another output_padding");
  }
  return length;
}

LayerShape Conv2DTranspose::compute_output_shape(const LayerShape& input_shape) const {
  conv_utils::check_image_input(input_shape, where());
  LayerShape output = input_shape;
  for (size_t axis = 0; axis < 2; ++axis) output[axis + 1] = output_length(axis, input_shape[axis + 1]);
  output[3] = filters_;
  return output;
}

void Conv2DTranspose::build_weights(const LayerShape& input_shape) {
  conv_utils::check_image_input(input_shape, where());
  // (h, w, filters, in): the kernel of the Conv2D that this layer transposes, mapping filters -> in.
  kernel_ = add_weight("kernel", Shape{kernel_size_[0], kernel_size_[1], filters_, input_shape[3]},
                       *options_.kernel_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", Shape{filters_}, *options_.bias_initializer);
}

Tensor Conv2DTranspose::call(const Tensor& inputs, bool) {
  if (inputs.rank() != 4) {
    throw InvalidArgumentError(where() + " expects NHWC inputs (batch, height, width, channels), got " +
                               inputs.shape().to_string());
  }
  const Shape output_shape{inputs.shape()[0], output_length(0, inputs.shape()[1]), output_length(1, inputs.shape()[2]),
                           filters_};
  const ops::Conv2DOptions convolution{
      .strides = options_.strides, .padding = padding_, .dilations = options_.dilation_rate};
  const Tensor bias = options_.use_bias ? bias_.value() : Tensor();  // first: see Conv2D::call
  Tensor outputs = ops::conv2d_backward_input(inputs, kernel_.value(), output_shape, convolution);
  if (options_.use_bias) outputs = ops::add(outputs, bias);  // broadcasts over the channel axis
  return activation_(outputs);
}

}  // namespace accel::keras
