// Graph: construction, the side-effect rule, consumers, node removal and the
// invariant check every pass keeps.
#include "graph/graph.hpp"

#include "runtime/logical_device.hpp"
#include "runtime/op_registry.hpp"

#include <accel/error.hpp>
#include <accel/plugin/op_classes.hpp>

#include <fmt/format.h>

namespace accel::graph {

uint64_t Value::byte_size() const noexcept {
  return static_cast<uint64_t>(shape.element_count()) * dtype_size(dtype);
}

ValueId Graph::add_value(Value value) {
  values.push_back(std::move(value));
  return static_cast<ValueId>(values.size() - 1);
}

int32_t Graph::add_node(Node node, const std::vector<std::pair<Shape, DType>>& output_types) {
  const auto index = static_cast<int32_t>(nodes.size());
  node.outputs.clear();
  for (size_t output = 0; output < output_types.size(); ++output) {
    Value value;
    value.kind = ValueKind::kNodeOutput;
    value.shape = output_types[output].first;
    value.dtype = output_types[output].second;
    value.device = node.device;
    value.producer = index;
    value.output_index = static_cast<int32_t>(output);
    node.outputs.push_back(add_value(std::move(value)));
  }
  nodes.push_back(std::move(node));
  return index;
}

bool Graph::has_side_effects(const Node& node) const {
  if (node.op == kHostNode || node.op == kAssignNode) return true;
  if (node.op == kReshapeNode || node.op >= ACCEL_OP_COUNT) return false;
  if (detail::op_info(node.op).updated_inputs != 0) return true;
  // A random op with a refresh draws from a stream each run.
  const bool random = node.op == ACCEL_OP_RANDOM_UNIFORM || node.op == ACCEL_OP_RANDOM_NORMAL ||
                      node.op == ACCEL_OP_RANDOM_TRUNCATED_NORMAL;
  return random && static_cast<bool>(node.refresh);
}

std::vector<std::vector<int32_t>> Graph::consumers() const {
  std::vector<std::vector<int32_t>> readers(values.size());
  for (size_t index = 0; index < nodes.size(); ++index) {
    for (ValueId input : nodes[index].inputs) {
      auto& list = readers[static_cast<size_t>(input)];
      if (list.empty() || list.back() != static_cast<int32_t>(index)) list.push_back(static_cast<int32_t>(index));
    }
  }
  return readers;
}

void Graph::replace_uses(ValueId from, ValueId to) {
  for (Node& node : nodes) {
    for (ValueId& input : node.inputs) {
      if (input == from) input = to;
    }
  }
  for (ValueId& result : results) {
    if (result == from) result = to;
  }
}

void Graph::reorder_nodes(const std::vector<int32_t>& order) {
  if (order.size() != nodes.size()) throw InternalError("graph: a node order must name every node once");
  std::vector<Node> reordered;
  reordered.reserve(nodes.size());
  std::vector<bool> taken(nodes.size(), false);
  for (int32_t index : order) {
    if (index < 0 || static_cast<size_t>(index) >= nodes.size() || taken[static_cast<size_t>(index)]) {
      throw InternalError("graph: a node order must name every node once");
    }
    taken[static_cast<size_t>(index)] = true;
    reordered.push_back(std::move(nodes[static_cast<size_t>(index)]));
  }
  nodes = std::move(reordered);
  for (size_t index = 0; index < nodes.size(); ++index) {
    for (ValueId output : nodes[index].outputs) values[static_cast<size_t>(output)].producer = static_cast<int32_t>(index);
  }
}

void Graph::erase_nodes(const std::vector<bool>& removed) {
  // Which values stay: parameters always (they are the signature), results,
  // every input and output of a kept node.
  std::vector<bool> keep_value(values.size(), false);
  for (ValueId parameter : parameters) keep_value[static_cast<size_t>(parameter)] = true;
  for (ValueId result : results) keep_value[static_cast<size_t>(result)] = true;
  for (size_t index = 0; index < nodes.size(); ++index) {
    if (removed[index]) continue;
    for (ValueId input : nodes[index].inputs) keep_value[static_cast<size_t>(input)] = true;
    for (ValueId output : nodes[index].outputs) keep_value[static_cast<size_t>(output)] = true;
  }
  std::vector<ValueId> new_value_id(values.size(), kNoValue);
  std::vector<Value> kept_values;
  for (size_t index = 0; index < values.size(); ++index) {
    if (!keep_value[index]) continue;
    new_value_id[index] = static_cast<ValueId>(kept_values.size());
    kept_values.push_back(std::move(values[index]));
  }
  std::vector<int32_t> new_node_index(nodes.size(), -1);
  std::vector<Node> kept_nodes;
  for (size_t index = 0; index < nodes.size(); ++index) {
    if (removed[index]) continue;
    new_node_index[index] = static_cast<int32_t>(kept_nodes.size());
    kept_nodes.push_back(std::move(nodes[index]));
  }
  auto renumber = [&](ValueId id) {
    const ValueId renumbered = new_value_id[static_cast<size_t>(id)];
    if (renumbered == kNoValue) throw InternalError(fmt::format("graph: value {} was removed but is still read", id));
    return renumbered;
  };
  for (Node& node : kept_nodes) {
    for (ValueId& input : node.inputs) input = renumber(input);
    for (ValueId& output : node.outputs) output = renumber(output);
  }
  for (Value& value : kept_values) {
    if (value.kind == ValueKind::kNodeOutput) value.producer = new_node_index[static_cast<size_t>(value.producer)];
  }
  for (ValueId& parameter : parameters) parameter = renumber(parameter);
  for (ValueId& result : results) result = renumber(result);
  values = std::move(kept_values);
  nodes = std::move(kept_nodes);
}

void Graph::verify() const {
  std::vector<bool> defined(values.size(), false);
  for (size_t index = 0; index < values.size(); ++index) {
    const Value& value = values[index];
    if (value.kind != ValueKind::kNodeOutput) {
      defined[index] = true;
      continue;
    }
    if (value.producer < 0 || value.producer >= static_cast<int32_t>(nodes.size())) {
      throw InternalError(fmt::format("graph: value {} has no producer", index));
    }
    const Node& producer = nodes[static_cast<size_t>(value.producer)];
    if (static_cast<size_t>(value.output_index) >= producer.outputs.size() ||
        producer.outputs[static_cast<size_t>(value.output_index)] != static_cast<ValueId>(index)) {
      throw InternalError(fmt::format("graph: value {} is not output {} of node {}", index, value.output_index,
                                      value.producer));
    }
  }
  for (size_t index = 0; index < nodes.size(); ++index) {
    const Node& node = nodes[index];
    for (ValueId input : node.inputs) {
      if (input < 0 || static_cast<size_t>(input) >= values.size() || !defined[static_cast<size_t>(input)]) {
        throw InternalError(fmt::format("graph: node {} ({}) reads value {} before it is defined", index,
                                        node_name(node.op), input));
      }
    }
    for (ValueId output : node.outputs) {
      if (values[static_cast<size_t>(output)].producer != static_cast<int32_t>(index)) {
        throw InternalError(fmt::format("graph: node {} lists value {} it does not produce", index, output));
      }
      defined[static_cast<size_t>(output)] = true;
    }
  }
  for (ValueId result : results) {
    if (result < 0 || static_cast<size_t>(result) >= values.size()) {
      throw InternalError(fmt::format("graph: result {} does not exist", result));
    }
  }
}

const char* node_name(int32_t op) {
  if (op == kHostNode) return "Host";
  if (op == kAssignNode) return "Assign";
  if (op == kCollectiveNode) return "Collective";
  return detail::op_info(op).name;
}

bool is_fusible_elementwise(int32_t op) {
  return sdk::is_unary_elementwise(op) || sdk::is_binary_elementwise(op) || op == ACCEL_OP_SELECT ||
         op == ACCEL_OP_CAST;
}

}  // namespace accel::graph
