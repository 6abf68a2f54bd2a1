#include <accel/keras/layers/zero_padding2d.hpp>

#include "conv_utils.hpp"
#include "data_format.hpp"

#include <accel/error.hpp>
#include <accel/ops.hpp>

namespace accel::keras {

ZeroPadding2D::ZeroPadding2D(ZeroPadding2DOptions options)
    : Layer("ZeroPadding2D", options.name), padding_(options.padding) {
  const std::string where = "ZeroPadding2D '" + name() + "'";
  data_format::check_channels_last(options.data_format, where);
  if (padding_.any_negative()) {
    throw InvalidArgumentError(where + ": padding must be >= 0 on every side, got " + padding_.to_string() +
                               " as ((top, bottom), (left, right))");
  }
}

LayerShape ZeroPadding2D::compute_output_shape(const LayerShape& input_shape) const {
  conv_utils::check_image_input(input_shape, "ZeroPadding2D '" + name() + "'");
  auto padded = [](int64_t size, int64_t before, int64_t after) {
    return size == kUnknownDim ? kUnknownDim : size + before + after;
  };
  return {input_shape[0], padded(input_shape[1], padding_.top, padding_.bottom),
          padded(input_shape[2], padding_.left, padding_.right), input_shape[3]};
}

Tensor ZeroPadding2D::call(const Tensor& inputs, bool) {
  compute_output_shape(inputs.shape().dims());  // the NHWC check, with the layer's own message
  return ops::pad(inputs, {{0, 0}, {padding_.top, padding_.bottom}, {padding_.left, padding_.right}, {0, 0}});
}

}  // namespace accel::keras
