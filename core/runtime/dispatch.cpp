// The op dispatch path (see dispatch.hpp). Kept lean: a 1-element op must cost
// well under 2 microseconds end to end.
#include "runtime/dispatch.hpp"

#include "runtime/logging.hpp"
#include "runtime/logical_device.hpp"
#include "runtime/op_observer.hpp"
#include "runtime/op_registry.hpp"
#include "runtime/placement_state.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/settings.hpp"
#include "runtime/status.hpp"
#include "runtime/trace_hooks.hpp"

#include <accel/error.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>

namespace accel::detail {
namespace {

std::atomic<uint64_t> next_sequence{1};
std::atomic<uint64_t> fallback_ops{0};
std::atomic<uint64_t> fallback_bytes_to_cpu{0};
std::atomic<uint64_t> fallback_bytes_from_cpu{0};

// -1: not read yet; 0/1: off/on.
std::atomic<int> log_placement{-1};

bool log_placement_enabled() {
  int state = log_placement.load(std::memory_order_relaxed);
  if (state < 0) {
    state = setting_is_true("log_placement") ? 1 : 0;
    log_placement.store(state, std::memory_order_relaxed);
  }
  return state == 1;
}

std::atomic<bool> soft_placement{true};

thread_local std::vector<OpObserver*> observers;

// The op's principal dtype, which supports_op is asked about (accel_plugin.h):
// the first input's, the values' for SELECT, the output's for ops without inputs.
AccelDType principal_dtype(AccelOp op, std::span<const Tensor> inputs, DType first_output_dtype) {
  if (op == ACCEL_OP_SELECT && inputs.size() > 1) return static_cast<AccelDType>(inputs[1].dtype());
  if (!inputs.empty()) return static_cast<AccelDType>(inputs[0].dtype());
  return static_cast<AccelDType>(first_output_dtype);
}

AccelTensor describe(const Tensor& tensor) {
  AccelTensor description{};
  description.struct_size = sizeof(AccelTensor);
  description.dtype = static_cast<AccelDType>(tensor.dtype());
  description.rank = tensor.rank();
  for (int32_t axis = 0; axis < tensor.rank(); ++axis) description.shape[axis] = tensor.shape()[axis];
  description.buffer = tensor.storage()->buffer;
  description.byte_offset = tensor.byte_offset();
  return description;
}

// Small-buffer storage for the AccelTensor arrays of one call.
struct TensorDescriptions {
  AccelTensor inline_storage[4];
  std::vector<AccelTensor> heap;
  AccelTensor* data = inline_storage;

