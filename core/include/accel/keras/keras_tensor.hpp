// KerasTensor and Node (Keras 2's KerasTensor and Node): the symbolic side of
// the Functional API. Calling a layer on KerasTensors builds it from their
// shapes and records the call as a Node (the layer, its input KerasTensors,
// the shapes of its outputs); each output KerasTensor points back at that
// Node (Keras's _keras_history), so the outputs of a model lead back through
// the Nodes to its inputs, and Model(inputs, outputs) reads the graph from them.
//
//   keras::KerasTensor inputs = keras::Input({28, 28, 1});
//   keras::KerasTensor x = (*std::make_shared<keras::Conv2D>(32, 3))(inputs);
//   keras::Model model(inputs, x);
#pragma once

#include <accel/dtype.hpp>
#include <accel/keras/layer_shape.hpp>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace accel::keras {

class Layer;
class Node;

class KerasTensor {
 public:
  KerasTensor() = default;

  bool defined() const noexcept { return node_ != nullptr; }
  // With the batch axis: kUnknownDim unless Input was given a batch_size.
  const LayerShape& shape() const noexcept { return shape_; }
  DType dtype() const noexcept { return dtype_; }
  // The call that produced this tensor, and which of its outputs it is.
  const std::shared_ptr<Node>& node() const noexcept { return node_; }
  size_t tensor_index() const noexcept { return tensor_index_; }
  // The layer whose call produced it (an InputLayer for keras::Input).
  Layer& layer() const;
  // "KerasTensor(shape=(None, 10), dtype=float32, created by layer 'dense')".
  std::string to_string() const;

 private:
  friend class Layer;
  KerasTensor(std::shared_ptr<Node> node, size_t tensor_index, LayerShape shape, DType dtype);

  std::shared_ptr<Node> node_;
  size_t tensor_index_ = 0;
  LayerShape shape_;
  DType dtype_ = DType::kFloat32;
};

// One call of a layer on KerasTensors. The node keeps its layer alive; the
// layer lists its nodes weakly (Layer::inbound_nodes), so a graph lives as
// long as some tensor or model refers to it.
class Node {
 public:
  Node(std::shared_ptr<Layer> layer, std::vector<KerasTensor> inputs, bool list_input,
       std::vector<LayerShape> output_shapes, std::vector<DType> output_dtypes, size_t index);

  Layer& layer() const noexcept { return *layer_; }
  const std::shared_ptr<Layer>& layer_pointer() const noexcept { return layer_; }
  // The KerasTensors the layer was called on (none for an InputLayer's node).
  const std::vector<KerasTensor>& inputs() const noexcept { return inputs_; }
  // Whether the layer was called on a list (a merge layer, a model of
  // several inputs) rather than on one tensor: how the graph calls it again.
  bool list_input() const noexcept { return list_input_; }
  bool is_input() const noexcept { return inputs_.empty(); }
  // The position of this call among the layer's calls: the n of "dense[n][0]"
  // in summary()'s "Connected to".
  size_t index() const noexcept { return index_; }
  const std::vector<LayerShape>& output_shapes() const noexcept { return output_shapes_; }
  const std::vector<DType>& output_dtypes() const noexcept { return output_dtypes_; }

 private:
  std::shared_ptr<Layer> layer_;
  std::vector<KerasTensor> inputs_;
  bool list_input_;
  std::vector<LayerShape> output_shapes_;
  std::vector<DType> output_dtypes_;
  size_t index_;
};

// The inputs or outputs of Model(inputs, outputs): one KerasTensor or a list,
// as Keras takes a tensor or a list. A model built from one output tensor
// returns a Tensor from predict; one built from a list returns a list.
struct KerasTensors {
  KerasTensors(KerasTensor tensor) : tensors{std::move(tensor)}, single(true) {}  // NOLINT: implicit, as Keras
  KerasTensors(std::initializer_list<KerasTensor> list) : tensors(list), single(false) {}
  KerasTensors(std::vector<KerasTensor> list) : tensors(std::move(list)), single(false) {}  // NOLINT

  std::vector<KerasTensor> tensors;
  bool single;
};

}  // namespace accel::keras
