#include "grouped_convolution.hpp"

#include "conv_utils.hpp"

#include <algorithm>
#include <vector>

namespace accel::keras::grouped_convolution {
namespace {

// One spatial axis of the tap form: how long the output is, the zeros before
// and after the input, and how many input rows one tap's slice spans.
struct TapAxis {
  int64_t output;
  int64_t pad_before;
  int64_t pad_after;
  int64_t span;
};

TapAxis tap_axis(int64_t input, int64_t window, const ops::Conv2DOptions& options, size_t axis) {
  const int64_t stride = options.strides[axis], dilation = options.dilations[axis];
  TapAxis result{};
  result.output = conv_utils::conv_output_length(input, window, options.padding, stride, dilation);
  result.pad_before = conv_utils::conv_padding_before(input, window, options.padding, stride, dilation);
  // With a stride, a tap's slice spans output * stride rows, to be reshaped to
  // (output, stride) and keep the first of each stride: the last tap needs
  // rows up to (window - 1) * dilation + span, zeros past the input.
  result.span = stride > 1 ? result.output * stride : result.output;
  const int64_t needed = (window - 1) * dilation + result.span;
  result.pad_after = std::max<int64_t>(0, needed - input - result.pad_before);
  return result;
}

// One input channel per group (see the header): sum over the taps (r, s) of
// padded_x[:, r*d + i*stride, s*d + j*stride, c] * kernel[r, s, c, m].
Tensor conv2d_over_taps(const Tensor& x, const Tensor& kernel, const ops::Conv2DOptions& options) {
  const int64_t batch = x.shape()[0], channels = x.shape()[3];
  const int64_t window_rows = kernel.shape()[0], window_cols = kernel.shape()[1];
  const int64_t multiplier = kernel.shape()[3] / channels;
  const TapAxis rows = tap_axis(x.shape()[1], window_rows, options, 0);
  const TapAxis cols = tap_axis(x.shape()[2], window_cols, options, 1);
  const bool strided = options.strides[0] > 1 || options.strides[1] > 1;

  const Tensor padded = ops::pad(x, {{0, 0}, {rows.pad_before, rows.pad_after}, {cols.pad_before, cols.pad_after}, {0, 0}});
  // Kernel (kh, kw, 1, C * multiplier) seen as (kh, kw, C, multiplier): filter c * multiplier + m.
  const Tensor taps_of_kernel = kernel.reshape(Shape{window_rows, window_cols, channels, multiplier});
  Tensor sum;
  for (int64_t r = 0; r < window_rows; ++r) {
    for (int64_t s = 0; s < window_cols; ++s) {
      Tensor tap = ops::slice(padded, {0, r * options.dilations[0], s * options.dilations[1], 0},
                              {batch, rows.span, cols.span, channels});
      if (strided) {
        tap = ops::slice(tap.reshape(Shape{batch, rows.output, options.strides[0], cols.output, options.strides[1], channels}),
                         {0, 0, 0, 0, 0, 0}, {batch, rows.output, 1, cols.output, 1, channels});
      }
      const Tensor weights = ops::slice(taps_of_kernel, {r, s, 0, 0}, {1, 1, channels, multiplier});
      // (N, oh, ow, C, 1) * (C, multiplier): the multiplier axis last, as TensorFlow orders the output.
      const Tensor term = ops::mul(tap.reshape(Shape{batch, rows.output, cols.output, channels, 1}),
                                   weights.reshape(Shape{channels, multiplier}));
      sum = sum.defined() ? ops::add(sum, term) : term;
    }
  }
  return sum.reshape(Shape{batch, rows.output, cols.output, channels * multiplier});
}

// Several input channels per group: one convolution per group, concatenated.
Tensor conv2d_per_group(const Tensor& x, const Tensor& kernel, int64_t groups, const ops::Conv2DOptions& options) {
  const Shape& input = x.shape();
  const Shape& filter = kernel.shape();
  const int64_t group_channels = filter[2], group_filters = filter[3] / groups;
  std::vector<Tensor> outputs;
  outputs.reserve(static_cast<size_t>(groups));
  for (int64_t group = 0; group < groups; ++group) {
    const Tensor group_input = ops::slice(x, {0, 0, 0, group * group_channels}, {input[0], input[1], input[2], group_channels});
    const Tensor group_kernel =
        ops::slice(kernel, {0, 0, 0, group * group_filters}, {filter[0], filter[1], group_channels, group_filters});
    outputs.push_back(ops::conv2d(group_input, group_kernel, options));
  }
  return ops::concat(outputs, 3);
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& kernel, int64_t groups, const ops::Conv2DOptions& options) {
  if (groups == 1) return ops::conv2d(x, kernel, options);
  if (kernel.shape()[2] == 1) return conv2d_over_taps(x, kernel, options);
  return conv2d_per_group(x, kernel, groups, options);
}

Tensor depthwise_conv2d(const Tensor& x, const Tensor& depthwise_kernel, const ops::Conv2DOptions& options) {
  const Shape& shape = depthwise_kernel.shape();
  // (kh, kw, C, multiplier) and (kh, kw, 1, C * multiplier) are the same
  // values in the same order: the grouped kernel of C groups of one channel.
  return conv2d(x, depthwise_kernel.reshape(Shape{shape[0], shape[1], 1, shape[2] * shape[3]}), shape[2], options);
}

}  // namespace accel::keras::grouped_convolution
