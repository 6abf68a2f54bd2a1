// What each op costs on one emulated TensorCore: the op's tensors -> the
// timing model's question (a GEMM for the MXU ops, a vector op with its HBM
// traffic for the rest, one vector kernel for a fusion) -> an OpCost. The
// mapping table is in docs/tpu-emulator.md ("What each op costs"; fusions,
// epilogues and residency under "Compiled programs").
#pragma once

#include <accel/plugin/host_kernels.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "fused_work.hpp"
#include "timing/op_timing.hpp"
#include "vmem_residency.hpp"

namespace accel::tpu_sim {

// True for the ops that run on the MXU (bf16 inputs, fp32 accumulation).
bool runs_on_mxu(AccelOp op) noexcept;

// The simulated cost of one call and what report_op carries beside it.
struct OpCost {
  tpu::OpTiming timing;
  double flops = 0;                   // as the host kernels count them; a fusion's own count when they give none
  std::int64_t vmem_read_bytes = 0;   // input bytes read from VMEM instead of HBM (resident inputs)
  std::int64_t prefetched_weight_bytes = 0;  // loaded during the kernel before (weight_prefetch.hpp)
  std::int64_t cmem_read_bytes = 0;   // input bytes read from CMEM instead of HBM (resident inputs)
  std::int64_t on_chip_read_bytes() const { return vmem_read_bytes + cmem_read_bytes; }
  std::optional<FusionSummary> fusion;      // FUSED_ELEMENTWISE
  std::optional<EpilogueSummary> epilogue;  // an MXU op with an epilogue
};

// Simulated cost of one call; `resident` says which inputs are read on chip
// (VmemResidency::resident_inputs; empty: all from HBM), `in_cmem` which of
// those come from CMEM rather than VMEM (empty: none). Both cost no HBM
// traffic and no stall; they differ only in the bytes reported. An op with
// nothing to compute (every dimension empty) costs 0 cycles. Throws
// PluginError(InvalidArgument) when the cycle-accurate mode refuses the
// op's size, a count does not fit 64 bits, or a fusion's program or an
// epilogue is malformed.
// `from_producer` (batch_norm_fusion.hpp) says which inputs come from the
// fusion of the kernel before: a batch norm's statistics pass skips that
// input, any other op reads it on chip.
OpCost cost_op(const tpu::TimingModel& model, AccelOp op, std::span<const host_kernels::HostTensor> inputs,
               std::span<const host_kernels::HostTensor> outputs, const void* attributes,
               const ResidentInputs& resident = {}, const ResidentInputs& in_cmem = {},
               const ResidentInputs& from_producer = {});

// The figures AccelOpProfile has no field for, as one JSON object: GEMM
// shape, folds, compute/memory/stall cycles, arithmetic intensity, HBM bytes
// per operand, VMEM reads, CMEM reads (when any), energy, and a fusion's program or an epilogue.
std::string detail_json(const OpCost& cost);

}  // namespace accel::tpu_sim
