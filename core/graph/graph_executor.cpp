// GraphExecutor: binding values to tensors and running nodes in order, and
// recording runs of them on devices that record.
#include "graph/graph_executor.hpp"

#include "runtime/device_recording.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/logging.hpp"
#include "runtime/logical_device.hpp"
#include "runtime/op_registry.hpp"

#include <accel/error.hpp>
#include <accel/profiler.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string_view>

namespace accel::graph {
namespace {

// Fewer device ops than this gain nothing from one replay call.
constexpr int32_t kMinimumRecordedOps = 2;
// A run whose buffers moved this many runs in a row is given up: recording
// it each time costs more than dispatching it.
constexpr int32_t kMaximumRecordingsInARow = 3;

bool is_device_op(int32_t op) {
  return op != kReshapeNode && op != kHostNode && op != kAssignNode && op != kCollectiveNode;
}

// Whether `node` updates its input `value` in place (an optimizer update).
bool writes_in_place(const Node& node, ValueId value) {
  if (!is_device_op(node.op)) return node.op == kAssignNode && node.inputs[0] == value;
  const uint32_t updated = detail::op_info(node.op).updated_inputs;
  for (size_t input = 0; input < node.inputs.size(); ++input) {
    if (node.inputs[input] == value && ((updated >> input) & 1u) != 0) return true;
  }
  return false;
}

// Runs a device op node on its device into outputs already allocated, as
// one op of a compiled program (ACCEL_OP_CALL_COMPILED).
void dispatch_node(const Node& node, std::span<const Tensor> inputs, std::span<const Tensor> outputs) {
  detail::run_op_into(node.device, static_cast<AccelOp>(node.op), inputs, outputs,
                      node.has_attributes() ? node.attributes.data() : nullptr, ACCEL_OP_CALL_COMPILED);
}

// ACCEL_RECORDED_REPLAYS=0 dispatches every node (to measure what recording gains).
bool recording_enabled() {
  const char* value = std::getenv("ACCEL_RECORDED_REPLAYS");
  return value == nullptr || std::string_view(value) != "0";
}

}  // namespace

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
  is_result_.assign(graph_.values.size(), false);
  for (ValueId result : graph_.results) is_result_[static_cast<size_t>(result)] = true;
  released_after_.resize(graph_.nodes.size());
  for (size_t value = 0; value < graph_.values.size(); ++value) {
    if (last_reader[value] >= 0 && !is_result_[value] && graph_.values[value].kind == ValueKind::kNodeOutput) {
      released_after_[static_cast<size_t>(last_reader[value])].push_back(static_cast<ValueId>(value));
    }
  }
  find_staged_parameters();
  find_recorded_runs();
}

GraphExecutor::~GraphExecutor() = default;

void GraphExecutor::find_staged_parameters() {
  device_of_.resize(graph_.values.size());
  for (size_t value = 0; value < graph_.values.size(); ++value) device_of_[value] = graph_.values[value].device;
  if (!recording_enabled()) return;
  // The nodes that read each value.
  std::vector<std::vector<size_t>> readers(graph_.values.size());
  for (size_t index = 0; index < graph_.nodes.size(); ++index) {
    for (ValueId input : graph_.nodes[index].inputs) readers[static_cast<size_t>(input)].push_back(index);
  }
  for (size_t position = 0; position < graph_.parameters.size(); ++position) {
    const ValueId parameter = graph_.parameters[position];
    detail::LogicalDevice* target = nullptr;
    bool stageable = true;
    // Every reader of the parameter and of its reshapes (views of it) must
    // be an op of the same recording device that does not write it.
    std::vector<ValueId> views;
    std::vector<ValueId> pending{parameter};
    while (!pending.empty() && stageable) {
      const ValueId value = pending.back();
      pending.pop_back();
      views.push_back(value);
      for (size_t reader : readers[static_cast<size_t>(value)]) {
        const Node& node = graph_.nodes[reader];
        if (writes_in_place(node, value)) {
          stageable = false;  // the caller's tensor must see the update
          break;
        }
        if (node.op == kReshapeNode) {
          pending.push_back(node.outputs[0]);
        } else if (!is_device_op(node.op) || node.device == nullptr ||
                   (target != nullptr && node.device != target) ||
                   !detail::DeviceRecording::supported(*node.device)) {
          stageable = false;
          break;
        } else {
          target = node.device;
        }
      }
    }
    for (ValueId result : graph_.results) {
      if (std::find(views.begin(), views.end(), result) != views.end()) stageable = false;
    }
    if (!stageable || target == nullptr) continue;
    staged_parameters_.push_back({position, target, Tensor()});
    for (ValueId view : views) device_of_[static_cast<size_t>(view)] = target;
  }
}

