// Reshape sinking: every reshape moves down to just before its first reader
// (passes.hpp). A reshape is a view of its input's storage, so where it
// stands does not change what its readers see; standing late lets the
// fusion pass move a reduction down into a later fusion (a sibling), which
// a reshape of the reduction's result standing before that fusion would
// forbid. Autodiff writes such reshapes: the gradient of a batch norm sums
// over N, H, W and reshapes the sum to [1, 1, 1, C] right away.
#include "graph/passes/passes.hpp"

#include <functional>

namespace accel::graph {

int32_t sink_reshapes(Graph& graph) {
  const size_t count = graph.nodes.size();
  std::vector<int32_t> order;
  order.reserve(count);
  std::vector<bool> pending(count, false);  // a reshape not placed yet
  int32_t moved = 0;
  // Places the pending reshape that defines `id`, after the pending reshapes
  // it reads.
  std::function<void(ValueId)> place = [&](ValueId id) {
    const Value& value = graph.values[static_cast<size_t>(id)];
    if (value.kind != ValueKind::kNodeOutput || !pending[static_cast<size_t>(value.producer)]) return;
    const int32_t reshape = value.producer;
    pending[static_cast<size_t>(reshape)] = false;
    for (ValueId input : graph.nodes[static_cast<size_t>(reshape)].inputs) place(input);
    order.push_back(reshape);
  };
  for (size_t index = 0; index < count; ++index) {
    const Node& node = graph.nodes[index];
    if (node.op == kReshapeNode) {
      pending[index] = true;
      continue;
    }
    for (ValueId input : node.inputs) place(input);
    order.push_back(static_cast<int32_t>(index));
  }
  for (size_t index = 0; index < count; ++index) {  // read by no node (results)
    if (pending[index]) place(graph.nodes[index].outputs[0]);
  }
  // A reshape moved when another node now runs before it than before.
  std::vector<int32_t> node_before(count, -1);
  for (int32_t index = 0, last = -1; index < static_cast<int32_t>(count); ++index) {
    node_before[static_cast<size_t>(index)] = last;
    if (graph.nodes[static_cast<size_t>(index)].op != kReshapeNode) last = index;
  }
  int32_t last = -1;
  for (int32_t index : order) {
    if (graph.nodes[static_cast<size_t>(index)].op != kReshapeNode) {
      last = index;
    } else if (node_before[static_cast<size_t>(index)] != last) {
      ++moved;
    }
  }
  if (moved > 0) graph.reorder_nodes(order);
  return moved;
}

}  // namespace accel::graph
