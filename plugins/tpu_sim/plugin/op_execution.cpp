// Running one op on an emulated TensorCore: the functional model and the
// report of its simulated time.
//  - Functional: every op runs on accel::host_kernels, as on the CPU plugin.
//    MXU ops (MATMUL, CONV2D and both convolution gradients) first round
//    their float32 / float16 inputs to bfloat16 (round to nearest even) into
//    per-thread scratch buffers that are reused, then run the float32 kernel,
//    which accumulates in fp32 -- what the MXU does. Vector ops compute in fp32,
//    and so do epilogues, after the accumulation (EpilogueRounding::kAsPlainOps).
//    MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER runs as its two ops do here:
//    the pooling gradient in fp32, then the filter gradient from bf16 operands.
//    A timing-only system (tpu_sim.values=none) skips this part.
//  - Timing: op_costing gives the op's cycles, with the inputs the core's
//    on-chip residency still holds read from VMEM or CMEM; the op starts where the
//    core's previous op ended on its simulated timeline (ops run back to
//    back per core), and the totals grow; what the op wrote becomes the
//    newest in VMEM (or CMEM, when too large for VMEM). report_op carries cycles, clock, simulated start and
//    duration, FLOPs, HBM bytes, utilization, the bound and the details as
//    JSON.
#include <accel/plugin/host_kernels.hpp>
#include <accel/plugin/host_operands.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "batch_norm_fusion.hpp"
#include "energy_totals.hpp"
#include "op_costing.hpp"
#include "timing/checked_count.hpp"
#include "tpu_sim_plugin.hpp"

