#include <accel/keras/layers/conv1d.hpp>

#include "conv_utils.hpp"
#include "grouped_convolution.hpp"

#include <accel/error.hpp>
#include <accel/keras/layer_shape.hpp>

#include <algorithm>
#include <cctype>

namespace accel::keras {
namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

Conv1D::Conv1D(int64_t filters, int32_t kernel_size, Conv1DOptions options)
    : Layer("Conv1D", options.name),
      filters_(filters),
      kernel_size_(kernel_size),
      options_(std::move(options)),
      causal_(lowercase(options_.padding) == "causal"),
      padding_(causal_ ? ops::Padding::kValid : conv_utils::parse_padding(options_.padding, where())),
      activation_(get_activation(options_.activation)) {
  if (filters_ <= 0) throw InvalidArgumentError(where() + ": filters must be positive, got " + std::to_string(filters_));
  if (options_.groups <= 0 || filters_ % options_.groups != 0) {
    throw InvalidArgumentError(where() + ": groups must be positive and divide the filters, got groups=" +
                               std::to_string(options_.groups) + ", filters=" + std::to_string(filters_));
  }
  conv_utils::check_window_arguments({1, kernel_size_}, {1, options_.strides}, {1, options_.dilation_rate}, where());
}

int64_t Conv1D::causal_padding() const noexcept {
  return causal_ ? static_cast<int64_t>(options_.dilation_rate) * (kernel_size_ - 1) : 0;
}

LayerShape Conv1D::compute_output_shape(const LayerShape& input_shape) const {
  if (input_shape.size() != 3 || input_shape[2] == kUnknownDim) {
    throw InvalidArgumentError(where() + ": input must be (batch, steps, channels) with known channels, got " +
                               format_layer_shape(input_shape));
  }
  const int64_t steps = input_shape[1] == kUnknownDim ? kUnknownDim : input_shape[1] + causal_padding();
  return {input_shape[0],
          conv_utils::conv_output_length(steps, kernel_size_, padding_, options_.strides, options_.dilation_rate),
          filters_};
}

void Conv1D::build_weights(const LayerShape& input_shape) {
  compute_output_shape(input_shape);
  if (input_shape[2] % options_.groups != 0) {
    throw InvalidArgumentError(where() + ": the number of input channels must be evenly divisible by the number of "
                               "groups, got groups=" + std::to_string(options_.groups) + " for an input of " +
                               std::to_string(input_shape[2]) + " channels " + format_layer_shape(input_shape));
  }
  kernel_ = add_weight("kernel", Shape{kernel_size_, input_shape[2] / options_.groups, filters_},
                       *options_.kernel_initializer);
  if (options_.use_bias) bias_ = add_weight("bias", Shape{filters_}, *options_.bias_initializer);
}

Tensor Conv1D::call(const Tensor& inputs, bool) {
  const Shape output_shape(compute_output_shape(inputs.shape().dims()));
  const Tensor bias = options_.use_bias ? bias_.value() : Tensor();  // read first, as Conv2D (epilogue fusion)
  Tensor sequence = inputs;
  if (causal_) sequence = ops::pad(sequence, {{0, 0}, {causal_padding(), 0}, {0, 0}});
  const Shape& shape = sequence.shape();
  const Tensor image = sequence.reshape(Shape{shape[0], 1, shape[1], shape[2]});
  const Shape& kernel_shape = kernel_.shape();
  const Tensor kernel = kernel_.value().reshape(Shape{1, kernel_shape[0], kernel_shape[1], kernel_shape[2]});
  const ops::Conv2DOptions convolution{
      .strides = {1, options_.strides}, .padding = padding_, .dilations = {1, options_.dilation_rate}};
  Tensor outputs = grouped_convolution::conv2d(image, kernel, options_.groups, convolution).reshape(output_shape);
  if (options_.use_bias) outputs = ops::add(outputs, bias);
  return activation_(outputs);
}

}  // namespace accel::keras
