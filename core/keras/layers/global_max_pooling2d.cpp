#include <accel/keras/layers/global_max_pooling2d.hpp>

#include "conv_utils.hpp"
#include "data_format.hpp"

#include <accel/ops.hpp>

namespace accel::keras {

GlobalMaxPooling2D::GlobalMaxPooling2D(GlobalMaxPooling2DOptions options)
    : Layer("GlobalMaxPooling2D", options.name), keepdims_(options.keepdims) {
  data_format::check_channels_last(options.data_format, "GlobalMaxPooling2D '" + name() + "'");
}

LayerShape GlobalMaxPooling2D::compute_output_shape(const LayerShape& input_shape) const {
  conv_utils::check_image_input(input_shape, "GlobalMaxPooling2D '" + name() + "'");
  if (keepdims_) return {input_shape[0], 1, 1, input_shape[3]};
  return {input_shape[0], input_shape[3]};
}

Tensor GlobalMaxPooling2D::call(const Tensor& inputs, bool) {
  compute_output_shape(inputs.shape().dims());  // the NHWC check, with the layer's own message
  return ops::reduce_max(inputs, {1, 2}, keepdims_);
}

}  // namespace accel::keras