namespace accel::tpu_sim {
namespace {

using host_kernels::element_count;
using host_kernels::HostTensor;

// The emulated HBM is host memory.
host_kernels::HostBufferView view_of(const AccelBuffer* buffer) { return {buffer->data, buffer->bytes}; }

// Per-thread scratch for the bf16-rounded MXU operands (0 and 1) and the
// pooling gradient a MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER makes before
// rounding it (2); it only grows, so a training loop allocates it once.
constexpr int kPoolingGradientScratch = 2;
std::byte* mxu_scratch(int operand, size_t bytes) {
  thread_local std::array<std::vector<std::uint64_t>, 3> scratch;
  auto& buffer = scratch[static_cast<size_t>(operand)];
  if (buffer.size() * sizeof(std::uint64_t) < bytes) buffer.resize((bytes + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
  return reinterpret_cast<std::byte*>(buffer.data());
}

// Replaces `tensor`'s data with a copy rounded to bfloat16 precision, in its own dtype.
void round_operand_to_bf16(HostTensor& tensor, int operand) {
  if (tensor.data == nullptr || tensor.dtype == ACCEL_DTYPE_BF16) return;  // bf16 already is
  const std::int64_t count = element_count(tensor);
  if (tensor.dtype == ACCEL_DTYPE_F32) {
    const auto* source = static_cast<const float*>(tensor.data);
    auto* rounded = reinterpret_cast<float*>(mxu_scratch(operand, static_cast<size_t>(count) * sizeof(float)));
    for (std::int64_t i = 0; i < count; ++i) rounded[i] = sdk::round_to_bf16(source[i]);
    tensor.data = rounded;
  } else if (tensor.dtype == ACCEL_DTYPE_F16) {
    const auto* source = static_cast<const std::uint16_t*>(tensor.data);
    auto* rounded = reinterpret_cast<std::uint16_t*>(mxu_scratch(operand, static_cast<size_t>(count) * 2));
    // bf16 keeps 8 significant bits, float16 11: every rounded value is a float16.
    for (std::int64_t i = 0; i < count; ++i) rounded[i] = sdk::float_to_f16(sdk::round_to_bf16(sdk::f16_to_float(source[i])));
    tensor.data = rounded;
  }
}

// The tensors a call writes: its outputs, and the inputs an optimizer
// update writes in place (every operand but the gradient).
std::vector<HostTensor> written_tensors(AccelOp op, std::span<const HostTensor> inputs,
                                        std::span<const HostTensor> outputs) {
  std::vector<HostTensor> written(outputs.begin(), outputs.end());
  if (op == ACCEL_OP_SGD_UPDATE || op == ACCEL_OP_ADAM_UPDATE || op == ACCEL_OP_RMSPROP_UPDATE) {
    const size_t gradient = op == ACCEL_OP_SGD_UPDATE ? 1 : op == ACCEL_OP_ADAM_UPDATE ? 3 : 4;
    for (size_t index = 0; index < inputs.size(); ++index) {
      if (index != gradient) written.push_back(inputs[index]);
    }
  }
  return written;
}

// Places the op on the core's simulated timeline; returns its start cycle.
std::int64_t record_on_timeline(TensorCore& core, const tpu::OpTiming& timing) {
  std::lock_guard lock(core.timeline_mutex);
  CoreTimeline& timeline = core.timeline;
  const std::int64_t start = timeline.end_cycle;
  timeline.end_cycle = tpu::saturating_add(timeline.end_cycle, timing.cycles);
  AccelTpuSimDeviceTotals& totals = timeline.totals;
  totals.ops += 1;
  totals.cycles = timeline.end_cycle;
  totals.seconds = static_cast<double>(totals.cycles) / totals.clock_hz;
  // A long run's totals saturate rather than wrap to negative values.
  totals.hbm_bytes = tpu::saturating_add(totals.hbm_bytes, timing.hbm_bytes);
  totals.stall_cycles = tpu::saturating_add(totals.stall_cycles, timing.stall_cycles);
  totals.useful_macs = tpu::saturating_add(totals.useful_macs, timing.useful_macs);
  if (timing.energy) add_energy(totals, *timing.energy);
  return start;
}

}  // namespace

// MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER with the numbers of its two ops
// on this device: the pooling gradient on the vector unit in its own dtype,
// then the filter gradient on the MXU from both operands rounded to bf16.
void run_pool_filter_gradient(host_kernels::HostOperands& inputs, std::span<const HostTensor> outputs,
                              const void* attributes) {
  const auto* fused = static_cast<const AccelPoolFilterGradientAttributes*>(attributes);  // checked by costing
  HostTensor pooling_gradient = inputs[1];  // pool_x's shape and dtype
  pooling_gradient.data = mxu_scratch(kPoolingGradientScratch, static_cast<size_t>(element_count(pooling_gradient)) *
                                                                  sdk::dtype_size(pooling_gradient.dtype));
  const HostTensor pooling_inputs[] = {inputs[1], inputs[2]};
  host_kernels::execute(ACCEL_OP_MAX_POOL_BACKWARD, pooling_inputs, {&pooling_gradient, 1}, &fused->pool);
  HostTensor x = inputs[0];
  round_operand_to_bf16(x, 0);
  round_operand_to_bf16(pooling_gradient, 1);
  const HostTensor filter_inputs[] = {x, pooling_gradient};
  host_kernels::execute(ACCEL_OP_CONV2D_BACKWARD_FILTER, filter_inputs, outputs, &fused->convolution);
}

void execute_call(AccelDevice& device, const AccelOpCall& call) {
  if (call.struct_size < sizeof(AccelOpCall)) {
    throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "AccelOpCall struct too small");
  }
  host_kernels::HostOperands inputs(call.inputs, call.num_inputs, "input", &view_of);
  const host_kernels::HostOperands outputs(call.outputs, call.num_outputs, "output", &view_of);
  const AccelPluginContext& context = *device.context;
  TensorCore& core = *device.core;
  const ResidencyMode residency = context.settings.vmem_residency;
  // One op of a compiled program: a fused kernel (only programs send them),
  // or any op the host marks as replayed from a compiled step (API 1.7).
  const bool compiled = ACCEL_STRUCT_HOLDS(&call, AccelOpCall, flags) && (call.flags & ACCEL_OP_CALL_COMPILED) != 0;
  const bool fused = compiled || is_fused_kernel(call.op, call.attributes);

  // Cost first: a refused op (cycle-accurate size limit) must not run, as
  // optimizer updates write their inputs in place.
  ResidentInputs in_cmem;
  const ResidentInputs resident = core.residency.resident_inputs(inputs.span(), fused, residency, &in_cmem);
  OpCost cost;
  {
    std::lock_guard lock(core.timeline_mutex);
    const ResidentInputs from_producer =
        inputs_from_producer(core.timeline.recent_kernels, call.op, compiled, inputs.span(), residency);
    cost = cost_op(*context.timing, call.op, inputs.span(), outputs.span(), call.attributes, resident, in_cmem,
                   from_producer);
    cost.prefetched_weight_bytes = prefetch_kernel_weights(*context.timing, call.op, fused, residency,
                                                           core.timeline.previous_kernel, cost.timing);
  }
  const tpu::OpTiming& timing = cost.timing;
  // Before the MXU inputs are replaced by their bf16 copies below.
  const std::vector<HostTensor> written = written_tensors(call.op, inputs.span(), outputs.span());
  {
    std::lock_guard lock(core.timeline_mutex);
    record_producer(core.timeline.recent_kernels, call.op, compiled, written);
  }

  if (!core.timing_only && call.op == ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER) {
    run_pool_filter_gradient(inputs, outputs.span(), call.attributes);
  } else if (!core.timing_only) {  // a timing-only system has no values to compute
    if (runs_on_mxu(call.op) && inputs.size() >= 2) {
      round_operand_to_bf16(inputs[0], 0);
      round_operand_to_bf16(inputs[1], 1);
    }
    // An epilogue runs on the vector unit after the MXU has accumulated, so
    // it rounds as the plain ops would: a compiled step computes what the
    // same step computes op by op (bf16 inputs turn a last-bit difference
    // into a visible one).
    host_kernels::execute(call.op, inputs.span(), outputs.span(), call.attributes,
                          host_kernels::EpilogueRounding::kAsPlainOps);
  }
  if (residency != ResidencyMode::kOff) core.residency.record_written(written, fused);

  const std::int64_t start_cycle = record_on_timeline(core, timing);
  const AccelHostApi* host = context.host;
  if (host->report_op == nullptr) return;
  const std::string details = detail_json(cost);
  const double clock_hz = context.hardware.clock_hz;
  AccelOpProfile profile{};
  profile.struct_size = sizeof(AccelOpProfile);
  profile.sequence = call.sequence;
  profile.op = call.op;
  profile.time_source = ACCEL_TIME_SIMULATED;
  profile.start_seconds = static_cast<double>(start_cycle) / clock_hz;
  profile.duration_seconds = timing.seconds;
  profile.cycles = static_cast<std::uint64_t>(timing.cycles);
  profile.clock_hz = clock_hz;
  profile.flops = cost.flops;
  profile.bytes_accessed = static_cast<double>(timing.hbm_bytes);
  profile.utilization = timing.mxu_utilization;
  profile.bound = timing.cycles == 0 ? ACCEL_BOUND_UNKNOWN
                  : timing.bound == tpu::Bound::kMemory ? ACCEL_BOUND_MEMORY : ACCEL_BOUND_COMPUTE;
  profile.detail_json = details.c_str();
  host->report_op(device.host_context, &profile);
}

}  // namespace accel::tpu_sim