void GraphExecutor::find_recorded_runs() {
  run_starting_at_.assign(graph_.nodes.size(), -1);
  if (!recording_enabled()) return;
  auto planned = [&](ValueId id) {
    return static_cast<size_t>(id) < plan_.offsets.size() &&
           plan_.offsets[static_cast<size_t>(id)] != BufferPlan::kNotPlanned;
  };
  // A device op can be recorded when its attributes are the same every run,
  // it writes only arena buffers or results (kept buffers, copied out) and
  // reads only its own device's values.
  auto recordable_on = [&](const Node& node) -> detail::LogicalDevice* {
    if (!is_device_op(node.op) || node.refresh || node.device == nullptr) return nullptr;
    if (!detail::DeviceRecording::supported(*node.device)) return nullptr;
    for (ValueId output : node.outputs) {
      if (!planned(output) && !is_result_[static_cast<size_t>(output)]) return nullptr;
    }
    for (ValueId input : node.inputs) {
      if (device_of_[static_cast<size_t>(input)] != node.device) return nullptr;
    }
    return node.device;
  };
  size_t index = 0;
  while (index < graph_.nodes.size()) {
    detail::LogicalDevice* device = recordable_on(graph_.nodes[index]);
    if (device == nullptr) {
      ++index;
      continue;
    }
    RecordedRun run;
    run.first = index;
    run.device = device;
    int32_t ops = 0;
    size_t end = index;
    for (size_t next = index; next < graph_.nodes.size(); ++next) {
      const Node& node = graph_.nodes[next];
      if (node.op == kReshapeNode) continue;  // a view: runs nothing
      if (recordable_on(node) != device) break;
      ++ops;
      end = next + 1;
    }
    run.end = end;
    if (ops >= kMinimumRecordedOps) {
      run_starting_at_[run.first] = static_cast<int32_t>(recorded_runs_.size());
      recorded_runs_.push_back(std::move(run));
    }
    index = end;
  }
}

void GraphExecutor::add_recording_statistics(FunctionStatistics& statistics) const {
  statistics.recorded_runs = 0;
  statistics.recorded_nodes = 0;
  for (const RecordedRun& run : recorded_runs_) {
    if (run.given_up) continue;
    ++statistics.recorded_runs;
    for (size_t index = run.first; index < run.end; ++index) {
      if (is_device_op(graph_.nodes[index].op)) ++statistics.recorded_nodes;
    }
  }
  statistics.recordings = recordings_;
  statistics.recorded_replays = recorded_replays_;
  statistics.recording_reason = recording_reason_;
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
  for (StagedParameter& staged : staged_parameters_) {
    const Tensor& argument = arguments[staged.index];
    if (!staged.buffer.defined()) staged.buffer = Tensor::empty(argument.shape(), argument.dtype(), Device(staged.device));
    staged.buffer.assign(argument);
    slots_[static_cast<size_t>(graph_.parameters[staged.index])] = staged.buffer;
  }
  for (size_t index = 0; index < graph_.values.size(); ++index) {
    const Value& value = graph_.values[index];
    if (value.kind == ValueKind::kCapture || value.kind == ValueKind::kConstant) slots_[index] = value.tensor;
  }
  // A profiler session wants every op's own time: replays report none.
  const bool replay = !profiler::is_recording();
  for (size_t index = 0; index < graph_.nodes.size();) {
    const int32_t run = run_starting_at_[index];
    if (replay && run >= 0 && !recorded_runs_[static_cast<size_t>(run)].given_up) {
      index = run_recorded(recorded_runs_[static_cast<size_t>(run)]);
      continue;
    }
    run_node(index);
    if (node_observer_) node_observer_(index);
    release_after(index);
    ++index;
  }
  std::vector<Tensor> results;
  results.reserve(graph_.results.size());
  for (ValueId result : graph_.results) results.push_back(slots_[static_cast<size_t>(result)]);
  slots_.clear();
  return results;
}

void GraphExecutor::run_node(size_t index) {
  Node& node = graph_.nodes[index];
  std::vector<Tensor>& inputs = node_inputs_;  // reused: no allocation per node
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
    case kCollectiveNode: {
      if (!collective_handler_) {
        throw FailedPreconditionError("a collective node runs only in an SPMD program (graph/spmd_program.hpp)");
      }
      Tensor output = allocate_output(node, node.outputs[0]);
      collective_handler_(index, node, inputs[0], output);
      slots_[static_cast<size_t>(node.outputs[0])] = std::move(output);
      break;
    }
    default: {
      std::vector<Tensor>& outputs = node_outputs_;
      outputs.clear();
      for (ValueId output : node.outputs) outputs.push_back(allocate_output(node, output));
      if (node.refresh) node.refresh(node.op, node.attributes.data());
      dispatch_node(node, inputs, outputs);
      for (size_t output = 0; output < node.outputs.size(); ++output) {
        slots_[static_cast<size_t>(node.outputs[output])] = std::move(outputs[output]);
      }
    }
  }
  inputs.clear();  // the last reader's release must not be kept alive here
}

void GraphExecutor::release_after(size_t index) {
  for (ValueId released : released_after_[index]) slots_[static_cast<size_t>(released)] = Tensor();
}

