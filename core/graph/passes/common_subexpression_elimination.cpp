// Common subexpression elimination: a node that repeats an earlier node (same
// op, device, inputs, attribute bytes and output types) is dropped and its
// outputs are read from the earlier node's (passes.hpp).
//
// Values are storage, not versions: a captured variable updated in place by
// an optimizer op or an assignment holds different numbers before and after.
// So an input's key includes how many in-place writes its storage has seen,
// a node whose outputs are written in place anywhere is never merged (the
// write would then reach both readers), and a host node, whose work may write
// any captured tensor, ends every match made before it.
#include "graph/passes/passes.hpp"

#include "graph/passes/storage.hpp"

#include <cstring>
#include <string>
#include <unordered_map>

namespace accel::graph {
namespace {

template <typename Number>
void append_bytes(std::string& key, Number number) {
  char bytes[sizeof(Number)];
  std::memcpy(bytes, &number, sizeof(Number));
  key.append(bytes, sizeof(Number));
}

bool is_random(int32_t op) {
  return op == ACCEL_OP_RANDOM_UNIFORM || op == ACCEL_OP_RANDOM_NORMAL || op == ACCEL_OP_RANDOM_TRUNCATED_NORMAL;
}

}  // namespace

int32_t eliminate_common_subexpressions(Graph& graph) {
  std::vector<std::vector<int32_t>> writers = in_place_writers(graph);
  std::vector<bool> written(graph.values.size(), false);
  for (size_t value = 0; value < writers.size(); ++value) written[value] = !writers[value].empty();

  std::vector<ValueId> canonical(graph.values.size());
  for (size_t value = 0; value < canonical.size(); ++value) canonical[value] = static_cast<ValueId>(value);
  // In-place writes seen so far, per storage root.
  std::vector<int32_t> write_count(graph.values.size(), 0);
  std::unordered_map<std::string, int32_t> first_node_by_key;
  std::vector<bool> removed(graph.nodes.size(), false);
  int32_t removed_count = 0;

  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    Node& node = graph.nodes[index];
    for (ValueId& input : node.inputs) input = canonical[static_cast<size_t>(input)];

    if (node.op == kHostNode) {
      first_node_by_key.clear();
      continue;
    }
    bool eligible = !graph.has_side_effects(node) && !node.refresh && !node.host_work && !node.program &&
                    !is_random(node.op) && node.op != kAssignNode && !node.outputs.empty();
    for (ValueId output : node.outputs) {
      eligible = eligible && !written[static_cast<size_t>(storage_root(graph, output))];
    }
    if (eligible) {
      std::string key;
      append_bytes(key, node.op);
      append_bytes(key, reinterpret_cast<uintptr_t>(node.device));
      append_bytes(key, node.inputs.size());
      for (ValueId input : node.inputs) {
        append_bytes(key, input);
        append_bytes(key, write_count[static_cast<size_t>(storage_root(graph, input))]);
      }
      // The output types are part of what an op computes: CAST's target,
      // BROADCAST_TO's and SLICE's shapes, FILL's shape, a reshape's shape.
      append_bytes(key, node.outputs.size());
      for (ValueId output : node.outputs) {
        const Value& value = graph.values[static_cast<size_t>(output)];
        append_bytes(key, value.dtype);
        append_bytes(key, value.shape.rank());
        for (int64_t dimension : value.shape.dims()) append_bytes(key, dimension);
      }
      append_bytes(key, node.attributes.size());
      key.append(reinterpret_cast<const char*>(node.attributes.data()), node.attributes.size());

      auto [found, inserted] = first_node_by_key.emplace(std::move(key), static_cast<int32_t>(index));
      if (!inserted) {
        const Node& first = graph.nodes[static_cast<size_t>(found->second)];
        for (size_t output = 0; output < node.outputs.size(); ++output) {
          canonical[static_cast<size_t>(node.outputs[output])] = first.outputs[output];
        }
        removed[index] = true;
        ++removed_count;
        continue;
      }
    }
    for (ValueId target : values_written_in_place(node)) ++write_count[static_cast<size_t>(storage_root(graph, target))];
  }
  for (ValueId& result : graph.results) result = canonical[static_cast<size_t>(result)];
  if (removed_count > 0) graph.erase_nodes(removed);
  return removed_count;
}

}  // namespace accel::graph
