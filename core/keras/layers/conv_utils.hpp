// Shape arithmetic shared by the convolution and pooling layers (Keras's
// keras/utils/conv_utils.py): parsing "valid"/"same", the output length of a
// strided, dilated window along one axis, the padding TensorFlow puts before
// the input, and the output length of a transposed convolution. Private to
// core/keras/layers.
#pragma once

#include <accel/keras/layer.hpp>
#include <accel/ops.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace accel::keras::conv_utils {

// "valid" or "same", any case (Keras lowercases it); otherwise
// InvalidArgumentError naming `layer_name`.
ops::Padding parse_padding(std::string_view padding, const std::string& layer_name);

// Keras's conv_output_length: "same" keeps ceil(input / stride), "valid" keeps
// ceil((input - dilated_window + 1) / stride), never below 0. An unknown
// length (kUnknownDim) stays unknown.
int64_t conv_output_length(int64_t input_length, int64_t window, ops::Padding padding,
                           int64_t stride, int64_t dilation = 1);

// The zeros TensorFlow pads before the input along one axis: none for
// "valid"; for "same" half of the total (the odd cell goes after), the total
// being max((output - 1) * stride + dilated_window - input, 0).
int64_t conv_padding_before(int64_t input_length, int64_t window, ops::Padding padding, int64_t stride,
                            int64_t dilation = 1);

// Keras's deconv_output_length (Conv2DTranspose): without output_padding
// (std::nullopt), "valid" gives input * stride + max(dilated_window - stride, 0)
// and "same" input * stride; with it, (input - 1) * stride + dilated_window
// - 2 * pad + output_padding, pad being dilated_window / 2 for "same" and 0
// for "valid". An unknown length stays unknown.
int64_t deconv_output_length(int64_t input_length, int64_t window, ops::Padding padding,
                             std::optional<int64_t> output_padding, int64_t stride, int64_t dilation = 1);

// Every entry positive, or InvalidArgumentError("<layer>: <what> must be positive ...").
void check_positive(const std::array<int32_t, 2>& values, const char* what, const std::string& layer_name);

// Keras's image layers take NHWC inputs: rank 4 with a known channel count.
void check_image_input(const LayerShape& input_shape, const std::string& layer_name);

// A convolution's kernel size, strides and dilation rate, each checked by check_positive.
void check_window_arguments(const std::array<int32_t, 2>& kernel_size, const std::array<int32_t, 2>& strides,
                            const std::array<int32_t, 2>& dilation_rate, const std::string& layer_name);

// The NHWC output shape of a convolution of `input_shape` (checked by
// check_image_input) to `channels` channels, conv_output_length on each
// spatial axis.
LayerShape convolution_output_shape(const LayerShape& input_shape, const std::array<int32_t, 2>& kernel_size,
                                    ops::Padding padding, const std::array<int32_t, 2>& strides,
                                    const std::array<int32_t, 2>& dilation_rate, int64_t channels,
                                    const std::string& layer_name);

}  // namespace accel::keras::conv_utils