  explicit TensorDescriptions(std::span<const Tensor> tensors) {
    if (tensors.size() > 4) {
      heap.resize(tensors.size());
      data = heap.data();
    }
    for (size_t index = 0; index < tensors.size(); ++index) data[index] = describe(tensors[index]);
  }
};

void execute_on(LogicalDevice* device, AccelOp op, std::span<const Tensor> inputs,
                std::span<const Tensor> outputs, const void* attributes, uint32_t call_flags = 0) {
  bool all_outputs_empty = !outputs.empty() &&
                           std::all_of(outputs.begin(), outputs.end(),
                                       [](const Tensor& output) { return output.element_count() == 0; });
  bool in_place_on_empty = outputs.empty() && !inputs.empty() && inputs[0].element_count() == 0;
  if (all_outputs_empty || in_place_on_empty) return;

  TensorDescriptions input_descriptions(inputs);
  TensorDescriptions output_descriptions(outputs);
  AccelOpCall call{};
  call.struct_size = sizeof(AccelOpCall);
  call.op = op;
  call.num_inputs = static_cast<int32_t>(inputs.size());
  call.inputs = input_descriptions.data;
  call.num_outputs = static_cast<int32_t>(outputs.size());
  call.outputs = output_descriptions.data;
  call.attributes = attributes;
  call.sequence = next_sequence.fetch_add(1, std::memory_order_relaxed);
  call.flags = call_flags;
  AccelStatus* status = device->api().execute(device->handle(), &call);
  if (status != nullptr) {
    check_status(status, fmt::format("op {} on {}", op_display_name(op), device->name()));
  }
}

std::vector<Tensor> allocate_outputs(LogicalDevice* device, std::span<const OutputSpec> outputs) {
  std::vector<Tensor> allocated;
  allocated.reserve(outputs.size());
  for (const OutputSpec& spec : outputs) {
    uint64_t bytes = static_cast<uint64_t>(spec.shape.element_count()) * dtype_size(spec.dtype);
    allocated.emplace_back(std::make_shared<TensorStorage>(device, bytes), spec.shape, spec.dtype);
  }
  return allocated;
}

// Runs an op the device lacks on the CPU device, moving data both ways.
std::vector<Tensor> run_on_cpu_fallback(LogicalDevice* device, AccelOp op, AccelDType dtype,
                                        std::span<const Tensor> inputs, std::span<const OutputSpec> outputs,
                                        const void* attributes) {
  LogicalDevice* cpu = RuntimeState::instance().cpu_device();
  const OpInfo& info = op_info(op);
  const std::string& name = op_display_name(op);
  if (!soft_placement.load(std::memory_order_relaxed) && current_scope_device() == device) {
    throw InvalidArgumentError(fmt::format(
        "cannot run op {} with dtype {} on {}: its plugin '{}' lacks it and soft device placement is disabled", name,
        dtype_name(static_cast<DType>(dtype)), device->name(), device->plugin().name));
  }
  if (cpu == nullptr || cpu == device || !cpu->supports(op, dtype)) {
    throw UnimplementedError(fmt::format("op {} with dtype {} is not supported on {} and no CPU device can run it",
                                         name, dtype_name(static_cast<DType>(dtype)), device->name()));
  }
  if (device->first_fallback(op)) {
    runtime_log().warn("op {} with dtype {} is not supported on {}; running it on {} with copies", name,
                       dtype_name(static_cast<DType>(dtype)), device->name(), cpu->name());
  }
  fallback_ops.fetch_add(1, std::memory_order_relaxed);
  std::vector<Tensor> cpu_inputs;
  cpu_inputs.reserve(inputs.size());
  for (const Tensor& input : inputs) {
    if (input.storage()->device == cpu) {
      cpu_inputs.push_back(input);
    } else {
      fallback_bytes_to_cpu.fetch_add(input.byte_size(), std::memory_order_relaxed);
      cpu_inputs.push_back(copy_to_device(input, cpu));
    }
  }
  std::vector<Tensor> cpu_outputs = allocate_outputs(cpu, outputs);
  execute_on(cpu, op, cpu_inputs, cpu_outputs, attributes);

  std::vector<Tensor> results;
  results.reserve(cpu_outputs.size());
  for (const Tensor& output : cpu_outputs) {
    fallback_bytes_from_cpu.fetch_add(output.byte_size(), std::memory_order_relaxed);
    results.push_back(copy_to_device(output, device));
  }
  for (size_t index = 0; index < inputs.size(); ++index) {
    bool updated = (info.updated_inputs >> index) & 1u;
    if (updated && inputs[index].storage()->device != cpu) {
      fallback_bytes_from_cpu.fetch_add(inputs[index].byte_size(), std::memory_order_relaxed);
      const_cast<Tensor&>(inputs[index]).assign(cpu_inputs[index]);
    }
  }
  return results;
}

// Runs an op the device supports, copying inputs that live elsewhere to it
// and writing back the ones the op updates in place.
bool inputs_live_on(const LogicalDevice* device, std::span<const Tensor> inputs) {
  return std::all_of(inputs.begin(), inputs.end(), [&](const Tensor& input) { return input.storage()->device == device; });
}

void execute_with_local_inputs(LogicalDevice* device, AccelOp op, std::span<const Tensor> inputs,
                               std::span<const Tensor> outputs, const void* attributes, uint32_t call_flags = 0) {
  if (inputs_live_on(device, inputs)) {
    execute_on(device, op, inputs, outputs, attributes, call_flags);
    return;
  }
  std::vector<Tensor> local_inputs;
  local_inputs.reserve(inputs.size());
  for (const Tensor& input : inputs) {
    local_inputs.push_back(input.storage()->device == device ? input : copy_to_device(input, device));
  }
  execute_on(device, op, local_inputs, outputs, attributes, call_flags);
  const OpInfo& info = op_info(op);
  for (size_t index = 0; index < inputs.size(); ++index) {
    if (((info.updated_inputs >> index) & 1u) && inputs[index].storage()->device != device) {
      const_cast<Tensor&>(inputs[index]).assign(local_inputs[index]);
    }
  }
}

void log_placement_and_notify(AccelOp op, LogicalDevice* ran_on, std::span<const Tensor> inputs,
                              std::span<const Tensor> outputs, const void* attributes) {
  if (log_placement_enabled()) {
    std::fprintf(stderr, "Executing op %s in device %s\n", op_display_name(op).c_str(), ran_on->name().c_str());
  }
  notify_observers(op, inputs, outputs, attributes);
}

}  // namespace

void set_soft_placement(bool enable) { soft_placement.store(enable, std::memory_order_relaxed); }
bool soft_placement_enabled() { return soft_placement.load(std::memory_order_relaxed); }

void set_log_placement(bool enable) { log_placement.store(enable ? 1 : 0, std::memory_order_relaxed); }

LogicalDevice* place_op(std::span<const Tensor> inputs) {
  if (LogicalDevice* scoped = current_scope_device()) return scoped;
  for (const Tensor& input : inputs) {
    if (input.defined()) return input.storage()->device;
  }
  return RuntimeState::instance().default_device();
}

// Host memory a transfer between devices passes through: kept per thread
// and reused, so that a training loop's batch copies neither zero-fill nor
// page-fault a new buffer each time; transfers above 256 MiB use their own
// (a thread keeps at most that much).
std::byte* transfer_staging(size_t bytes, std::unique_ptr<std::byte[]>& oversized) {
  constexpr size_t kKeptBytes = size_t{256} << 20;
  if (bytes > kKeptBytes) {
    oversized.reset(new std::byte[bytes]);  // uninitialized: overwritten whole
    return oversized.get();
  }
  thread_local std::unique_ptr<std::byte[]> kept;
  thread_local size_t kept_bytes = 0;
  if (kept_bytes < bytes) {
    kept.reset(new std::byte[bytes]);
    kept_bytes = bytes;
  }
  return kept.get();
}

void copy_through_host(const Tensor& source, LogicalDevice* device, AccelBuffer* destination, uint64_t offset) {
  if (source.byte_size() == 0) return;
  std::unique_ptr<std::byte[]> oversized;
  std::byte* staging = transfer_staging(source.byte_size(), oversized);
  source.copy_to_host(staging);
  device->copy_from_host(staging, destination, offset, source.byte_size());
}

Tensor copy_to_device(const Tensor& tensor, LogicalDevice* device) {
  Tensor copy(std::make_shared<TensorStorage>(device, tensor.byte_size()), tensor.shape(), tensor.dtype());
  TraceHooks* hooks = active_trace_hooks();
  {
    TraceHooksSuspension staging_is_no_host_read;
    copy_through_host(tensor, device, copy.storage()->buffer, 0);
  }
  if (hooks != nullptr) hooks->on_transfer(tensor, copy);
  return copy;
}

void notify_observers(int32_t op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                      const void* attributes) {
  if (observers.empty()) return;
  ExecutedOp executed{op, inputs, outputs, attributes};
  // Copy: an observer may remove itself while being notified.
  std::vector<OpObserver*> current = observers;
  for (OpObserver* observer : current) observer->on_op_executed(executed);
}

std::vector<Tensor> run_op(AccelOp op, std::span<const Tensor> inputs, std::span<const OutputSpec> outputs,
                           const void* attributes) {
  for (const Tensor& input : inputs) {
    if (!input.defined()) {
      throw InvalidArgumentError(fmt::format("op {}: an input tensor is undefined", op_display_name(op)));
    }
  }
  if (TraceHooks* hooks = active_trace_hooks(); hooks != nullptr && op_info(op).updated_inputs != 0) {
    for (size_t index = 0; index < inputs.size(); ++index) {
      if ((op_info(op).updated_inputs >> index) & 1u) hooks->before_update_in_place(inputs[index]);
    }
  }
  LogicalDevice* device = place_op(inputs);
  const AccelDType dtype = principal_dtype(op, inputs, outputs.empty() ? DType::kFloat32 : outputs[0].dtype);
  std::vector<Tensor> results;
  LogicalDevice* ran_on = device;
  if (!device->supports(op, dtype)) {
    results = run_on_cpu_fallback(device, op, dtype, inputs, outputs, attributes);
    ran_on = RuntimeState::instance().cpu_device();
  } else {
    results = allocate_outputs(device, outputs);
    execute_with_local_inputs(device, op, inputs, results, attributes);
  }
  log_placement_and_notify(op, ran_on, inputs, results, attributes);
  return results;
}

bool runs_natively(LogicalDevice* device, AccelOp op, std::span<const Tensor> inputs,
                   std::span<const Tensor> outputs) {
  const AccelDType dtype = principal_dtype(op, inputs, outputs.empty() ? DType::kFloat32 : outputs[0].dtype());
  return device->supports(op, dtype) && inputs_live_on(device, inputs);
}

void run_op_into(LogicalDevice* device, AccelOp op, std::span<const Tensor> inputs, std::span<const Tensor> outputs,
                 const void* attributes, uint32_t call_flags) {
  const AccelDType dtype = principal_dtype(op, inputs, outputs.empty() ? DType::kFloat32 : outputs[0].dtype());
  LogicalDevice* ran_on = device;
  if (!device->supports(op, dtype)) {
    std::vector<OutputSpec> specs;
    specs.reserve(outputs.size());
    for (const Tensor& output : outputs) specs.push_back({output.shape(), output.dtype()});
    std::vector<Tensor> results = run_on_cpu_fallback(device, op, dtype, inputs, specs, attributes);
    for (size_t index = 0; index < outputs.size(); ++index) const_cast<Tensor&>(outputs[index]).assign(results[index]);
    ran_on = RuntimeState::instance().cpu_device();
  } else {
    execute_with_local_inputs(device, op, inputs, outputs, attributes, call_flags);
  }
  log_placement_and_notify(op, ran_on, inputs, outputs, attributes);
}

void add_op_observer(OpObserver* observer) { observers.push_back(observer); }

void remove_op_observer(OpObserver* observer) {
  observers.erase(std::remove(observers.begin(), observers.end(), observer), observers.end());
}

}  // namespace accel::detail

namespace accel::runtime {

FallbackStats fallback_stats() {
  return FallbackStats{detail::fallback_ops.load(), detail::fallback_bytes_to_cpu.load(),
                       detail::fallback_bytes_from_cpu.load()};
}

}  // namespace accel::runtime
