// Storage aliases and in-place writers, as the passes see them (storage.hpp).
#include "graph/passes/storage.hpp"

#include "runtime/op_registry.hpp"

#include <algorithm>

namespace accel::graph {

ValueId storage_root(const Graph& graph, ValueId value) {
  // A chain of reshapes is short; the loop also stops on a malformed graph
  // whose reshape has no input.
  while (true) {
    const Value& current = graph.values[static_cast<size_t>(value)];
    if (current.kind != ValueKind::kNodeOutput || current.producer < 0) return value;
    const Node& producer = graph.nodes[static_cast<size_t>(current.producer)];
    if (producer.op != kReshapeNode || producer.inputs.empty()) return value;
    value = producer.inputs[0];
  }
}

std::vector<ValueId> values_written_in_place(const Node& node) {
  std::vector<ValueId> written;
  if (node.op == kAssignNode) {
    if (!node.inputs.empty()) written.push_back(node.inputs[0]);
    return written;
  }
  if (node.op < 0 || node.op >= ACCEL_OP_COUNT) return written;
  const uint32_t updated = detail::op_info(node.op).updated_inputs;
  for (size_t index = 0; index < node.inputs.size() && index < 32; ++index) {
    if ((updated >> index) & 1u) written.push_back(node.inputs[index]);
  }
  return written;
}

std::vector<std::vector<int32_t>> in_place_writers(const Graph& graph) {
  std::vector<std::vector<int32_t>> writers(graph.values.size());
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    for (ValueId written : values_written_in_place(graph.nodes[index])) {
      auto& list = writers[static_cast<size_t>(storage_root(graph, written))];
      if (list.empty() || list.back() != static_cast<int32_t>(index)) list.push_back(static_cast<int32_t>(index));
    }
  }
  return writers;
}

namespace {

bool any_between(const std::vector<int32_t>& ascending, int32_t after, int32_t before) {
  auto first = std::upper_bound(ascending.begin(), ascending.end(), after);
  return first != ascending.end() && *first < before;
}

}  // namespace

bool written_between(const std::vector<std::vector<int32_t>>& writers, ValueId root, int32_t after, int32_t before) {
  return any_between(writers[static_cast<size_t>(root)], after, before);
}

std::vector<int32_t> host_node_indices(const Graph& graph) {
  std::vector<int32_t> indices;
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    if (graph.nodes[index].op == kHostNode) indices.push_back(static_cast<int32_t>(index));
  }
  return indices;
}

bool host_node_between(const std::vector<int32_t>& host_nodes, int32_t after, int32_t before) {
  return any_between(host_nodes, after, before);
}

ValueUses::ValueUses(const Graph& graph)
    : readers(graph.consumers()),
      writers(in_place_writers(graph)),
      host_nodes(host_node_indices(graph)),
      is_result(graph.values.size(), false) {
  for (ValueId result : graph.results) is_result[static_cast<size_t>(result)] = true;
}

}  // namespace accel::graph
