#include "conv_utils.hpp"

#include <accel/error.hpp>

#include <algorithm>
#include <cctype>

namespace accel::keras::conv_utils {

ops::Padding parse_padding(std::string_view padding, const std::string& layer_name) {
  std::string lower(padding);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "valid") return ops::Padding::kValid;
  if (lower == "same") return ops::Padding::kSame;
  throw InvalidArgumentError(layer_name + ": padding must be \"valid\" or \"same\", got \"" +
                             std::string(padding) + "\"");
}

int64_t conv_output_length(int64_t input_length, int64_t window, ops::Padding padding, int64_t stride,
                           int64_t dilation) {
  if (input_length == kUnknownDim) return kUnknownDim;
  const int64_t dilated_window = (window - 1) * dilation + 1;
  const int64_t covered = padding == ops::Padding::kSame ? input_length : input_length - dilated_window + 1;
  return std::max<int64_t>(0, (covered + stride - 1) / stride);
}

int64_t conv_padding_before(int64_t input_length, int64_t window, ops::Padding padding, int64_t stride,
                            int64_t dilation) {
  if (padding == ops::Padding::kValid) return 0;
  const int64_t output_length = conv_output_length(input_length, window, padding, stride, dilation);
  const int64_t dilated_window = (window - 1) * dilation + 1;
  return std::max<int64_t>(0, (output_length - 1) * stride + dilated_window - input_length) / 2;
}

int64_t deconv_output_length(int64_t input_length, int64_t window, ops::Padding padding,
                             std::optional<int64_t> output_padding, int64_t stride, int64_t dilation) {
  if (input_length == kUnknownDim) return kUnknownDim;
  const int64_t dilated_window = (window - 1) * dilation + 1;
  if (!output_padding) {
    return padding == ops::Padding::kValid ? input_length * stride + std::max<int64_t>(dilated_window - stride, 0)
                                           : input_length * stride;
  }
  const int64_t pad = padding == ops::Padding::kSame ? dilated_window / 2 : 0;
  return (input_length - 1) * stride + dilated_window - 2 * pad + *output_padding;
}

void check_positive(const std::array<int32_t, 2>& values, const char* what, const std::string& layer_name) {
  if (values[0] <= 0 || values[1] <= 0) {
    throw InvalidArgumentError(layer_name + ": " + what + " must be positive, got (" +
                               std::to_string(values[0]) + ", " + std::to_string(values[1]) + ")");
  }
}

void check_image_input(const LayerShape& input_shape, const std::string& layer_name) {
  if (input_shape.size() != 4 || input_shape[3] <= 0) {
    throw InvalidArgumentError(layer_name + " expects NHWC inputs (batch, height, width, channels) "
                               "with a known channel count, got " + format_layer_shape(input_shape));
  }
}

void check_window_arguments(const std::array<int32_t, 2>& kernel_size, const std::array<int32_t, 2>& strides,
                            const std::array<int32_t, 2>& dilation_rate, const std::string& layer_name) {
  check_positive(kernel_size, "kernel_size", layer_name);
  check_positive(strides, "strides", layer_name);
  check_positive(dilation_rate, "dilation_rate", layer_name);
}

LayerShape convolution_output_shape(const LayerShape& input_shape, const std::array<int32_t, 2>& kernel_size,
                                    ops::Padding padding, const std::array<int32_t, 2>& strides,
                                    const std::array<int32_t, 2>& dilation_rate, int64_t channels,
                                    const std::string& layer_name) {
  check_image_input(input_shape, layer_name);
  LayerShape output = input_shape;
  for (size_t axis = 0; axis < 2; ++axis) {
    output[axis + 1] =
        conv_output_length(input_shape[axis + 1], kernel_size[axis], padding, strides[axis], dilation_rate[axis]);
  }
  output[3] = channels;
  return output;
}

}  // namespace accel::keras::conv_utils
