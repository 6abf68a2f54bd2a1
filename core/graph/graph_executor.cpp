// GraphExecutor: binding values to tensors and running nodes in order.
#include "graph/graph_executor.hpp"

#include "runtime/dispatch.hpp"
#include "runtime/logical_device.hpp"

#include <accel/error.hpp>

#include <fmt/format.h>

namespace accel::graph {

GraphExecutor::GraphExecutor(Graph graph, BufferPlan plan) : graph_(std::move(graph)), plan_(std::move(plan)) {
  // Fusion attributes point into the node's own program, which never moves.
  for (Node& node : graph_.nodes) {
    if (node.op != ACCEL_OP_FUSED_ELEMENTWISE || !node.program) continue;
    auto& attributes = node.attributes_as<AccelFusedElementwiseAttributes>();
    attributes.num_instructions = static_cast<int32_t>(node.program->instructions.size());
    attributes.instructions = node.program->instructions.data();
    attributes.num_outputs = static_cast<int32_t>(node.program->outputs.size());
    attributes.outputs = node.program->outputs.data();
  }
  // A value no longer needed after its last reader is dropped there, so that
  // values outside the arenas are freed as eagerly as eager dispatch frees them.
  std::vector<int32_t> last_reader(graph_.values.size(), -1);
  for (size_t index = 0; index < graph_.nodes.size(); ++index) {
    for (ValueId input : graph_.nodes[index].inputs) last_reader[static_cast<size_t>(input)] = static_cast<int32_t>(index);
  }
  std::vector<bool> is_result(graph_.values.size(), false);
  for (ValueId result : graph_.results) is_result[static_cast<size_t>(result)] = true;
  released_after_.resize(graph_.nodes.size());
  for (size_t value = 0; value < graph_.values.size(); ++value) {
    if (last_reader[value] >= 0 && !is_result[value] && graph_.values[value].kind == ValueKind::kNodeOutput) {
      released_after_[static_cast<size_t>(last_reader[value])].push_back(static_cast<ValueId>(value));
    }
  }
}

Tensor GraphExecutor::allocate_output(const Node& node, ValueId id) {
  const Value& value = graph_.values[static_cast<size_t>(id)];
  const int64_t offset =
      static_cast<size_t>(id) < plan_.offsets.size() ? plan_.offsets[static_cast<size_t>(id)] : BufferPlan::kNotPlanned;
  if (offset != BufferPlan::kNotPlanned) {
    std::shared_ptr<detail::TensorStorage>& arena = arenas_[value.device];
    if (!arena) arena = std::make_shared<detail::TensorStorage>(value.device, plan_.arena_bytes.at(value.device));
    return Tensor(arena, value.shape, value.dtype, static_cast<uint64_t>(offset));
  }
  return Tensor(std::make_shared<detail::TensorStorage>(node.device, value.byte_size()), value.shape, value.dtype);
}

std::vector<Tensor> GraphExecutor::run(std::span<const Tensor> arguments) {
  if (arguments.size() != graph_.parameters.size()) {
    throw InvalidArgumentError(fmt::format("compiled function takes {} arguments, got {}", graph_.parameters.size(),
                                           arguments.size()));
  }
  slots_.assign(graph_.values.size(), Tensor());
  for (size_t index = 0; index < graph_.parameters.size(); ++index) {
    slots_[static_cast<size_t>(graph_.parameters[index])] = arguments[index];
  }
  for (size_t index = 0; index < graph_.values.size(); ++index) {
    const Value& value = graph_.values[index];
    if (value.kind == ValueKind::kCapture || value.kind == ValueKind::kConstant) slots_[index] = value.tensor;
  }
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  for (size_t index = 0; index < graph_.nodes.size(); ++index) {
    Node& node = graph_.nodes[index];
    inputs.clear();
    for (ValueId input : node.inputs) inputs.push_back(slots_[static_cast<size_t>(input)]);
    switch (node.op) {
      case kReshapeNode:
        slots_[static_cast<size_t>(node.outputs[0])] =
            inputs[0].reshape(graph_.values[static_cast<size_t>(node.outputs[0])].shape);
        break;
      case kHostNode:
        node.host_work();
        break;
      case kAssignNode:
        inputs[0].assign(inputs[1]);
        break;
      default: {
        outputs.clear();
        for (ValueId output : node.outputs) outputs.push_back(allocate_output(node, output));
        if (node.refresh) node.refresh(node.op, node.attributes.data());
        detail::run_op_into(node.device, static_cast<AccelOp>(node.op), inputs, outputs,
                            node.has_attributes() ? node.attributes.data() : nullptr);
        for (size_t output = 0; output < node.outputs.size(); ++output) {
          slots_[static_cast<size_t>(node.outputs[output])] = std::move(outputs[output]);
        }
      }
    }
    for (ValueId released : released_after_[index]) slots_[static_cast<size_t>(released)] = Tensor();
  }
  std::vector<Tensor> results;
  results.reserve(graph_.results.size());
  for (ValueId result : graph_.results) results.push_back(slots_[static_cast<size_t>(result)]);
  slots_.clear();
  return results;
}

}  // namespace accel::graph
