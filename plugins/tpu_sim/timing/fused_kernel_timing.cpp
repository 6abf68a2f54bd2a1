// TimingModel's estimates for the kernels of a compiled program: a fusion of
// vector work run as one kernel, an MXU op with an epilogue, and an op whose
// caller changed its HBM traffic (operands already in VMEM). Each keeps the
// rules of op_timing.cpp (vector unit, memory overlap and stalls) and only
// changes what the fusion changes: the work of several ops in one pass over
// memory.
#include <algorithm>

#include "timing/checked_count.hpp"
#include "timing/op_timing.hpp"

namespace accel::tpu {
namespace {

constexpr std::string_view kTensorBytes = "the tensor bytes";
constexpr std::string_view kVectorCycles = "the vector-unit cycles";

}  // namespace

OpTiming TimingModel::estimate_vector_kernel(std::string op, const VectorKernelWork& work) const {
  OpTiming timing;
  timing.op = std::move(op);
  if (work.elements <= 0) {
    timing.energy = energy_of(timing);  // no work: zero joules (with figures)
    return timing;
  }
  const VectorUnitConfig& unit = hardware_.core.vector_unit;
  std::int64_t cycles = vector_program_cycles(unit, work.instructions_per_element, work.elements).cycles;
  if (work.reductions > 0) {
    // Each reduction costs what the REDUCE_* op costs alone, minus its HBM
    // pass: its input is a value already in the vector registers.
    const std::int64_t one = vector_unit_cycles(unit, VectorOpKind::kReduction, work.elements).cycles;
    cycles = checked_add(cycles, checked_mul(one, work.reductions, kVectorCycles), kVectorCycles);
  }
  timing.compute_cycles = ceil_div(cycles, options_.cores);
  timing.hbm.input = work.bytes_read;
  timing.hbm.output = work.bytes_written;
  // Inputs and outputs pass through VMEM once; intermediates stay in the vector registers.
  timing.vmem_access_bytes = static_cast<double>(work.bytes_read) + static_cast<double>(work.bytes_written) +
                             static_cast<double>(work.vmem_bytes_read);
  timing.vector_element_ops =
      static_cast<double>(work.elements) * static_cast<double>(work.instructions_per_element + work.reductions);
  const std::int64_t width = static_cast<std::int64_t>(unit.sublanes) * unit.lanes;
  const double flops = static_cast<double>(work.elements) *
                       static_cast<double>(work.instructions_per_element + work.reductions);
  finish(timing, checked_mul(std::min(work.elements, width), work.element_bytes, kTensorBytes), flops);
  return timing;
}

OpTiming TimingModel::with_epilogue(OpTiming timing, const EpilogueWork& epilogue) const {
  const std::int64_t vector_cycles =
      vector_program_cycles(hardware_.core.vector_unit, epilogue.instructions_per_element, epilogue.elements).cycles;
  timing.epilogue_cycles = ceil_div(vector_cycles, options_.cores);
  // Output tiles leave the array one after another; the vector unit applies
  // the epilogue to one while the MXU produces the next.
  timing.compute_cycles = std::max(timing.compute_cycles, timing.epilogue_cycles);
  timing.hbm.epilogue = checked_add(timing.hbm.epilogue, epilogue.bytes_read, kTensorBytes);
  // The output tiles stay in the vector registers; only bias and mask are loaded.
  timing.vmem_access_bytes +=
      static_cast<double>(epilogue.bytes_read) + static_cast<double>(epilogue.vmem_bytes_read);
  timing.vector_element_ops +=
      static_cast<double>(epilogue.elements) * static_cast<double>(epilogue.instructions_per_element);
  const double epilogue_flops =
      static_cast<double>(epilogue.elements) * static_cast<double>(epilogue.instructions_per_element);
  timing.flops += epilogue_flops;
  return retime(std::move(timing));
}

OpTiming TimingModel::retime(OpTiming timing) const {
  finish(timing, timing.first_tile_bytes, timing.flops);
  if (timing.useful_macs > 0) timing.mxu_utilization = mxu_utilization(timing);
  return timing;
}

}  // namespace accel::tpu