size_t GraphExecutor::run_recorded(RecordedRun& run) {
  // Bind every node's operands first: nothing runs until the replay.
  std::vector<BoundNode> bound(run.end - run.first);
  std::vector<std::pair<std::shared_ptr<detail::TensorStorage>, uint64_t>> operands;
  for (size_t index = run.first; index < run.end; ++index) {
    const Node& node = graph_.nodes[index];
    BoundNode& tensors = bound[index - run.first];
    for (ValueId input : node.inputs) tensors.inputs.push_back(slots_[static_cast<size_t>(input)]);
    if (node.op == kReshapeNode) {
      slots_[static_cast<size_t>(node.outputs[0])] =
          tensors.inputs[0].reshape(graph_.values[static_cast<size_t>(node.outputs[0])].shape);
      continue;
    }
    for (ValueId output : node.outputs) {
      if (is_result_[static_cast<size_t>(output)]) {
        Tensor& kept = kept_results_[output];
        if (!kept.defined()) kept = allocate_output(node, output);
        tensors.outputs.push_back(kept);
      } else {
        tensors.outputs.push_back(allocate_output(node, output));
      }
      slots_[static_cast<size_t>(output)] = tensors.outputs.back();
    }
    for (const std::vector<Tensor>* tensors_of : {&tensors.inputs, &tensors.outputs}) {
      for (const Tensor& tensor : *tensors_of) operands.emplace_back(tensor.storage(), tensor.byte_offset());
    }
  }
  if (run.recording && operands == run.operands) {
    run.recording->replay();
    ++recorded_replays_;
    run.recordings_in_a_row = 0;
  } else if (run.recordings_in_a_row >= kMaximumRecordingsInARow) {
    give_up(run, fmt::format("its buffers moved in {} runs in a row", kMaximumRecordingsInARow));
  } else {
    run.operands = std::move(operands);
    record(run, bound);
  }
  if (run.given_up) {
    for (size_t index = run.first; index < run.end; ++index) {
      const Node& node = graph_.nodes[index];
      if (node.op == kReshapeNode) continue;
      const BoundNode& tensors = bound[index - run.first];
      dispatch_node(node, tensors.inputs, tensors.outputs);
    }
  }
  // The caller keeps the results: hand out copies, not the kept buffers.
  for (size_t index = run.first; index < run.end; ++index) {
    for (ValueId output : graph_.nodes[index].outputs) {
      if (!is_result_[static_cast<size_t>(output)]) continue;
      const Tensor& kept = kept_results_.at(output);
      Tensor copy = Tensor::empty(kept.shape(), kept.dtype(), Device(run.device));
      copy.assign(kept);
      slots_[static_cast<size_t>(output)] = std::move(copy);
    }
  }
  for (size_t index = run.first; index < run.end; ++index) release_after(index);
  return run.end;
}

void GraphExecutor::record(RecordedRun& run, std::span<const BoundNode> bound) {
  run.recording.reset();
  for (size_t index = run.first; index < run.end; ++index) {
    const Node& node = graph_.nodes[index];
    const BoundNode& tensors = bound[index - run.first];
    if (node.op != kReshapeNode &&
        !detail::runs_natively(run.device, static_cast<AccelOp>(node.op), tensors.inputs, tensors.outputs)) {
      give_up(run, fmt::format("node {} ({}) would not run on the device itself", index, node_name(node.op)));
      return;
    }
  }
  try {
    detail::DeviceRecording::begin(*run.device);
  } catch (const std::exception& error) {
    give_up(run, error.what());
    return;
  }
  std::string failure;
  for (size_t index = run.first; index < run.end && failure.empty(); ++index) {
    const Node& node = graph_.nodes[index];
    if (node.op == kReshapeNode) continue;
    const BoundNode& tensors = bound[index - run.first];
    try {
      dispatch_node(node, tensors.inputs, tensors.outputs);
    } catch (const std::exception& error) {  // any error: the device must still stop recording
      failure = fmt::format("recording node {} ({}): {}", index, node_name(node.op), error.what());
    }
  }
  try {
    std::unique_ptr<detail::DeviceRecording> recording = detail::DeviceRecording::end(*run.device);
    if (failure.empty()) run.recording = std::move(recording);
  } catch (const std::exception& error) {
    if (failure.empty()) failure = error.what();
  }
  if (!failure.empty()) {
    give_up(run, failure);  // nothing ran: the caller runs the nodes one by one
    return;
  }
  ++recordings_;
  ++run.recordings_in_a_row;
  run.recording->replay();
  ++recorded_replays_;
}

void GraphExecutor::give_up(RecordedRun& run, const std::string& reason) {
  run.given_up = true;
  run.recording.reset();
  run.operands.clear();
  const std::string nodes = fmt::format("nodes {}..{} on {}", run.first, run.end - 1, run.device->name());
  recording_reason_ = nodes + ": " + reason;
  detail::runtime_log().info("compiled step: {} are dispatched one by one instead of replayed as a recording ({})",
                             nodes, reason);
}

}  // namespace accel::graph
