#include "timing/analytical_model.hpp"

#include <algorithm>

namespace accel::tpu {

SramAccesses sram_accesses(const GemmShape& gemm, const ArrayMapping& map, Dataflow dataflow) {
  SramAccesses accesses;
  // m * k, k * n and m * n are at most M x N x K, which check_gemm bounded.
  const std::int64_t m = gemm.m, n = gemm.n, k = gemm.k;
  constexpr std::string_view kReads = "the SRAM accesses";
  switch (dataflow) {
    case Dataflow::kOutputStationary:
      accesses.ifmap_reads = checked_mul(m * k, map.column_folds, kReads);
      accesses.filter_reads = checked_mul(k * n, map.row_folds, kReads);
      accesses.ofmap_writes = m * n;
      break;
    case Dataflow::kWeightStationary:
      accesses.ifmap_reads = checked_mul(m * k, map.column_folds, kReads);
      accesses.filter_reads = k * n;
      accesses.ofmap_writes = checked_mul(m * n, map.row_folds, kReads);
      break;
    case Dataflow::kInputStationary:
      accesses.ifmap_reads = m * k;
      accesses.filter_reads = checked_mul(k * n, map.column_folds, kReads);
      accesses.ofmap_writes = checked_mul(m * n, map.row_folds, kReads);
      break;
  }
  return accesses;
}

ArrayTiming analytical_array_timing(const GemmShape& gemm, int rows, int columns, Dataflow dataflow,
                                    TimingConvention convention) {
  check_gemm(gemm);
  ArrayTiming timing;
  timing.mapping = map_to_array(gemm, dataflow, rows, columns);
  const ArrayMapping& map = timing.mapping;
  const std::int64_t r = rows;
  const std::int64_t c = columns;
  const std::int64_t t = map.time_dim;
  const std::int64_t folds = map.folds();
  // r and c are at most 4096 (hardware_limits); t and folds come from the shape.
  constexpr std::string_view kCycles = "the MXU cycles";
  if (convention == TimingConvention::kScaleSim) {
    const std::int64_t fill = dataflow == Dataflow::kOutputStationary ? r + c - 2 : 2 * r + c - 2;
    timing.cycles = checked_mul(folds, checked_add(t, fill, kCycles), kCycles);
  } else {
    timing.cycles = checked_add(checked_mul(folds - 1, std::max(t, r), kCycles), t + 2 * r + c - 2, kCycles);
  }
  timing.useful_macs = gemm.macs();
  const SramAccesses accesses = sram_accesses(gemm, map, dataflow);
  timing.ifmap_reads = accesses.ifmap_reads;
  timing.filter_reads = accesses.filter_reads;
  timing.ofmap_writes = accesses.ofmap_writes;
  return timing;
}

}  // namespace accel::tpu
