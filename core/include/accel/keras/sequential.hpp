// Sequential (keras.Sequential): a stack of layers, each fed the previous
// one's output. It is a Functional model: building it (explicitly or on the
// first call) makes an Input of that shape and calls the layers on it in
// turn, so it runs, trains, saves and prints its summary() through the same
// graph as Model(inputs, outputs).
#pragma once

#include <accel/keras/layer.hpp>
#include <accel/keras/model.hpp>

#include <memory>
#include <vector>

namespace accel::keras {

class Sequential : public Model {
 public:
  explicit Sequential(std::vector<std::shared_ptr<Layer>> layers = {}, std::string name = "");

  void add(std::shared_ptr<Layer> layer);
  // The name of the InputLayer that building makes (a Keras 3 file's
  // `keras.Input(name=...)`, "input_layer" by default there); unset, Keras 2's
  // "<first layer>_input". Set before the model is built.
  void set_input_name(std::string name) { input_name_ = std::move(name); }
  // The layers as added (Keras leaves the InputLayer out of Sequential.layers).
  const std::vector<std::shared_ptr<Layer>>& layers() const override { return layers_; }

  LayerShape compute_output_shape(const LayerShape& input_shape) const override;

 protected:
  // Makes the graph: Input(input_shape), then each layer called on the last output.
  void build_weights(const LayerShape& input_shape) override;

 private:
  std::vector<std::shared_ptr<Layer>> layers_;
  std::string input_name_;
};

}  // namespace accel::keras
