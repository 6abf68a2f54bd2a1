// Constant folding: nodes whose inputs are all constants are run once, at
// compile time, and their outputs become kConstant values the graph owns
// (passes.hpp). Folded: FILL, the elementwise ops and CAST, BROADCAST_TO, and
// reshapes of constants (an alias, so free).
//
// Only small outputs are folded (kMaxFoldedBytes per node): a constant lives
// as long as the compiled graph, while a node's output lives one step. A
// value written in place (an accumulator made by FILL and updated by an
// optimizer op) is not constant, so neither it nor anything aliasing it is
// folded. Nor is a result, or a node a result aliases: each call hands its
// caller a tensor of its own, which a shared constant would not be. A node
// whose evaluation fails (an integer division by zero) stays, to fail at
// each run as eager execution would.
#include "graph/passes/passes.hpp"

#include "graph/passes/storage.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/trace_hooks.hpp"

#include <accel/placement.hpp>

#include <memory>
#include <optional>

namespace accel::graph {
namespace {

constexpr uint64_t kMaxFoldedBytes = uint64_t{1} << 20;

bool is_foldable_op(int32_t op) {
  return op == ACCEL_OP_FILL || op == ACCEL_OP_BROADCAST_TO || op == kReshapeNode || is_fusible_elementwise(op);
}

// The outputs of `node` computed now, or nothing when the op fails.
std::optional<std::vector<Tensor>> evaluate(const Graph& graph, const Node& node) {
  std::vector<Tensor> inputs;
  for (ValueId input : node.inputs) inputs.push_back(graph.values[static_cast<size_t>(input)].tensor);
  if (node.op == kReshapeNode) {
    return std::vector<Tensor>{inputs[0].reshape(graph.values[static_cast<size_t>(node.outputs[0])].shape)};
  }
  std::vector<detail::OutputSpec> outputs;
  for (ValueId output : node.outputs) {
    const Value& value = graph.values[static_cast<size_t>(output)];
    outputs.push_back(detail::OutputSpec{value.shape, value.dtype});
  }
  // Compile-time work is no part of a trace the thread may be making.
  detail::TraceHooksSuspension not_traced;
  std::unique_ptr<DeviceScope> on_device;
  if (node.device != nullptr) on_device = std::make_unique<DeviceScope>(Device(node.device));
  try {
    return detail::run_op(static_cast<AccelOp>(node.op), inputs, outputs,
                          node.has_attributes() ? node.attributes.data() : nullptr);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

int32_t fold_constants(Graph& graph) {
  // Decided on the graph as traced: folding turns reshape outputs into
  // constants, which ends the alias chains storage_root follows.
  const std::vector<std::vector<int32_t>> writers = in_place_writers(graph);
  std::vector<bool> keeps_its_node(graph.values.size(), false);
  for (size_t value = 0; value < graph.values.size(); ++value) {
    keeps_its_node[value] = !writers[static_cast<size_t>(storage_root(graph, static_cast<ValueId>(value)))].empty();
  }
  for (ValueId result : graph.results) {
    keeps_its_node[static_cast<size_t>(result)] = true;
    keeps_its_node[static_cast<size_t>(storage_root(graph, result))] = true;
  }
  std::vector<bool> removed(graph.nodes.size(), false);
  int32_t folded = 0;
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const Node& node = graph.nodes[index];
    if (!is_foldable_op(node.op) || node.outputs.empty() || node.refresh || graph.has_side_effects(node)) continue;
    bool foldable = true;
    for (ValueId input : node.inputs) {
      foldable = foldable && graph.values[static_cast<size_t>(input)].kind == ValueKind::kConstant;
    }
    uint64_t output_bytes = 0;
    for (ValueId output : node.outputs) {
      output_bytes += graph.values[static_cast<size_t>(output)].byte_size();
      foldable = foldable && !keeps_its_node[static_cast<size_t>(output)];
    }
    if (!foldable || (node.op != kReshapeNode && output_bytes > kMaxFoldedBytes)) continue;
    std::optional<std::vector<Tensor>> outputs = evaluate(graph, node);
    if (!outputs) continue;
    for (size_t output = 0; output < node.outputs.size(); ++output) {
      Value& value = graph.values[static_cast<size_t>(node.outputs[output])];
      value.kind = ValueKind::kConstant;
      value.tensor = std::move((*outputs)[output]);
      value.producer = -1;
      value.output_index = 0;
    }
    removed[index] = true;
    ++folded;
  }
  if (folded > 0) graph.erase_nodes(removed);
  return folded;
}

}  // namespace accel::graph
