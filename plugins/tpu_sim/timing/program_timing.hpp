// A compiled program's chain of MXU ops timed as one program on one core:
// what a TPU compiler does that op-by-op (eager) execution cannot. Each op
// keeps its own timing (op_timing: MXU cycles, epilogue, memory overlap);
// the program changes only where its bytes come from and when they load:
//
// - Activations on chip: an op's output that fits the resident half of the
//   on-chip buffer (core.vmem_bytes / 2, the split the memory model and the
//   plugin's VMEM residency use) stays there; the next op reads it from
//   VMEM and it is never written to HBM. The program's input is read from
//   HBM and its last output is written there.
// - CMEM, a second level: on a chip with CMEM (Hardware::cmem_bytes, TPU v4)
//   an output too large for half the VMEM but within the core's share of
//   the CMEM (cmem_bytes / tensor_cores_per_chip) stays there instead. CMEM
//   bandwidth is not published: its reads are taken as on-chip reads, with
//   no HBM bytes and no stall, like VMEM's.
// - Weight prefetch: the next op's weights load during the current op, in
//   the HBM cycles the current op leaves idle, when they fit in the other
//   half of the buffer (at most core.vmem_bytes / 2). Bytes loaded early
//   no longer delay the next op: its first tile and its stream shrink by
//   them. The bytes are still the next op's HBM traffic (and energy).
//
// Eager execution is the program with both off: each op as TimingModel
// times it alone. docs/tpu-emulator.md, "Programs in the timing library".
#pragma once

#include <cstdint>
#include <vector>

#include "timing/op_timing.hpp"

namespace accel::tpu {

struct ProgramPolicy {
  bool activations_on_chip = true;
  bool prefetch_weights = true;
  bool use_cmem = true;  // with activations_on_chip: CMEM as the second level
  static ProgramPolicy eager() { return {false, false, false}; }
};

struct ProgramStep {
  OpTiming timing;                    // the op as the program runs it
  bool input_from_vmem = false;       // the previous op's output, kept on chip
  bool output_kept_on_chip = false;   // not written to HBM; the next op reads it on chip
  bool output_in_cmem = false;        // kept in CMEM (too large for half the VMEM)
  std::int64_t prefetched_bytes = 0;  // weight bytes loaded during the previous op
  std::int64_t hidden_stall_cycles = 0;  // stall cycles the prefetch removed
};

struct ProgramTiming {
  std::vector<ProgramStep> steps;
  std::int64_t cycles = 0;  // the ops end to end
  double seconds = 0;
  std::int64_t useful_macs = 0;
  std::int64_t hbm_bytes = 0;
  std::int64_t stall_cycles = 0;
  // Operations per second as J17 counts them: 2 per useful MAC.
  double ops_per_s() const { return seconds > 0 ? 2.0 * static_cast<double>(useful_macs) / seconds : 0.0; }
};

// HBM cycles during `timing` that its own traffic leaves unused
// (cycles - memory cycles, at least 0): when the next op's weights can load.
std::int64_t idle_hbm_cycles(const OpTiming& timing);

// The prefetch rule on one MXU op: its weights (one pass of them, when that
// fits half the buffer) load in `idle_cycles` of HBM time the op before it
// left free, as far as those go; the op is retimed on what is left to load.
// Returns the bytes prefetched (0: `timing` unchanged). The plugin applies
// the same rule to the kernels of a compiled program (weight_prefetch.hpp).
std::int64_t prefetch_weights(const TimingModel& model, OpTiming& timing, std::int64_t idle_cycles);

// `chain`: MXU ops (and fused epilogues) as `model` times each alone, in
// program order, each reading the previous one's output. Throws
// std::invalid_argument for an empty chain or an op without MXU work.
ProgramTiming time_program(const TimingModel& model, const std::vector<OpTiming>& chain,
                           const ProgramPolicy& policy = {});

}  // namespace accel::tpu
