// KerasTensor and Node: the records of symbolic calls (keras_tensor.hpp).
#include <accel/keras/keras_tensor.hpp>

#include <accel/keras/layer.hpp>

namespace accel::keras {

KerasTensor::KerasTensor(std::shared_ptr<Node> node, size_t tensor_index, LayerShape shape, DType dtype)
    : node_(std::move(node)), tensor_index_(tensor_index), shape_(std::move(shape)), dtype_(dtype) {}

Layer& KerasTensor::layer() const { return node_->layer(); }

std::string KerasTensor::to_string() const {
  if (!defined()) return "KerasTensor(undefined)";
  return "KerasTensor(shape=" + format_layer_shape(shape_) + ", dtype=" + std::string(dtype_name(dtype_)) +
         ", created by layer '" + layer().name() + "')";
}

Node::Node(std::shared_ptr<Layer> layer, std::vector<KerasTensor> inputs, bool list_input,
           std::vector<LayerShape> output_shapes, std::vector<DType> output_dtypes, size_t index)
    : layer_(std::move(layer)),
      inputs_(std::move(inputs)),
      list_input_(list_input),
      output_shapes_(std::move(output_shapes)),
      output_dtypes_(std::move(output_dtypes)),
      index_(index) {}

}  // namespace accel::keras
