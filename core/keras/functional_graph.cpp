// FunctionalGraph: Keras 2's _map_graph_network, step for step, so that the
// layers (and with them the weights) come in Keras's order and the nodes run
// in Keras's order.
#include "functional_graph.hpp"

#include <algorithm>

namespace accel::keras::detail {
namespace {

// A Python dict of depths: remembers the order keys were first set in.
template <typename Key>
class OrderedDepths {
 public:
  bool contains(Key key) const { return depths_.count(key) > 0; }
  int get(Key key, int fallback) const {
    auto found = depths_.find(key);
    return found == depths_.end() ? fallback : found->second;
  }
  void set(Key key, int depth) {
    if (depths_.emplace(key, depth).second) {
      order_.push_back(key);
    } else {
      depths_[key] = depth;
    }
  }
  const std::vector<Key>& order() const noexcept { return order_; }

 private:
  std::map<Key, int> depths_;
  std::vector<Key> order_;
};

struct Traversal {
  std::set<const Node*> finished;
  std::set<const Node*> in_progress;
  std::vector<std::shared_ptr<Node>> nodes_in_decreasing_depth;  // inputs first
  std::map<const Layer*, int> layer_indices;                     // first visit, from the outputs
};

// Keras's _build_map_helper: depth-first from an output back to the inputs.
void visit(const KerasTensor& tensor, Traversal& traversal) {
  const std::shared_ptr<Node>& node = tensor.node();
  if (traversal.finished.count(node.get()) > 0) return;
  if (traversal.in_progress.count(node.get()) > 0) {
    throw InvalidArgumentError("Functional model: the graph has a cycle at layer '" + node->layer().name() + "'");
  }
  traversal.layer_indices.emplace(&node->layer(), static_cast<int>(traversal.layer_indices.size()));
  traversal.in_progress.insert(node.get());
  for (const KerasTensor& input : node->inputs()) visit(input, traversal);
  traversal.finished.insert(node.get());
  traversal.in_progress.erase(node.get());
  traversal.nodes_in_decreasing_depth.push_back(node);
}

}  // namespace

FunctionalGraph::FunctionalGraph(KerasTensors inputs, KerasTensors outputs, const std::string& model_name)
    : inputs_(std::move(inputs.tensors)),
      outputs_(std::move(outputs.tensors)),
      single_input_(inputs.single),
      single_output_(outputs.single) {
  const std::string where = "Functional model '" + model_name + "': ";
  if (inputs_.empty()) throw InvalidArgumentError(where + "needs at least one input");
  if (outputs_.empty()) throw InvalidArgumentError(where + "needs at least one output");
  for (const KerasTensor& input : inputs_) {
    if (!input.defined() || !input.node()->is_input()) {
      throw InvalidArgumentError(where + "every input must be a tensor of keras::Input, got " + input.to_string());
    }
  }
  for (const KerasTensor& output : outputs_) {
    if (!output.defined()) throw InvalidArgumentError(where + "an output is an undefined KerasTensor");
  }

  Traversal traversal;
  for (const KerasTensor& output : outputs_) visit(output, traversal);

  std::map<const Node*, std::shared_ptr<Node>> node_pointers;
  std::map<const Layer*, std::shared_ptr<Layer>> layer_pointers;
  for (const auto& node : traversal.nodes_in_decreasing_depth) {
    node_pointers[node.get()] = node;
    layer_pointers[&node->layer()] = node->layer_pointer();
  }

  // The depth of a node is the number of layers between it and an output; a
  // shared layer takes its deepest node's depth.
  OrderedDepths<const Node*> node_depths;
  OrderedDepths<const Layer*> layer_depths;
  for (auto node = traversal.nodes_in_decreasing_depth.rbegin(); node != traversal.nodes_in_decreasing_depth.rend();
       ++node) {
    const Node* current = node->get();
    if (!node_depths.contains(current)) node_depths.set(current, 0);
    const int depth = std::max(node_depths.get(current, 0), layer_depths.get(&current->layer(), 0));
    layer_depths.set(&current->layer(), depth);
    node_depths.set(current, depth);
    for (const KerasTensor& input : current->inputs()) {
      const Node* parent = input.node().get();
      node_depths.set(parent, std::max(depth + 1, node_depths.get(parent, 0)));
    }
  }
  // Inputs that lead to no output still belong to the model, at depth 0.
  for (const KerasTensor& input : inputs_) {
    const Layer* layer = &input.layer();
    if (layer_depths.contains(layer)) continue;
    layer_depths.set(layer, 0);
    traversal.layer_indices[layer] = -1;
    node_depths.set(input.node().get(), 0);
    node_pointers[input.node().get()] = input.node();
    layer_pointers[layer] = input.node()->layer_pointer();
  }

  std::map<int, std::vector<const Node*>, std::greater<>> nodes_at_depth;
  for (const Node* node : node_depths.order()) nodes_at_depth[node_depths.get(node, 0)].push_back(node);
  std::map<int, std::vector<const Layer*>, std::greater<>> layers_at_depth;
  for (const Layer* layer : layer_depths.order()) layers_at_depth[layer_depths.get(layer, 0)].push_back(layer);

  for (auto& [depth, layers] : layers_at_depth) {
    std::stable_sort(layers.begin(), layers.end(), [&](const Layer* a, const Layer* b) {
      return traversal.layer_indices.at(a) < traversal.layer_indices.at(b);
    });
    for (const Layer* layer : layers) layers_.push_back(layer_pointers.at(layer));
  }
  for (const auto& [depth, nodes] : nodes_at_depth) {
    std::vector<std::shared_ptr<Node>> level;
    for (const Node* node : nodes) {
      level.push_back(node_pointers.at(node));
      nodes_.insert(node);
    }
    nodes_by_depth_.push_back(std::move(level));
  }

  // Every node's inputs must be computable from the model's inputs.
  std::set<std::pair<const Node*, size_t>> computable;
  for (const KerasTensor& input : inputs_) computable.insert({input.node().get(), input.tensor_index()});
  std::vector<std::string> reached;
  for (const auto& level : nodes_by_depth_) {
    for (const std::shared_ptr<Node>& node : level) {
      if (node->is_input()) continue;
      for (const KerasTensor& input : node->inputs()) {
        if (computable.count({input.node().get(), input.tensor_index()}) == 0) {
          std::string previous;
          for (const std::string& name : reached) previous += (previous.empty() ? "'" : ", '") + name + "'";
          throw InvalidArgumentError(where + "graph disconnected: cannot obtain the value of " + input.to_string() +
                                     " at layer '" + node->layer().name() +
                                     "'. The previous layers were reached without issue: [" + previous + "]");
        }
      }
      for (size_t index = 0; index < node->output_shapes().size(); ++index) computable.insert({node.get(), index});
      reached.push_back(node->layer().name());
    }
  }

  std::set<std::string> names;
  for (const auto& layer : layers_) {
    if (!names.insert(layer->name()).second) {
      throw InvalidArgumentError(where + "the name '" + layer->name() +
                                 "' is used by two layers; layer names must be unique in a model");
    }
  }
}

}  // namespace accel::keras::detail
