// FunctionalGraph (internal; Keras 2's _map_graph_network): the graph of a
// Functional model read back from its output KerasTensors: its layers in
// Keras's order (by decreasing depth, then traversal order, inputs first),
// its nodes grouped by depth (the order the model calls them in), and one
// traversal that evaluates it on tensors or propagates shapes.
#pragma once

#include <accel/error.hpp>
#include <accel/keras/keras_tensor.hpp>
#include <accel/keras/layer.hpp>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace accel::keras::detail {

class FunctionalGraph {
 public:
  // Fails (InvalidArgumentError) when an output is not computable from the
  // inputs, the graph has a cycle, or two layers share a name.
  FunctionalGraph(KerasTensors inputs, KerasTensors outputs, const std::string& model_name);

  const std::vector<KerasTensor>& inputs() const noexcept { return inputs_; }
  const std::vector<KerasTensor>& outputs() const noexcept { return outputs_; }
  bool single_input() const noexcept { return single_input_; }
  bool single_output() const noexcept { return single_output_; }
  const std::vector<std::shared_ptr<Layer>>& layers() const noexcept { return layers_; }
  // Deepest first: the order the nodes run in.
  const std::vector<std::vector<std::shared_ptr<Node>>>& nodes_by_depth() const noexcept { return nodes_by_depth_; }
  bool contains(const Node& node) const { return nodes_.count(&node) > 0; }

  // Runs the graph on `input_values` (one per input): each node's layer is
  // applied by `apply(node, its input values)` once all its inputs are known.
  template <typename Value>
  std::vector<Value> evaluate(
      const std::vector<Value>& input_values,
      const std::function<std::vector<Value>(const Node&, const std::vector<Value>&)>& apply) const {
    std::map<std::pair<const Node*, size_t>, Value> known;
    for (size_t index = 0; index < inputs_.size(); ++index) {
      known[{inputs_[index].node().get(), inputs_[index].tensor_index()}] = input_values[index];
    }
    for (const auto& nodes : nodes_by_depth_) {
      for (const std::shared_ptr<Node>& node : nodes) {
        if (node->is_input()) continue;
        std::vector<Value> arguments;
        bool computable = true;
        for (const KerasTensor& input : node->inputs()) {
          auto found = known.find({input.node().get(), input.tensor_index()});
          if (found == known.end()) {
            computable = false;
            break;
          }
          arguments.push_back(found->second);
        }
        if (!computable) continue;  // a branch that does not lead to an output
        std::vector<Value> results = apply(*node, arguments);
        for (size_t index = 0; index < results.size(); ++index) known[{node.get(), index}] = std::move(results[index]);
      }
    }
    std::vector<Value> results;
    for (const KerasTensor& output : outputs_) results.push_back(known.at({output.node().get(), output.tensor_index()}));
    return results;
  }

 private:
  std::vector<KerasTensor> inputs_;
  std::vector<KerasTensor> outputs_;
  bool single_input_;
  bool single_output_;
  std::vector<std::shared_ptr<Layer>> layers_;
  std::vector<std::vector<std::shared_ptr<Node>>> nodes_by_depth_;
  std::set<const Node*> nodes_;
};

}  // namespace accel::keras::detail
