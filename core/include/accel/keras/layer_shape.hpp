// LayerShape: a Keras shape whose batch axis (or any axis) may be unknown,
// shared by layers and the symbolic tensors of the Functional API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace accel::keras {

// A shape with an unknown batch axis: -1 means None (Keras prints "None").
using LayerShape = std::vector<int64_t>;
inline constexpr int64_t kUnknownDim = -1;
// "(None, 28, 28, 1)", "(None,)" as Python prints the tuple.
std::string format_layer_shape(const LayerShape& shape);
// "[(None, 4), (None, 8)]": the shapes of a layer's several inputs.
std::string format_layer_shapes(const std::vector<LayerShape>& shapes);

}  // namespace accel::keras
