// Layer (keras.layers.Layer): a callable that owns weights (Variables named
// "<layer>/<weight>:0"), builds them on its first call from the input shape,
// and knows its output shape for summaries.
#pragma once

#include <accel/autodiff/variable.hpp>
#include <accel/keras/initializers.hpp>
#include <accel/tensor.hpp>

#include <optional>
#include <string>
#include <vector>

namespace accel::keras {

// A shape with an unknown batch axis: -1 means None (Keras prints "None").
using LayerShape = std::vector<int64_t>;
inline constexpr int64_t kUnknownDim = -1;
// "(None, 28, 28, 1)", "(None,)" as Python prints the tuple.
std::string format_layer_shape(const LayerShape& shape);

class Layer {
 public:
  // `class_name` as Keras's ("Dense"); an empty `name` gets a unique one from it.
  Layer(std::string class_name, std::string name);
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  // Builds on the first call (from the input's shape), then runs the layer.
  Tensor operator()(const Tensor& inputs, bool training = false);
  // Creates the weights for inputs of `input_shape` (batch axis may be -1).
  void build(const LayerShape& input_shape);

  const std::string& name() const noexcept { return name_; }
  const std::string& class_name() const noexcept { return class_name_; }
  bool built() const noexcept { return built_; }
  // A non-trainable layer lists all its weights as non-trainable.
  bool trainable() const noexcept { return trainable_; }
  void set_trainable(bool trainable) { trainable_ = trainable; }

  // Containers (Sequential) override these to list their layers' weights.
  virtual std::vector<Variable> weights() const;
  virtual std::vector<Variable> trainable_weights() const;
  virtual std::vector<Variable> non_trainable_weights() const;
  int64_t count_params() const;

  // Output shape for `input_shape`; the built layer's output shape.
  virtual LayerShape compute_output_shape(const LayerShape& input_shape) const = 0;
  const LayerShape& output_shape() const;

 protected:
  virtual void build_weights(const LayerShape& /*input_shape*/) {}
  virtual Tensor call(const Tensor& inputs, bool training) = 0;

  // A weight "<layer name>/<name>:0" initialized by `initializer`. Under a
  // strategy, kOnRead weights (moving statistics) are updated per replica and
  // aggregated when read outside the replicas.
  Variable add_weight(const std::string& name, const Shape& shape, const Initializer& initializer,
                      bool trainable = true,
                      VariableSynchronization synchronization = VariableSynchronization::kOnWrite,
                      VariableAggregation aggregation = VariableAggregation::kMean);

 private:
  std::string class_name_;
  std::string name_;
  bool built_ = false;
  bool trainable_ = true;
  LayerShape output_shape_;
  std::vector<Variable> weights_;
};

}  // namespace accel::keras
