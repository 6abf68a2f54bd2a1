// Batch normalization fused with its producer and its consumer in compiled
// programs (see batch_norm_fusion.hpp).
#include "batch_norm_fusion.hpp"

#include <accel/plugin/op_classes.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include "op_costing.hpp"

namespace accel::tpu_sim {
namespace {

std::pair<std::uintptr_t, std::uintptr_t> range_of(const host_kernels::HostTensor& tensor) {
  const auto begin = reinterpret_cast<std::uintptr_t>(tensor.data);
  const auto bytes = static_cast<std::uintptr_t>(host_kernels::element_count(tensor)) *
                     static_cast<std::uintptr_t>(sdk::dtype_size(tensor.dtype));
  return {begin, begin + bytes};
}

// The newest recent kernel that wrote exactly `tensor`, or null.
const ProducerKernel* producer_of(const RecentKernels& recent, const host_kernels::HostTensor& tensor) {
  const auto range = range_of(tensor);
  if (range.first == range.second) return nullptr;
  for (auto kernel = recent.rbegin(); kernel != recent.rend(); ++kernel) {
    for (const auto& output : kernel->outputs) {
      if (output == range) return &*kernel;
    }
  }
  return nullptr;
}

bool is_batch_norm(AccelOp op) { return op == ACCEL_OP_BATCH_NORM || op == ACCEL_OP_BATCH_NORM_BACKWARD; }

// A loop over elements that XLA fuses into the loop before it.
bool is_elementwise_kernel(AccelOp op) {
  return op == ACCEL_OP_FUSED_ELEMENTWISE || op == ACCEL_OP_CAST || sdk::is_unary_elementwise(op) ||
         sdk::is_binary_elementwise(op) || op == ACCEL_OP_SELECT;
}

}  // namespace

ResidentInputs inputs_from_producer(const RecentKernels& recent, AccelOp op, bool compiled,
                                    std::span<const host_kernels::HostTensor> inputs, ResidencyMode mode) {
  if (mode == ResidencyMode::kOff || !compiled || inputs.empty()) return {};
  ResidentInputs fused(inputs.size(), false);
  bool any = false;
  auto mark_if = [&](std::size_t index, auto&& producer_qualifies) {
    if (index >= inputs.size()) return;
    const ProducerKernel* producer = producer_of(recent, inputs[index]);
    if (producer != nullptr && producer->compiled && producer_qualifies(producer->op)) fused[index] = any = true;
  };
  if (op == ACCEL_OP_BATCH_NORM) {
    mark_if(0, [](AccelOp producer) { return runs_on_mxu(producer); });
  } else if (op == ACCEL_OP_BATCH_NORM_BACKWARD) {
    mark_if(0, [](AccelOp) { return true; });
  } else if (is_elementwise_kernel(op)) {
    for (std::size_t index = 0; index < inputs.size(); ++index) mark_if(index, is_batch_norm);
  }
  if (!any) return {};
  return fused;
}

void record_producer(RecentKernels& recent, AccelOp op, bool compiled,
                     std::span<const host_kernels::HostTensor> written) {
  ProducerKernel kernel{op, compiled, {}};
  for (const auto& tensor : written) kernel.outputs.push_back(range_of(tensor));
  recent.push_back(std::move(kernel));
  if (recent.size() > kRecentKernels) recent.pop_front();
}

}  // namespace accel::tpu_sim
