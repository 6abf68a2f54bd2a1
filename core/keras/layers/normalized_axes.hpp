// The axes a per-example normalization (LayerNormalization, RMSNormalization)
// normalizes over, resolved against the built input as Keras does: negative
// axes counted from the end, each once and of known size; the parameters
// take the axes' sizes in the order given and broadcast against the input
// through a reshape. Private to core/keras/layers.
#pragma once

#include <accel/keras/layer_shape.hpp>
#include <accel/shape.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace accel::keras::normalized_axes {

struct Resolved {
  std::vector<int32_t> axes;  // non-negative, in the order given
  Shape parameter_shape;      // the axes' sizes
  Shape broadcast_shape;      // 1 everywhere but the axes
};

// The options every such layer takes: InvalidArgumentError naming `layer`
// for no axis or an epsilon that is not positive.
void check_options(const std::vector<int32_t>& axis, double epsilon, const std::string& layer);

// InvalidArgumentError naming `layer` ("LayerNormalization 'ln'") for an axis
// out of range, given twice, or of unknown size.
Resolved resolve(const std::vector<int32_t>& axis, const LayerShape& input_shape, const std::string& layer);

// That `inputs` has the built rank and the axes' built sizes.
void check_input(const Resolved& resolved, const Shape& inputs, const std::string& layer);

}  // namespace accel::keras::normalized_axes
