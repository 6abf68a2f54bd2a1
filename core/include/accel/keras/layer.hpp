// Layer (keras.layers.Layer): a callable that owns weights (Variables named
// "<layer>/<weight>:0"), builds them on its first call from the input shape,
// and knows its output shape for summaries. Called on Tensors it computes;
// called on KerasTensors (the Functional API, keras_tensor.hpp) it builds
// from their shapes and records the call as a Node of a graph.
#pragma once

#include <accel/autodiff/variable.hpp>
#include <accel/keras/initializers.hpp>
#include <accel/keras/keras_tensor.hpp>
#include <accel/keras/layer_shape.hpp>
#include <accel/keras/mixed_precision.hpp>
#include <accel/tensor.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace accel::keras {

class Layer : public std::enable_shared_from_this<Layer> {
 public:
  // `class_name` as Keras's ("Dense"); an empty `name` gets a unique one from it.
  Layer(std::string class_name, std::string name);
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  // Builds on the first call (from the input's shape), then runs the layer.
  Tensor operator()(const Tensor& inputs, bool training = false);
  // A layer that takes a list (merge layers, models of several inputs); one output.
  Tensor operator()(const std::vector<Tensor>& inputs, bool training = false);
  // Every output (a model of several outputs gives one tensor each).
  std::vector<Tensor> call_outputs(const std::vector<Tensor>& inputs, bool training = false);

  // The Functional API: builds the layer from the symbolic inputs' shapes (if
  // not built) and records the call; returns the symbolic outputs. The layer
  // must be held by a std::shared_ptr (the graph keeps it alive).
  KerasTensor operator()(const KerasTensor& inputs);
  KerasTensor operator()(const std::vector<KerasTensor>& inputs);
  std::vector<KerasTensor> call_outputs(const std::vector<KerasTensor>& inputs);
  // The recorded calls still part of some graph, in call order (Keras's _inbound_nodes).
  std::vector<std::shared_ptr<Node>> inbound_nodes() const;

  // Creates the weights for inputs of `input_shape` (batch axis may be -1).
  void build(const LayerShape& input_shape);

  const std::string& name() const noexcept { return name_; }
  const std::string& class_name() const noexcept { return class_name_; }
  bool built() const noexcept { return built_; }
  // A non-trainable layer lists all its weights as non-trainable.
  bool trainable() const noexcept { return trainable_; }
  void set_trainable(bool trainable) { trainable_ = trainable; }

  // The layer's dtype policy (Keras's dtype_policy, mixed_precision.hpp): the
  // global policy when the layer was made, unless set before it is built
  // (Keras's `dtype=` argument; "float32" for the usual last layer of a
  // mixed-precision model). Changing it once the layer has made weights is
  // FailedPrecondition.
  const DTypePolicy& dtype_policy() const noexcept { return dtype_policy_; }
  void set_dtype_policy(const DTypePolicy& policy);
  DType compute_dtype() const noexcept { return dtype_policy_.compute_dtype(); }
  DType variable_dtype() const noexcept { return dtype_policy_.variable_dtype(); }
  // Whether a call casts float inputs and reads float weights in the compute
  // dtype (Keras's autocast): true but for LayerNormalization and Embedding,
  // which read their weights as stored and cast their outputs themselves, and
  // for models, which leave their inputs to their layers.
  bool autocast() const noexcept { return autocast_; }

  // Containers (models) override these to list their layers' weights.
  virtual std::vector<Variable> weights() const;
  virtual std::vector<Variable> trainable_weights() const;
  virtual std::vector<Variable> non_trainable_weights() const;
  int64_t count_params() const;

  // Output shape for `input_shape`; the built layer's output shape.
  virtual LayerShape compute_output_shape(const LayerShape& input_shape) const = 0;
  const LayerShape& output_shape() const;
  // Layers of several inputs or outputs: the output shapes for these inputs
  // (by default the one output of compute_output_shape on the one input).
  virtual std::vector<LayerShape> compute_output_shapes(const std::vector<LayerShape>& input_shapes) const;
  // The built layer's output shapes (one per output).
  const std::vector<LayerShape>& output_shapes() const;
  // True for layers called on a list of tensors (merge layers).
  virtual bool takes_list_input() const { return false; }

 protected:
  virtual void build_weights(const LayerShape& /*input_shape*/) {}
  // A layer called on a list that owns weights (MultiHeadAttention) creates
  // them here on its first list call, from the inputs' shapes (batch unknown).
  virtual void build_weights_for_list(const std::vector<LayerShape>& /*input_shapes*/) {}
  // A layer of one input and one output implements call; a layer called on a
  // list implements call_list (whose default calls call on the one input).
  virtual Tensor call(const Tensor& inputs, bool training);
  virtual std::vector<Tensor> call_list(const std::vector<Tensor>& inputs, bool training);
  // The dtypes of the outputs of a symbolic call: the compute dtype, one per output.
  virtual std::vector<DType> compute_output_dtypes(const std::vector<DType>& input_dtypes) const;
  // Layers that manage their own dtypes (LayerNormalization, Embedding) and
  // models turn autocast off.
  void set_autocast(bool autocast) noexcept { autocast_ = autocast; }
  // For layers that build themselves other than from one input shape (a
  // Functional model at construction, a merge layer from its list).
  void mark_built(std::vector<LayerShape> output_shapes);

  // A weight "<layer name>/<name>:0" initialized by `initializer`, stored in
  // the policy's variable dtype when it is a float weight. Under a
  // strategy, kOnRead weights (moving statistics) are updated per replica and
  // aggregated when read outside the replicas.
  Variable add_weight(const std::string& name, const Shape& shape, const Initializer& initializer,
                      bool trainable = true,
                      VariableSynchronization synchronization = VariableSynchronization::kOnWrite,
                      VariableAggregation aggregation = VariableAggregation::kMean);
  // Float `inputs` cast to the compute dtype when the layer autocasts; others as they are.
  Tensor autocast_input(const Tensor& inputs) const;

  // Records one symbolic call of this layer and returns its output tensors.
  std::vector<KerasTensor> record_call(std::vector<KerasTensor> inputs, bool list_input,
                                       std::vector<LayerShape> output_shapes, std::vector<DType> output_dtypes);

 private:
  void build_for_list(const std::vector<LayerShape>& input_shapes);

  std::string class_name_;
  std::string name_;
  bool built_ = false;
  bool trainable_ = true;
  DTypePolicy dtype_policy_;
  bool autocast_ = true;
  std::vector<LayerShape> output_shapes_;
  std::vector<Variable> weights_;
  std::vector<std::weak_ptr<Node>> inbound_nodes_;
  size_t calls_recorded_ = 0;
};

}  // namespace accel::keras
