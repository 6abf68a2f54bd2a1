// Storage facts the passes share: which value's storage a value uses (a
// reshape's output aliases its input) and which values a node writes in
// place (optimizer updates, assignments). CSE, constant folding and the
// fusions must never move a read across such a write, and buffer planning
// keeps an aliased storage alive as long as any of its aliases is read.
// Internal to the graph passes.
#pragma once

#include "graph/graph.hpp"

#include <cstdint>
#include <vector>

namespace accel::graph {

// The value whose storage `value` uses: reshapes followed back to the first
// value that is not a reshape's output.
ValueId storage_root(const Graph& graph, ValueId value);

// The inputs `node` writes in place: the inputs OpInfo::updated_inputs marks
// for an op, the destination of an assignment; none otherwise. A host node's
// work may write any captured tensor: callers treat host nodes as barriers.
std::vector<ValueId> values_written_in_place(const Node& node);

// Per value id, the node indices (ascending) that write that value's storage
// in place; only storage roots have entries.
std::vector<std::vector<int32_t>> in_place_writers(const Graph& graph);

// True when a node in the open interval (after, before) writes `root` in
// place, given in_place_writers' table.
bool written_between(const std::vector<std::vector<int32_t>>& writers, ValueId root, int32_t after, int32_t before);

// Node indices (ascending) of the host nodes.
std::vector<int32_t> host_node_indices(const Graph& graph);

// True when a host node lies in the open interval (after, before).
bool host_node_between(const std::vector<int32_t>& host_nodes, int32_t after, int32_t before);

// What the fusion passes ask about every value before moving an op: who
// reads it, which nodes write its storage in place, where the host nodes
// are, and whether the function returns it. Taken once, on the graph as the
// pass found it.
struct ValueUses {
  explicit ValueUses(const Graph& graph);
  std::vector<std::vector<int32_t>> readers;  // Graph::consumers()
  std::vector<std::vector<int32_t>> writers;  // in_place_writers()
  std::vector<int32_t> host_nodes;            // host_node_indices()
  std::vector<bool> is_result;                // per value id
};

}  // namespace accel::graph
