// Dead code elimination: removes the nodes whose outputs nothing reads, not
// even transitively, and that have no side effect (passes.hpp).
#include "graph/passes/passes.hpp"

namespace accel::graph {

int32_t eliminate_dead_code(Graph& graph) {
  // One backward sweep suffices: a node's readers all come after it, so by the
  // time the sweep reaches a node every reader has decided whether it lives.
  std::vector<bool> value_needed(graph.values.size(), false);
  for (ValueId result : graph.results) value_needed[static_cast<size_t>(result)] = true;
  std::vector<bool> removed(graph.nodes.size(), false);
  int32_t removed_count = 0;
  for (size_t position = graph.nodes.size(); position-- > 0;) {
    const Node& node = graph.nodes[position];
    bool live = graph.has_side_effects(node);
    for (ValueId output : node.outputs) live = live || value_needed[static_cast<size_t>(output)];
    if (!live) {
      removed[position] = true;
      ++removed_count;
      continue;
    }
    for (ValueId input : node.inputs) value_needed[static_cast<size_t>(input)] = true;
  }
  if (removed_count > 0) graph.erase_nodes(removed);
  return removed_count;
}

}  // namespace accel::graph
