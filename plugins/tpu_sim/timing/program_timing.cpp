#include "timing/program_timing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "timing/checked_count.hpp"

namespace accel::tpu {
namespace {

constexpr std::string_view kProgramCycles = "the program's cycles";

// `timing` with `prefetched` of its weight bytes already on chip when it
// starts: the memory overlap of op_timing on what is left to load.
void apply_prefetch(const TimingModel& model, OpTiming& timing, std::int64_t prefetched) {
  const Hardware& hw = model.hardware();
  const double bytes_per_cycle = model.hbm_bytes_per_cycle();
  const MemoryTiming memory =
      overlap_with_compute(timing.compute_cycles, timing.hbm_bytes - prefetched,
                           std::max<std::int64_t>(0, timing.first_tile_bytes - prefetched), bytes_per_cycle,
                           model.options().ideal_memory);
  timing.memory_cycles = memory.memory_cycles;
  timing.stall_cycles = memory.stall_cycles;
  timing.cycles = memory.total_cycles;
  timing.seconds = static_cast<double>(timing.cycles) / hw.clock_hz;
  timing.bound = memory.memory_bound ? Bound::kMemory : Bound::kCompute;
  if (timing.cycles > 0) {
    timing.mxu_utilization = static_cast<double>(timing.useful_macs) /
                             (static_cast<double>(peak_macs_per_cycle_per_core(hw)) * model.options().cores *
                              static_cast<double>(timing.cycles));
  }
}

}  // namespace

std::int64_t idle_hbm_cycles(const OpTiming& timing) {
  return std::max<std::int64_t>(0, timing.cycles - timing.memory_cycles);
}

std::int64_t prefetch_weights(const TimingModel& model, OpTiming& timing, std::int64_t idle_cycles) {
  const Hardware& hw = model.hardware();
  if (model.options().ideal_memory || idle_cycles <= 0 || timing.hbm.weights <= 0) return 0;
  const std::int64_t half_buffer = checked_mul(hw.core.vmem_bytes, model.options().cores, "the VMEM bytes") / 2;
  const std::int64_t weights_once = timing.hbm.weights / std::max<std::int64_t>(1, timing.hbm.weight_passes);
  if (weights_once > half_buffer) return 0;
  const double bytes_per_cycle = model.hbm_bytes_per_cycle();
  const double idle_bytes = std::floor(static_cast<double>(idle_cycles) * bytes_per_cycle);
  const auto prefetched = static_cast<std::int64_t>(std::min(static_cast<double>(weights_once), idle_bytes));
  if (prefetched > 0) apply_prefetch(model, timing, prefetched);
  return prefetched;
}

ProgramTiming time_program(const TimingModel& model, const std::vector<OpTiming>& chain, const ProgramPolicy& policy) {
  if (chain.empty()) throw std::invalid_argument("a program needs at least one MXU op; the chain is empty");
  const Hardware& hw = model.hardware();
  // The resident half of the on-chip buffer (of every core the ops use).
  const std::int64_t half_buffer = checked_mul(hw.core.vmem_bytes, model.options().cores, "the VMEM bytes") / 2;
  // The cores' share of the chip's CMEM, the second level.
  const std::int64_t cmem_share =
      policy.use_cmem ? checked_mul(hw.cmem_bytes / hw.cores_per_chip, model.options().cores, "the CMEM bytes") : 0;
  ProgramTiming program;
  std::int64_t previous_idle_cycles = 0;  // HBM cycles the previous op left unused
  for (std::size_t i = 0; i < chain.size(); ++i) {
    OpTiming timing = chain[i];
    if (timing.gemm.m <= 0 || timing.gemm.n <= 0 || timing.gemm.k <= 0) {
      throw std::invalid_argument("op " + std::to_string(i) + " of the program ('" + timing.op +
                                  "') has no MXU work; a program chains MXU ops (GEMMs, convolutions)");
    }
    ProgramStep step;
    if (policy.activations_on_chip) {
      bool changed = false;
      if (i > 0 && program.steps.back().output_kept_on_chip) {
        timing.hbm.input = 0;  // every pass reads the kept activations from VMEM
        step.input_from_vmem = true;
        changed = true;
      }
      if (i + 1 < chain.size() && (timing.hbm.output <= half_buffer || timing.hbm.output <= cmem_share)) {
        step.output_in_cmem = timing.hbm.output > half_buffer;
        timing.hbm.output = 0;
        step.output_kept_on_chip = true;
        changed = true;
      }
      if (changed) timing = model.retime(std::move(timing));
    }
    if (policy.prefetch_weights && i > 0) {
      const std::int64_t stall_before = timing.stall_cycles;
      step.prefetched_bytes = prefetch_weights(model, timing, previous_idle_cycles);
      step.hidden_stall_cycles = stall_before - timing.stall_cycles;
    }
    previous_idle_cycles = idle_hbm_cycles(timing);
    program.cycles = checked_add(program.cycles, timing.cycles, kProgramCycles);
    program.stall_cycles = checked_add(program.stall_cycles, timing.stall_cycles, kProgramCycles);
    program.useful_macs = checked_add(program.useful_macs, timing.useful_macs, "the program's MACs");
    program.hbm_bytes = checked_add(program.hbm_bytes, timing.hbm_bytes, "the program's HBM bytes");
    step.timing = std::move(timing);
    program.steps.push_back(std::move(step));
  }
  program.seconds = static_cast<double>(program.cycles) / hw.clock_hz;
  return program;
}

}  // namespace accel::tpu
