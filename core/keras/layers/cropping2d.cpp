#include <accel/keras/layers/cropping2d.hpp>

#include "conv_utils.hpp"
#include "data_format.hpp"

#include <accel/error.hpp>
#include <accel/ops.hpp>

namespace accel::keras {

Cropping2D::Cropping2D(Cropping2DOptions options) : Layer("Cropping2D", options.name), cropping_(options.cropping) {
  const std::string where = "Cropping2D '" + name() + "'";
  data_format::check_channels_last(options.data_format, where);
  if (cropping_.any_negative()) {
    throw InvalidArgumentError(where + ": cropping must be >= 0 on every side, got " + cropping_.to_string() +
                               " as ((top, bottom), (left, right))");
  }
}

LayerShape Cropping2D::compute_output_shape(const LayerShape& input_shape) const {
  const std::string where = "Cropping2D '" + name() + "'";
  conv_utils::check_image_input(input_shape, where);
  auto cropped = [&](int64_t size, int64_t before, int64_t after, const char* axis) {
    if (size == kUnknownDim) return kUnknownDim;
    if (before + after >= size) {
      throw InvalidArgumentError(where + ": cropping " + cropping_.to_string() + " leaves none of the " +
                                 std::to_string(size) + " " + axis + " of an input of shape " +
                                 format_layer_shape(input_shape) + "; at least one must remain");
    }
    return size - before - after;
  };
  return {input_shape[0], cropped(input_shape[1], cropping_.top, cropping_.bottom, "rows"),
          cropped(input_shape[2], cropping_.left, cropping_.right, "columns"), input_shape[3]};
}

Tensor Cropping2D::call(const Tensor& inputs, bool) {
  const LayerShape output = compute_output_shape(inputs.shape().dims());
  return ops::slice(inputs, {0, cropping_.top, cropping_.left, 0}, output);
}

}  // namespace accel::keras
