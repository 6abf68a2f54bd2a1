// keras::Input and InputLayer (keras.Input, keras.layers.InputLayer): the
// entry points of a Functional model. Input(shape) makes an InputLayer and
// returns its KerasTensor, whose shape is (batch, *shape) with the batch axis
// unknown unless batch_size is given.
#pragma once

#include <accel/keras/keras_tensor.hpp>
#include <accel/keras/layer.hpp>

#include <optional>
#include <string>

namespace accel::keras {

struct InputOptions {
  std::optional<int64_t> batch_size;
  // Empty: Keras's "input_1", "input_2", ... (counted from 1, as Keras's get_uid).
  std::string name;
  DType dtype = DType::kFloat32;
};

// `shape` without the batch axis; kUnknownDim for an axis of any size.
KerasTensor Input(const LayerShape& shape, InputOptions options = {});

class InputLayer final : public Layer {
 public:
  // `batch_shape` includes the batch axis.
  InputLayer(LayerShape batch_shape, DType dtype, std::string name = "");

  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }
  const LayerShape& batch_shape() const noexcept { return batch_shape_; }
  DType dtype() const noexcept { return dtype_; }

 protected:
  Tensor call(const Tensor& inputs, bool /*training*/) override { return inputs; }

 private:
  // Input() records the layer's one node (it holds no tensor of its own: the
  // node keeps the layer alive, not the other way round).
  friend KerasTensor Input(const LayerShape& shape, InputOptions options);

  LayerShape batch_shape_;
  DType dtype_;
};

}  // namespace accel::keras
