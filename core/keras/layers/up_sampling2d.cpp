#include <accel/keras/layers/up_sampling2d.hpp>

#include "conv_utils.hpp"
#include "data_format.hpp"

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include <algorithm>
#include <array>
#include <string_view>

namespace accel::keras {
namespace {

// Keras 2's accepted values (keras/layers/reshaping/up_sampling2d.py), compared as given.
constexpr std::array<std::string_view, 8> kKerasInterpolations{
    "area", "bicubic", "bilinear", "gaussian", "lanczos3", "lanczos5", "mitchellcubic", "nearest"};

}  // namespace

UpSampling2D::UpSampling2D(UpSampling2DOptions options) : Layer("UpSampling2D", options.name), size_(options.size) {
  const std::string where = "UpSampling2D '" + name() + "'";
  data_format::check_channels_last(options.data_format, where);
  conv_utils::check_positive(size_, "size", where);
  if (options.interpolation == "nearest") return;
  if (std::find(kKerasInterpolations.begin(), kKerasInterpolations.end(), options.interpolation) !=
      kKerasInterpolations.end()) {
    throw UnimplementedError(where + ": interpolation \"" + options.interpolation +
                             "\" is not implemented; only \"nearest\" is");
  }
  throw InvalidArgumentError(where + ": interpolation must be one of \"area\", \"bicubic\", \"bilinear\", "
                             "\"gaussian\", \"lanczos3\", \"lanczos5\", \"mitchellcubic\", \"nearest\" (only "
                             "\"nearest\" is implemented), got \"" + options.interpolation + "\"");
}

LayerShape UpSampling2D::compute_output_shape(const LayerShape& input_shape) const {
  conv_utils::check_image_input(input_shape, "UpSampling2D '" + name() + "'");
  auto scaled = [](int64_t length, int32_t factor) { return length == kUnknownDim ? kUnknownDim : length * factor; };
  return {input_shape[0], scaled(input_shape[1], size_[0]), scaled(input_shape[2], size_[1]), input_shape[3]};
}

Tensor UpSampling2D::call(const Tensor& inputs, bool) {
  const LayerShape output = compute_output_shape(inputs.shape().dims());
  const std::vector<int64_t>& in = inputs.shape().dims();
  // Nearest neighbour at an integer factor repeats every cell: give each row and
  // column an axis of 1, broadcast it to the factor, and fold it back in.
  const Tensor spread = inputs.reshape(Shape{in[0], in[1], 1, in[2], 1, in[3]});
  const Tensor repeated = ops::broadcast_to(spread, Shape{in[0], in[1], size_[0], in[2], size_[1], in[3]});
  return repeated.reshape(Shape(output));
}

}  // namespace accel::keras
