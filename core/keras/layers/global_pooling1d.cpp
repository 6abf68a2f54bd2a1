#include <accel/keras/layers/global_pooling1d.hpp>

#include "data_format.hpp"

#include <accel/error.hpp>

namespace accel::keras {

GlobalPooling1D::GlobalPooling1D(std::string class_name, GlobalPooling1DOptions options)
    : Layer(std::move(class_name), options.name), keepdims_(options.keepdims) {
  data_format::check_channels_last(options.data_format, this->class_name() + " '" + name() + "'");
}

LayerShape GlobalPooling1D::compute_output_shape(const LayerShape& input_shape) const {
  if (input_shape.size() != 3) {
    throw InvalidArgumentError(class_name() + " '" + name() +
                               "' expects inputs of shape (batch, steps, features), got " +
                               format_layer_shape(input_shape));
  }
  if (keepdims_) return {input_shape[0], 1, input_shape[2]};
  return {input_shape[0], input_shape[2]};
}

}  // namespace accel::keras
