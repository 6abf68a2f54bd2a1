// Merge (Keras 2's _Merge): the base of the elementwise merge layers (Add,
// Subtract, Multiply, Average). Called on a list of tensors of one batch
// size; the other axes broadcast as numpy's (an axis of 1 or None takes the
// other's size), as Keras's _compute_elemwise_op_output_shape. No weights.
#pragma once

#include <accel/keras/layer.hpp>

#include <string>
#include <vector>

namespace accel::keras {

class Merge : public Layer {
 public:
  bool takes_list_input() const override { return true; }
  // A merge layer takes a list: InvalidArgumentError, as Keras's ValueError.
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  std::vector<LayerShape> compute_output_shapes(const std::vector<LayerShape>& input_shapes) const override;

 protected:
  Merge(std::string class_name, std::string name) : Layer(std::move(class_name), std::move(name)) {}
  std::vector<Tensor> call_list(const std::vector<Tensor>& inputs, bool training) override;
  // Checks the number of inputs (at least one; Subtract: exactly two).
  virtual void check_input_count(size_t count) const;
  // The merged tensor of the (checked) inputs.
  virtual Tensor merge(const std::vector<Tensor>& inputs) const = 0;
};

}  // namespace accel::keras
