// Rematerialization (passes.hpp): forward values recomputed in the backward
// pass of their layer instead of kept alive across the step.
//
// A traced training step runs every layer's forward ops, then the backward
// ops in reverse layer order. Without remat every activation the backward
// pass reads stays live from its layer's forward ops to that layer's backward
// ops, so the peak holds the activations of every layer at once. Recomputing
// a layer's activations right before its backward ops keeps, at the peak,
// only what the policy keeps plus one layer's worth of recomputed values.
//
// A forward value of region R (a Keras layer call) is kept when the policy
// keeps its op (kMinimal: the dots), when its op must not run twice, when it
// is a result, or when another region's backward ops read it (it stays live
// through the backward pass anyway; a region's inputs are such values).
// Every other forward value of R that R's backward ops read is recomputed:
// its producer is copied before R's first backward node, reading copies of
// the values of R it needs that are not kept, and the originals of the kept
// ones. R's backward ops then read the copies.
#include "graph/passes/passes.hpp"

#include <map>
#include <set>

namespace accel::graph {
namespace {

// Ops whose outputs kMinimal keeps: the dots (MaxText's checkpoint_dots),
// the expensive ops a backward pass should not run twice.
bool is_dot(int32_t op) { return op == ACCEL_OP_MATMUL || op == ACCEL_OP_CONV2D; }

// Whether running a copy of `node` gives the same values as the original.
// An all-gather does (every device of the mesh runs the copy, in the same
// place): FSDP's weights are gathered again for the backward pass, as XLA
// does under remat, instead of staying gathered from the forward pass.
bool may_run_again(const Graph& graph, const Node& node) {
  if (node.op == kCollectiveNode) {
    const CollectiveKind kind = node.attributes_as<CollectiveAttributes>().kind;
    return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kLocalSlice;
  }
  if (node.op == kHostNode || node.op == kAssignNode) return false;
  return !graph.has_side_effects(node);
}

class Rematerializer {
 public:
  Rematerializer(Graph& graph, RematPolicy policy)
      : graph_(graph), policy_(policy), consumers_(graph.consumers()),
        results_(graph.results.begin(), graph.results.end()) {
    for (int32_t index = 0; index < static_cast<int32_t>(graph.nodes.size()); ++index) {
      const detail::StepRegion& region = node(index).region;
      if (region.layer >= 0 && region.backward) backward_nodes_[region.layer].push_back(index);
    }
  }

  int32_t run() {
    const auto node_count = static_cast<int32_t>(graph_.nodes.size());
    std::map<int32_t, std::vector<int32_t>> copies_before;  // a region's first backward node -> its copies
    int32_t added = 0;
    for (const auto& [layer, backward_nodes] : backward_nodes_) {
      std::map<ValueId, ValueId> copy_of;
      std::vector<int32_t>& copies = copies_before[backward_nodes.front()];
      for (int32_t producer : producers_to_copy(layer)) {  // in graph order: inputs are copied first
        Node copy = node(producer);
        copy.outputs.clear();
        // Recomputed in the layer's backward pass: part of that region now.
        copy.region = {.layer = layer, .backward = true, .block = copy.region.block};
        for (ValueId& input : copy.inputs) {
          if (const auto found = copy_of.find(input); found != copy_of.end()) input = found->second;
        }
        std::vector<std::pair<Shape, DType>> types;
        for (ValueId output : node(producer).outputs) types.emplace_back(value(output).shape, value(output).dtype);
        const int32_t index = graph_.add_node(std::move(copy), types);
        for (size_t output = 0; output < types.size(); ++output) {
          copy_of[node(producer).outputs[output]] = node(index).outputs[output];
        }
        copies.push_back(index);
        ++added;
      }
      for (int32_t index : backward_nodes) {
        for (ValueId& input : graph_.nodes[static_cast<size_t>(index)].inputs) {
          if (const auto found = copy_of.find(input); found != copy_of.end()) input = found->second;
        }
      }
    }
    if (added == 0) return 0;
    std::vector<int32_t> order;
    order.reserve(graph_.nodes.size());
    for (int32_t index = 0; index < node_count; ++index) {
      if (const auto copies = copies_before.find(index); copies != copies_before.end()) {
        order.insert(order.end(), copies->second.begin(), copies->second.end());
      }
      order.push_back(index);
    }
    graph_.reorder_nodes(order);
    return added;
  }

 private:
  const Node& node(int32_t index) const { return graph_.nodes[static_cast<size_t>(index)]; }
  const Value& value(ValueId id) const { return graph_.values[static_cast<size_t>(id)]; }

  // Whether `id` is made by a forward node of `layer`, before its backward.
  bool made_in_forward_of(ValueId id, int32_t layer) const {
    if (value(id).kind != ValueKind::kNodeOutput) return false;
    const detail::StepRegion& region = node(value(id).producer).region;
    return region.layer == layer && !region.backward;
  }

  // A forward value of `layer` that stays live instead of being recomputed.
  bool kept(ValueId id, int32_t layer) const {
    const Node& producer = node(value(id).producer);
    if (!may_run_again(graph_, producer)) return true;
    if (policy_ == RematPolicy::kMinimal && is_dot(producer.op)) return true;
    if (results_.contains(id)) return true;
    for (int32_t reader : consumers_[static_cast<size_t>(id)]) {
      const detail::StepRegion& region = node(reader).region;
      if (region.backward && region.layer != layer) return true;
    }
    return false;
  }

  // The forward nodes of `layer` to copy, ascending: the producers of the
  // values its backward nodes read that are not kept, and of the values not
  // kept that those need.
  std::set<int32_t> producers_to_copy(int32_t layer) const {
    std::vector<ValueId> pending;
    for (int32_t index : backward_nodes_.at(layer)) {
      for (ValueId input : node(index).inputs) pending.push_back(input);
    }
    std::set<int32_t> producers;
    while (!pending.empty()) {
      const ValueId id = pending.back();
      pending.pop_back();
      if (!made_in_forward_of(id, layer) || kept(id, layer)) continue;
      if (!producers.insert(value(id).producer).second) continue;
      for (ValueId input : node(value(id).producer).inputs) pending.push_back(input);
    }
    return producers;
  }

  Graph& graph_;
  RematPolicy policy_;
  std::vector<std::vector<int32_t>> consumers_;
  std::set<ValueId> results_;
  std::map<int32_t, std::vector<int32_t>> backward_nodes_;  // layer -> its backward nodes, in order
};

}  // namespace

int32_t rematerialize(Graph& graph, RematPolicy policy) {
  if (policy == RematPolicy::kNone) return 0;
  return Rematerializer(graph, policy).run();
}

}  // namespace accel::graph
