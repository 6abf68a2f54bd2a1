// Tracer: recording executed ops into a Graph, and the reasons a body cannot
// be traced.
#include "graph/tracer.hpp"

#include "runtime/logical_device.hpp"
#include "runtime/op_registry.hpp"

#include <accel/error.hpp>

#include <fmt/format.h>

#include <cstring>

namespace accel::graph {
namespace {

thread_local Tracer* active_tracer = nullptr;

detail::LogicalDevice* device_of(const Tensor& tensor) { return tensor.storage()->device; }

}  // namespace

Tracer::Tracer(std::span<const Tensor> arguments)
    : previous_tracer_(active_tracer), previous_hooks_(detail::active_trace_hooks()) {
  for (size_t index = 0; index < arguments.size(); ++index) {
    const Tensor& argument = arguments[index];
    if (!argument.defined()) throw InvalidArgumentError(fmt::format("function argument {} is undefined", index));
    Value value;
    value.kind = ValueKind::kParameter;
    value.shape = argument.shape();
    value.dtype = argument.dtype();
    value.device = device_of(argument);
    value.parameter_index = static_cast<int32_t>(index);
    const ValueId id = graph_.add_value(std::move(value));
    graph_.parameters.push_back(id);
    values_by_tensor_[argument.id()] = id;
  }
  active_tracer = this;
  detail::set_active_trace_hooks(this);
  detail::add_op_observer(this);
}

Tracer::~Tracer() {
  if (!finished_) {
    detail::remove_op_observer(this);
    detail::set_active_trace_hooks(previous_hooks_);
    active_tracer = previous_tracer_;
  }
}

Tracer* Tracer::active() noexcept { return active_tracer; }

Graph Tracer::finish(std::span<const Tensor> results) {
  detail::remove_op_observer(this);
  detail::set_active_trace_hooks(previous_hooks_);
  active_tracer = previous_tracer_;
  finished_ = true;
  if (failed()) throw InternalError("Tracer::finish after the trace failed: " + failure_);
  for (const Tensor& result : results) {
    if (!result.defined()) throw InvalidArgumentError("a traced function returned an undefined tensor");
    graph_.results.push_back(value_of(result));
  }
  graph_.verify();
  return std::move(graph_);
}

void Tracer::fail(std::string reason) {
  if (failure_.empty()) failure_ = std::move(reason);
}

ValueId Tracer::value_of(const Tensor& tensor) {
  auto found = values_by_tensor_.find(tensor.id());
  if (found != values_by_tensor_.end()) return found->second;
  Value value;
  value.kind = ValueKind::kCapture;
  value.shape = tensor.shape();
  value.dtype = tensor.dtype();
  value.device = device_of(tensor);
  value.tensor = tensor;
  const ValueId id = graph_.add_value(std::move(value));
  values_by_tensor_.emplace(tensor.id(), id);
  return id;
}

bool Tracer::is_traced_value(const Tensor& tensor) const {
  auto found = values_by_tensor_.find(tensor.id());
  return found != values_by_tensor_.end() &&
         graph_.values[static_cast<size_t>(found->second)].kind != ValueKind::kCapture;
}

void Tracer::add_host_work(std::function<void()> work) {
  if (failed()) return;
  Node node;
  node.op = kHostNode;
  node.host_work = std::move(work);
  node.label = "Host";
  graph_.add_node(std::move(node), {});
}

void Tracer::on_op_executed(const detail::ExecutedOp& executed) {
  if (failed() || host_state_depth_ > 0) return;
  Node node;
  node.op = executed.op;  // a reshape arrives as detail::kReshapeOp, which is kReshapeNode
  for (const Tensor& input : executed.inputs) node.inputs.push_back(value_of(input));
  if (!executed.outputs.empty()) {
    node.device = device_of(executed.outputs.front());
  } else if (!executed.inputs.empty()) {
    node.device = device_of(executed.inputs.front());
  }
  const size_t attribute_bytes = node.op < ACCEL_OP_COUNT ? detail::op_info(node.op).attributes_size : 0;
  if (executed.attributes != nullptr && attribute_bytes > 0) {
    node.attributes.resize(attribute_bytes);
    std::memcpy(node.attributes.data(), executed.attributes, attribute_bytes);
  }
  node.refresh = refresh_;
  node.label = node_name(node.op);
  node.region = detail::current_step_region();
  std::vector<std::pair<Shape, DType>> output_types;
  for (const Tensor& output : executed.outputs) output_types.emplace_back(output.shape(), output.dtype());
  const int32_t index = graph_.add_node(std::move(node), output_types);
  const Node& added = graph_.nodes[static_cast<size_t>(index)];
  for (size_t output = 0; output < executed.outputs.size(); ++output) {
    values_by_tensor_[executed.outputs[output].id()] = added.outputs[output];
  }
}

void Tracer::on_host_read(const Tensor& tensor) {
  if (failed() || host_state_depth_ > 0) return;
  if (is_traced_value(tensor)) {
    fail(fmt::format("it reads a {} {} computed inside the function on the host (a data-dependent "
                     "branch or host value); a replay could not follow it",
                     dtype_name(tensor.dtype()), tensor.shape().to_string()));
  } else {
    fail(fmt::format("it reads a {} {} from outside the function on the host; a replay would reuse the "
                     "value it had when traced",
                     dtype_name(tensor.dtype()), tensor.shape().to_string()));
  }
}

void Tracer::save_before_assignment(const Tensor& destination) {
  if (!save_assigned_) return;
  if (!saved_keys_.emplace(destination.storage().get(), destination.byte_offset()).second) return;
  detail::TraceHooksSuspension saving_is_no_host_read;
  SavedValue saved{destination, std::vector<uint8_t>(destination.byte_size())};
  if (!saved.bytes.empty()) destination.copy_to_host(saved.bytes.data());
  saved_values_.push_back(std::move(saved));
}

std::function<void()> Tracer::take_rollback() {
  return [values = std::move(saved_values_), undos = std::move(undos_)]() mutable {
    for (auto value = values.rbegin(); value != values.rend(); ++value) {
      Tensor& destination = value->destination;
      if (value->bytes.empty()) continue;
      destination.assign(Tensor::from_host(value->bytes.data(), destination.shape(), destination.dtype(),
                                           destination.device()));
    }
    for (auto undo = undos.rbegin(); undo != undos.rend(); ++undo) (*undo)();
  };
}

void Tracer::on_assign(const Tensor& destination, const Tensor& source) {
  save_before_assignment(destination);  // host-state assignments too (the optimizer's step count)
  if (failed() || host_state_depth_ > 0) return;
  Node node;
  node.op = kAssignNode;
  node.inputs = {value_of(destination), value_of(source)};
  node.device = device_of(destination);
  node.label = "Assign";
  graph_.add_node(std::move(node), {});
}

void Tracer::on_transfer(const Tensor& source, const Tensor& copy) {
  if (failed() || host_state_depth_ > 0) return;
  // The copy holds the source's value; replays move it where an op needs it.
  values_by_tensor_[copy.id()] = value_of(source);
}

void Tracer::on_untraceable(std::string_view reason) {
  if (host_state_depth_ > 0) return;
  fail("it " + std::string(reason));
}

}  // namespace accel::graph
