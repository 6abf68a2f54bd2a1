// Sequential: its layers as a Functional graph, made at build.
#include <accel/keras/sequential.hpp>

#include <accel/error.hpp>
#include <accel/keras/input_layer.hpp>

namespace accel::keras {

Sequential::Sequential(std::vector<std::shared_ptr<Layer>> layers, std::string name)
    : Model("Sequential", std::move(name)) {
  check_input_shapes_ = false;
  for (auto& layer : layers) add(std::move(layer));
}

void Sequential::add(std::shared_ptr<Layer> layer) {
  if (!layer) throw InvalidArgumentError("Sequential '" + name() + "': cannot add a null layer");
  if (built()) throw FailedPreconditionError("Sequential '" + name() + "': cannot add layers once built");
  layers_.push_back(std::move(layer));
}

LayerShape Sequential::compute_output_shape(const LayerShape& input_shape) const {
  LayerShape shape = input_shape;
  for (const auto& layer : layers_) shape = layer->compute_output_shape(shape);
  return shape;
}

void Sequential::build_weights(const LayerShape& input_shape) {
  if (input_shape.empty()) {
    throw InvalidArgumentError("Sequential '" + name() + "': the input shape needs a batch axis, got ()");
  }
  // Keras 2 names the input of a Sequential "<first layer>_input".
  const std::string input_name =
      !input_name_.empty() ? input_name_ : (layers_.empty() ? name() : layers_.front()->name()) + "_input";
  const KerasTensor inputs =
      Input(LayerShape(input_shape.begin() + 1, input_shape.end()), InputOptions{.name = input_name});
  KerasTensor outputs = inputs;
  for (const auto& layer : layers_) outputs = (*layer)(outputs);
  init_graph_network(inputs, outputs);
}

}  // namespace accel::keras
