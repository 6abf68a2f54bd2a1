#include <accel/keras/layer.hpp>

#include <accel/error.hpp>
#include <accel/keras/backend.hpp>

namespace accel::keras {

std::string format_layer_shape(const LayerShape& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += shape[i] == kUnknownDim ? "None" : std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";  // Python's one-element tuple
  return text + ")";
}

Layer::Layer(std::string class_name, std::string name)
    : class_name_(std::move(class_name)),
      name_(name.empty() ? unique_layer_name(to_snake_case(class_name_)) : std::move(name)) {}

Tensor Layer::operator()(const Tensor& inputs, bool training) {
  if (!built_) build(LayerShape(inputs.shape().dims().begin(), inputs.shape().dims().end()));
  return call(inputs, training);
}

void Layer::build(const LayerShape& input_shape) {
  if (built_) return;
  LayerShape unknown_batch = input_shape;
  if (!unknown_batch.empty()) unknown_batch[0] = kUnknownDim;
  build_weights(unknown_batch);
  output_shape_ = compute_output_shape(unknown_batch);
  built_ = true;
}

const LayerShape& Layer::output_shape() const {
  if (!built_) {
    throw FailedPreconditionError("layer '" + name_ + "' has no output shape until it is built");
  }
  return output_shape_;
}

Variable Layer::add_weight(const std::string& name, const Shape& shape, const Initializer& initializer,
                           bool trainable, VariableSynchronization synchronization,
                           VariableAggregation aggregation) {
  Variable weight(initializer(shape), name_ + "/" + name, trainable, synchronization, aggregation);
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
