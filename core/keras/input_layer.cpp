// keras::Input and InputLayer: a Functional model's entry tensors.
#include <accel/keras/input_layer.hpp>

#include <accel/error.hpp>
#include <accel/keras/backend.hpp>

namespace accel::keras {
namespace {

// Keras's InputLayer name: "input_" + backend.get_uid("input"), counted from 1.
std::string default_input_name() {
  const std::string name = unique_layer_name("input");
  return name == "input" ? "input_1" : "input_" + std::to_string(std::stoll(name.substr(6)) + 1);
}

}  // namespace

InputLayer::InputLayer(LayerShape batch_shape, DType dtype, std::string name)
    : Layer("InputLayer", name.empty() ? default_input_name() : std::move(name)),
      batch_shape_(std::move(batch_shape)),
      dtype_(dtype) {
  mark_built({batch_shape_});
}

KerasTensor Input(const LayerShape& shape, InputOptions options) {
  for (int64_t size : shape) {
    if (size < 0 && size != kUnknownDim) {
      throw InvalidArgumentError("Input: every axis is a size >= 0 or kUnknownDim, got " + format_layer_shape(shape));
    }
  }
  if (options.batch_size && *options.batch_size <= 0) {
    throw InvalidArgumentError("Input: batch_size must be positive, got " + std::to_string(*options.batch_size));
  }
  LayerShape batch_shape{options.batch_size.value_or(kUnknownDim)};
  batch_shape.insert(batch_shape.end(), shape.begin(), shape.end());
  auto layer = std::make_shared<InputLayer>(batch_shape, options.dtype, std::move(options.name));
  return layer->record_call({}, /*list_input=*/false, {batch_shape}, {options.dtype}).front();
}

}  // namespace accel::keras
