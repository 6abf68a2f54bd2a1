// Layer: building on the first call, the eager calls (one tensor or a list),
// the symbolic calls that record Nodes, and the weights' bookkeeping.
#include <accel/keras/layer.hpp>

#include <accel/autodiff/variable_autocast.hpp>
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/ops.hpp>

#include "utils/cast_to.hpp"

namespace accel::keras {
namespace {

LayerShape shape_of(const Tensor& tensor) { return LayerShape(tensor.shape().dims().begin(), tensor.shape().dims().end()); }

LayerShape with_unknown_batch(LayerShape shape) {
  if (!shape.empty()) shape[0] = kUnknownDim;
  return shape;
}

// Inside a call, float weights read in the compute dtype (or as stored when
// the layer does not autocast), whatever scope an enclosing layer opened.
std::optional<DType> weight_read_dtype(const Layer& layer) {
  return layer.autocast() ? std::optional<DType>(layer.compute_dtype()) : std::nullopt;
}

}  // namespace

std::string format_layer_shape(const LayerShape& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += shape[i] == kUnknownDim ? "None" : std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";  // Python's one-element tuple
  return text + ")";
}

std::string format_layer_shapes(const std::vector<LayerShape>& shapes) {
  std::string text = "[";
  for (size_t index = 0; index < shapes.size(); ++index) text += (index > 0 ? ", " : "") + format_layer_shape(shapes[index]);
  return text + "]";
}

Layer::Layer(std::string class_name, std::string name)
    : class_name_(std::move(class_name)),
      name_(name.empty() ? unique_layer_name(to_snake_case(class_name_)) : std::move(name)),
      dtype_policy_(mixed_precision::global_policy()) {
  // Keras 3's rule: '/' separates a weight's scopes ("conv1/kernel:0").
  if (name_.find('/') != std::string::npos) {
    throw InvalidArgumentError(class_name_ + ": the name '" + name_ +
                               "' contains '/', which Keras refuses in a layer's name ('/' separates a weight's "
                               "scopes, as in 'conv1/kernel:0')");
  }
}

void Layer::set_dtype_policy(const DTypePolicy& policy) {
  if (!weights_.empty() && !(policy == dtype_policy_)) {
    throw FailedPreconditionError("layer '" + name_ + "' has made its weights under dtype policy '" +
                                  dtype_policy_.name() + "'; its policy ('" + policy.name() +
                                  "' asked) can only be set before it is built");
  }
  dtype_policy_ = policy;
}

Tensor Layer::autocast_input(const Tensor& inputs) const {
  if (!autocast_ || !inputs.defined() || !is_floating(inputs.dtype())) return inputs;
  return detail::cast_to(inputs, compute_dtype());
}

Tensor Layer::operator()(const Tensor& inputs, bool training) {
  if (takes_list_input()) {
    throw InvalidArgumentError(class_name_ + " layer '" + name_ + "' must be called on a list of inputs");
  }
  if (!built_) build(shape_of(inputs));
  VariableAutocastScope weights_in_compute_dtype(weight_read_dtype(*this));
  return call(autocast_input(inputs), training);
}

Tensor Layer::operator()(const std::vector<Tensor>& inputs, bool training) {
  std::vector<Tensor> outputs = call_outputs(inputs, training);
  if (outputs.size() != 1) {
    throw InvalidArgumentError("layer '" + name_ + "' has " + std::to_string(outputs.size()) +
                               " outputs; call_outputs returns them all");
  }
  return std::move(outputs.front());
}

std::vector<Tensor> Layer::call_outputs(const std::vector<Tensor>& inputs, bool training) {
  if (!built_) {
    std::vector<LayerShape> shapes;
    for (const Tensor& input : inputs) shapes.push_back(shape_of(input));
    build_for_list(shapes);
  }
  std::vector<Tensor> cast_inputs;
  cast_inputs.reserve(inputs.size());
  for (const Tensor& input : inputs) cast_inputs.push_back(autocast_input(input));
  VariableAutocastScope weights_in_compute_dtype(weight_read_dtype(*this));
  return call_list(cast_inputs, training);
}

Tensor Layer::call(const Tensor&, bool) {
  throw InvalidArgumentError(class_name_ + " layer '" + name_ + "' must be called on a list of inputs");
}

std::vector<Tensor> Layer::call_list(const std::vector<Tensor>& inputs, bool training) {
  if (inputs.size() != 1) {
    throw InvalidArgumentError(class_name_ + " layer '" + name_ + "' takes one input, got a list of " +
                               std::to_string(inputs.size()));
  }
  return {call(inputs.front(), training)};
}

KerasTensor Layer::operator()(const KerasTensor& inputs) {
  if (takes_list_input()) {
    throw InvalidArgumentError(class_name_ + " layer '" + name_ + "' must be called on a list of inputs");
  }
  if (!inputs.defined()) throw InvalidArgumentError("layer '" + name_ + "' called on an undefined KerasTensor");
  if (!built_) build(inputs.shape());
  return record_call({inputs}, /*list_input=*/false, compute_output_shapes({inputs.shape()}),
                     compute_output_dtypes({inputs.dtype()}))
      .front();
}

KerasTensor Layer::operator()(const std::vector<KerasTensor>& inputs) {
  std::vector<KerasTensor> outputs = call_outputs(inputs);
  if (outputs.size() != 1) {
    throw InvalidArgumentError("layer '" + name_ + "' has " + std::to_string(outputs.size()) +
                               " outputs; call_outputs returns them all");
  }
  return std::move(outputs.front());
}

std::vector<KerasTensor> Layer::call_outputs(const std::vector<KerasTensor>& inputs) {
  std::vector<LayerShape> shapes;
  std::vector<DType> dtypes;
  for (const KerasTensor& input : inputs) {
    if (!input.defined()) throw InvalidArgumentError("layer '" + name_ + "' called on an undefined KerasTensor");
    shapes.push_back(input.shape());
    dtypes.push_back(input.dtype());
  }
  if (!built_) build_for_list(shapes);
  return record_call(inputs, /*list_input=*/true, compute_output_shapes(shapes), compute_output_dtypes(dtypes));
}

std::vector<KerasTensor> Layer::record_call(std::vector<KerasTensor> inputs, bool list_input,
                                            std::vector<LayerShape> output_shapes,
                                            std::vector<DType> output_dtypes) {
  std::shared_ptr<Layer> self = weak_from_this().lock();
  if (!self) {
    throw FailedPreconditionError("layer '" + name_ +
                                  "' was called on KerasTensors but is not held by a std::shared_ptr; make it "
                                  "with std::make_shared so that the model's graph can keep it");
  }
  const std::vector<LayerShape> shapes = output_shapes;
  const std::vector<DType> dtypes = output_dtypes;
  auto node = std::make_shared<Node>(std::move(self), std::move(inputs), list_input, std::move(output_shapes),
                                     std::move(output_dtypes), calls_recorded_++);
  inbound_nodes_.push_back(node);
  std::vector<KerasTensor> outputs;
  for (size_t index = 0; index < shapes.size(); ++index) outputs.push_back(KerasTensor(node, index, shapes[index], dtypes[index]));
  return outputs;
}

std::vector<std::shared_ptr<Node>> Layer::inbound_nodes() const {
  std::vector<std::shared_ptr<Node>> alive;
  for (const std::weak_ptr<Node>& node : inbound_nodes_) {
    if (std::shared_ptr<Node> locked = node.lock()) alive.push_back(std::move(locked));
  }
  return alive;
}

std::vector<LayerShape> Layer::compute_output_shapes(const std::vector<LayerShape>& input_shapes) const {
  if (input_shapes.size() != 1) {
    throw InvalidArgumentError(class_name_ + " layer '" + name_ + "' takes one input, got a list of " +
                               std::to_string(input_shapes.size()));
  }
  return {compute_output_shape(input_shapes.front())};
}

std::vector<DType> Layer::compute_output_dtypes(const std::vector<DType>&) const {
  return std::vector<DType>(built_ ? output_shapes_.size() : 1, compute_dtype());
}

void Layer::build(const LayerShape& input_shape) {
  if (built_) return;
  const LayerShape unknown_batch = with_unknown_batch(input_shape);
  build_weights(unknown_batch);
  output_shapes_ = {compute_output_shape(unknown_batch)};
  built_ = true;
}

void Layer::build_for_list(const std::vector<LayerShape>& input_shapes) {
  if (!takes_list_input() && input_shapes.size() == 1) {
    build(input_shapes.front());
    return;
  }
  std::vector<LayerShape> unknown_batch;
  for (const LayerShape& shape : input_shapes) unknown_batch.push_back(with_unknown_batch(shape));
  build_weights_for_list(unknown_batch);
  mark_built(compute_output_shapes(unknown_batch));
}

void Layer::mark_built(std::vector<LayerShape> output_shapes) {
  output_shapes_ = std::move(output_shapes);
  built_ = true;
}

const LayerShape& Layer::output_shape() const {
  const std::vector<LayerShape>& shapes = output_shapes();
  if (shapes.size() != 1) {
    throw InvalidArgumentError("layer '" + name_ + "' has " + std::to_string(shapes.size()) +
                               " outputs; output_shapes() lists them");
  }
  return shapes.front();
}

const std::vector<LayerShape>& Layer::output_shapes() const {
  if (!built_) {
    throw FailedPreconditionError("layer '" + name_ + "' has no output shape until it is built");
  }
  return output_shapes_;
}

Variable Layer::add_weight(const std::string& name, const Shape& shape, const Initializer& initializer,
                           bool trainable, VariableSynchronization synchronization,
                           VariableAggregation aggregation) {
  Tensor initial_value = initializer(shape);
  if (is_floating(initial_value.dtype()) && initial_value.dtype() != variable_dtype()) {
    initial_value = ops::cast(initial_value, variable_dtype());
  }
  Variable weight(initial_value, name_ + "/" + name, trainable, synchronization, aggregation);
  weights_.push_back(weight);
  return weight;
}

std::vector<Variable> Layer::weights() const { return weights_; }

std::vector<Variable> Layer::trainable_weights() const {
  if (!trainable_) return {};
  std::vector<Variable> trainable;
  for (const Variable& weight : weights()) {
    if (weight.trainable()) trainable.push_back(weight);
  }
  return trainable;
}

std::vector<Variable> Layer::non_trainable_weights() const {
  std::vector<Variable> frozen;
  for (const Variable& weight : weights()) {
    if (!trainable_ || !weight.trainable()) frozen.push_back(weight);
  }
  return frozen;
}

int64_t Layer::count_params() const {
  int64_t count = 0;
  for (const Variable& weight : weights()) count += weight.shape().element_count();
  return count;
}

}  // namespace accel::keras
