// Model as a Functional model: construction from symbolic inputs and outputs,
// running its graph on tensors, its layers and weights in Keras's order.
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/model.hpp>

#include "functional_graph.hpp"
#include "runtime/step_region.hpp"

#include <map>
#include <set>

namespace accel::keras {
namespace {

const std::vector<std::shared_ptr<Layer>>& no_layers() {
  static const std::vector<std::shared_ptr<Layer>> empty;
  return empty;
}

const std::vector<KerasTensor>& no_tensors() {
  static const std::vector<KerasTensor> empty;
  return empty;
}

// Keras's input_spec check: the rank and every known axis must agree.
void check_input_shape(const Tensor& value, const KerasTensor& input, const std::string& model_name, size_t index) {
  const LayerShape& expected = input.shape();
  bool compatible = value.rank() == static_cast<int32_t>(expected.size());
  for (size_t axis = 0; compatible && axis < expected.size(); ++axis) {
    compatible = expected[axis] == kUnknownDim || expected[axis] == value.shape().dim(static_cast<int32_t>(axis));
  }
  if (!compatible) {
    throw InvalidArgumentError("Model '" + model_name + "': input " + std::to_string(index) + " ('" +
                               input.layer().name() + "') expects shape " + format_layer_shape(expected) +
                               ", got " + value.shape().to_string());
  }
}

}  // namespace

Model::Model(KerasTensors inputs, KerasTensors outputs, std::string name)
    : Layer("Functional", name.empty() ? unique_layer_name("model") : std::move(name)) {
  set_autocast(false);  // Keras's Functional leaves its inputs as given; each layer casts for itself
  init_graph_network(std::move(inputs), std::move(outputs));
}

void Model::init_graph_network(KerasTensors inputs, KerasTensors outputs) {
  graph_ = std::make_shared<const detail::FunctionalGraph>(std::move(inputs), std::move(outputs), name());
  // The outputs' shapes as the symbolic calls gave them (a batch size only
  // where an Input fixed one), as Keras's model.output_shape.
  std::vector<LayerShape> shapes;
  for (const KerasTensor& output : graph_->outputs()) shapes.push_back(output.shape());
  mark_built(std::move(shapes));
}

const std::vector<std::shared_ptr<Layer>>& Model::layers() const { return graph_ ? graph_->layers() : no_layers(); }
const std::vector<KerasTensor>& Model::inputs() const { return graph_ ? graph_->inputs() : no_tensors(); }
const std::vector<KerasTensor>& Model::outputs() const { return graph_ ? graph_->outputs() : no_tensors(); }

std::shared_ptr<Layer> Model::get_layer(const std::string& layer_name) const {
  std::string names;
  for (const auto& layer : layers()) {
    if (layer->name() == layer_name) return layer;
    names += (names.empty() ? "'" : ", '") + layer->name() + "'";
  }
  throw InvalidArgumentError("No such layer: " + layer_name + ". Existing layers are: [" + names + "]");
}

bool Model::takes_list_input() const { return graph_ != nullptr && !graph_->single_input(); }

Tensor Model::call(const Tensor& inputs, bool training) {
  std::vector<Tensor> outputs = call_list({inputs}, training);
  if (outputs.size() != 1) {
    throw InvalidArgumentError("Model '" + name() + "' has " + std::to_string(outputs.size()) +
                               " outputs; call_outputs returns them all");
  }
  return std::move(outputs.front());
}

std::vector<Tensor> Model::call_list(const std::vector<Tensor>& inputs, bool training) {
  if (!graph_) {
    throw UnimplementedError("Model '" + name() + "' (" + class_name() +
                             ") has no graph: a subclassed model overrides call()");
  }
  if (inputs.size() != graph_->inputs().size()) {
    throw InvalidArgumentError("Model '" + name() + "' expects " + std::to_string(graph_->inputs().size()) +
                               " inputs, got " + std::to_string(inputs.size()));
  }
  for (size_t index = 0; check_input_shapes_ && index < inputs.size(); ++index) {
    check_input_shape(inputs[index], graph_->inputs()[index], name(), index);
  }
  // Each layer call is a region of the step (rematerialization's unit), or
  // each block of them (CompileOptions::remat_blocks).
  std::map<int32_t, accel::detail::StepRegion> block_regions;
  return graph_->evaluate<Tensor>(inputs, [&, training](const Node& node, const std::vector<Tensor>& arguments) {
    Layer& layer = node.layer();
    accel::detail::StepRegion call_region;
    if (const auto block = remat_block_of_.find(&layer); block != remat_block_of_.end()) {
      auto [opened, added] = block_regions.try_emplace(block->second);
      if (added) {
        opened->second = accel::detail::StepRegionScope::next_layer_call();
        opened->second.block = true;
      }
      call_region = opened->second;
    } else {
      call_region = accel::detail::StepRegionScope::next_layer_call();
    }
    const accel::detail::StepRegionScope region(call_region);
    // One tensor in, one out: the same call as a plain chain of layers makes.
    if (!node.list_input() && node.output_shapes().size() == 1) return std::vector<Tensor>{layer(arguments.front(), training)};
    return layer.call_outputs(arguments, training);
  });
}

LayerShape Model::compute_output_shape(const LayerShape& input_shape) const {
  std::vector<LayerShape> shapes = compute_output_shapes({input_shape});
  if (shapes.size() != 1) {
    throw InvalidArgumentError("Model '" + name() + "' has " + std::to_string(shapes.size()) +
                               " outputs; compute_output_shapes lists them");
  }
  return std::move(shapes.front());
}

std::vector<LayerShape> Model::compute_output_shapes(const std::vector<LayerShape>& input_shapes) const {
  if (!graph_) {
    throw UnimplementedError("Model '" + name() + "' (" + class_name() +
                             ") has no graph: a subclassed model overrides compute_output_shape()");
  }
  if (input_shapes.size() != graph_->inputs().size()) {
    throw InvalidArgumentError("Model '" + name() + "' expects " + std::to_string(graph_->inputs().size()) +
                               " inputs, got " + std::to_string(input_shapes.size()));
  }
  return graph_->evaluate<LayerShape>(input_shapes, [](const Node& node, const std::vector<LayerShape>& arguments) {
    return node.layer().compute_output_shapes(arguments);
  });
}

std::vector<DType> Model::compute_output_dtypes(const std::vector<DType>& input_dtypes) const {
  if (!graph_) return Layer::compute_output_dtypes(input_dtypes);
  std::vector<DType> dtypes;
  for (const KerasTensor& output : graph_->outputs()) dtypes.push_back(output.dtype());
  return dtypes;
}

// Keras lists each layer's weights in the order of model.layers, then the
// model's own (add_weight in a subclass); a weight reached twice, once.
std::vector<Variable> Model::weights() const {
  std::vector<Variable> all;
  std::set<std::string> seen;
  auto add = [&](const std::vector<Variable>& weights) {
    for (const Variable& weight : weights) {
      if (seen.insert(weight.name()).second) all.push_back(weight);
    }
  };
  for (const auto& layer : layers()) add(layer->weights());
  add(Layer::weights());
  return all;
}

std::vector<Variable> Model::trainable_weights() const {
  if (!trainable()) return {};
  std::vector<Variable> all;
  std::set<std::string> seen;
  auto add = [&](const std::vector<Variable>& weights) {
    for (const Variable& weight : weights) {
      if (seen.insert(weight.name()).second) all.push_back(weight);
    }
  };
  for (const auto& layer : layers()) add(layer->trainable_weights());
  for (const Variable& weight : Layer::weights()) {  // the model's own
    if (weight.trainable() && seen.insert(weight.name()).second) all.push_back(weight);
  }
  return all;
}

std::vector<Variable> Model::non_trainable_weights() const {
  if (!trainable()) return weights();
  std::vector<Variable> all;
  std::set<std::string> seen;
  auto add = [&](const std::vector<Variable>& weights) {
    for (const Variable& weight : weights) {
      if (seen.insert(weight.name()).second) all.push_back(weight);
    }
  };
  for (const auto& layer : layers()) add(layer->non_trainable_weights());
  for (const Variable& weight : Layer::weights()) {  // the model's own
    if (!weight.trainable() && seen.insert(weight.name()).second) all.push_back(weight);
  }
  return all;
}

}  // namespace accel::keras
