// Closed-form MXU timing of one GEMM on one R x C systolic array, per fold,
// for each dataflow and timing convention. It is the default timing mode;
// the cycle-accurate SystolicArray exists to prove it (same cycles, same
// access counts). With P = max(T, R) and F = Fr * Fc folds:
//   kScaleSim: os  F * (R + C + T - 2)
//              ws, is  F * (2R + C + T - 2)
//   kTpu (all dataflows): (F - 1) * P + T + 2R + C - 2
// i.e. the first stationary load (ws/is) or the last accumulator drain (os)
// is exposed, folds follow each other every P cycles, fill and drain once.
// These are cycle counts; SCALE-Sim reports the count minus one.
#pragma once

#include <cstdint>

#include "timing/array_mapping.hpp"
#include "timing/timing_convention.hpp"

namespace accel::tpu {

struct ArrayTiming {
  ArrayMapping mapping;
  std::int64_t cycles = 0;         // cycle count, first load to last output out of the array
  std::int64_t useful_macs = 0;    // M * N * K
  // SRAM element accesses (real elements only, not padding): the operand
  // entering the rows (ifmap), the one entering the columns (filter), outputs.
  std::int64_t ifmap_reads = 0;
  std::int64_t filter_reads = 0;
  std::int64_t ofmap_writes = 0;
};

// The SRAM element accesses of `gemm` mapped as `mapping` (its fold counts):
// ArrayTiming's three counts, which the energy model charges too.
struct SramAccesses {
  std::int64_t ifmap_reads = 0;
  std::int64_t filter_reads = 0;
  std::int64_t ofmap_writes = 0;
};
SramAccesses sram_accesses(const GemmShape& gemm, const ArrayMapping& mapping, Dataflow dataflow);

ArrayTiming analytical_array_timing(const GemmShape& gemm, int rows, int columns, Dataflow dataflow,
                                    TimingConvention convention);

}  // namespace accel::tpu
