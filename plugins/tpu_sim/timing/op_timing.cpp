#include "timing/op_timing.hpp"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "timing/checked_count.hpp"
#include "timing/systolic_array.hpp"

namespace accel::tpu {
namespace {

constexpr std::string_view kTensorBytes = "the tensor bytes";
constexpr std::string_view kMxuCycles = "the MXU cycles";

// Bytes of a rows x columns matrix laid out in (sublanes, lanes) tiles.
std::int64_t tiled_bytes(std::int64_t rows, std::int64_t columns, const VectorUnitConfig& unit, int element_bytes) {
  return checked_mul(checked_mul(checked_round_up(rows, unit.sublanes, kTensorBytes),
                                 checked_round_up(columns, unit.lanes, kTensorBytes), kTensorBytes),
                     element_bytes, kTensorBytes);
}

std::int64_t product(std::initializer_list<std::int64_t> factors, std::string_view what) {
  std::int64_t out = 1;
  for (std::int64_t factor : factors) out = checked_mul(out, factor, what);
  return out;
}

std::string fmt_count(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), value < 1e18 ? "%.0f" : "%.3g", value);
  return text;
}

}  // namespace

std::string_view to_string(Bound bound) { return bound == Bound::kCompute ? "compute" : "memory"; }

TimingModel::TimingModel(Hardware hardware, TimingOptions options)
    : hardware_(std::move(hardware)), options_(options) {
  if (options_.cores < 1 || options_.cores > hardware_.cores_per_chip) {
    throw std::invalid_argument("an op can use 1 to " + std::to_string(hardware_.cores_per_chip) +
                                " TensorCores of a chip");
  }
  if (options_.convention == TimingConvention::kScaleSim) options_.ideal_memory = true;
  if (options_.megacore && hardware_.megacore) options_.cores = hardware_.cores_per_chip;
}

OpTiming TimingModel::estimate_matmul(std::int64_t m, std::int64_t n, std::int64_t k, NumberType dtype) const {
  const GemmShape gemm{m, n, k};
  check_gemm(gemm);
  const int bytes = bytes_per_element(dtype);
  const auto& unit = hardware_.core.vector_unit;
  const OperandBytes tensors{tiled_bytes(m, k, unit, bytes), tiled_bytes(k, n, unit, bytes),
                             tiled_bytes(m, n, unit, bytes)};
  return time_gemm("matmul", gemm, tensors);
}

OpTiming TimingModel::estimate_conv2d(const Conv2dShape& conv, NumberType dtype) const {
  const Conv2dLowering lowering = lower_conv2d(conv, options_.convention);
  const int bytes = bytes_per_element(dtype);
  // im2col happens on chip: HBM holds the NHWC input, the RSCK filters and the output.
  const OperandBytes tensors{product({conv.batch, conv.height, conv.width, conv.channels, bytes}, kTensorBytes),
                             product({conv.kernel_h, conv.kernel_w, conv.channels, conv.filters, bytes}, kTensorBytes),
                             product({lowering.gemm.m, conv.filters, bytes}, kTensorBytes)};
  return time_gemm("conv2d", lowering.gemm, tensors);
}

OpTiming TimingModel::estimate_gemm(std::string op, const GemmShape& gemm, const OperandBytes& tensors) const {
  check_gemm(gemm);
  return time_gemm(std::move(op), gemm, tensors);
}

OpTiming TimingModel::time_gemm(std::string op, const GemmShape& gemm, const OperandBytes& tensors) const {
  const auto& mxu = hardware_.core.mxu;
  const bool scalesim = options_.convention == TimingConvention::kScaleSim;
  OpTiming timing;
  timing.op = std::move(op);
  timing.gemm = gemm;
  // The TPU streams whole (8, 128) tiles: the streamed dimension pads to the sublanes.
  GemmShape streamed = gemm;
  if (!scalesim) {
    const std::int64_t sublanes = hardware_.core.vector_unit.sublanes;
    switch (mxu.dataflow) {
      case Dataflow::kWeightStationary: streamed.m = checked_round_up(gemm.m, sublanes, "M"); break;
      case Dataflow::kInputStationary: streamed.n = checked_round_up(gemm.n, sublanes, "N"); break;
      case Dataflow::kOutputStationary: streamed.k = checked_round_up(gemm.k, sublanes, "K"); break;
    }
  }
  timing.mapping = map_to_array(streamed, mxu.dataflow, mxu.rows, mxu.columns);
  timing.folds = timing.mapping.folds();
  const std::int64_t mxus = static_cast<std::int64_t>(hardware_.core.mxus) * options_.cores;
  timing.folds_per_mxu = ceil_div(timing.folds, mxus);
  // The busiest MXU runs folds_per_mxu folds of the same shape back to back.
  // With fewer folds than MXUs (a 64-channel convolution is one fold of a
  // 128x128 array) the compiler loads each fold's weights into several MXUs,
  // each streaming its share of the rows (weight stationary: the streamed
  // dimension is M, the batch's output positions), so no MXU idles. SCALE-Sim
  // times one array, so its convention keeps the whole stream on one.
  ArrayMapping busiest = timing.mapping;
  if (!scalesim && mxu.dataflow == Dataflow::kWeightStationary && timing.folds < mxus) {
    busiest.time_dim = ceil_div(busiest.time_dim, mxus / timing.folds);
  }
  const std::int64_t t = busiest.time_dim, r = mxu.rows, c = mxu.columns;
  if (options_.cycle_accurate) {
    timing.compute_cycles = cycle_accurate_compute_cycles(busiest, timing.folds_per_mxu);
  } else if (scalesim) {
    const std::int64_t fill = mxu.dataflow == Dataflow::kOutputStationary ? r + c - 2 : 2 * r + c - 2;
    timing.compute_cycles = checked_mul(timing.folds_per_mxu, checked_add(t, fill, kMxuCycles), kMxuCycles) - 1;
  } else {
    timing.compute_cycles =
        checked_add(checked_mul(timing.folds_per_mxu - 1, std::max(t, r), kMxuCycles), t + 2 * r + c - 2, kMxuCycles);
  }
  timing.useful_macs = gemm.macs();
  // Operands into the array at the input width, partial sums out at the
  // accumulator's: SCALE-Sim's counts on the same folds (padding pads the
  // streamed dimension only, which no fold count depends on).
  const SramAccesses accesses = sram_accesses(gemm, timing.mapping, mxu.dataflow);
  timing.vmem_access_bytes =
      static_cast<double>(accesses.ifmap_reads + accesses.filter_reads) * bytes_per_element(mxu.input_type) +
      static_cast<double>(accesses.ofmap_writes) * bytes_per_element(mxu.accumulator_type);
  timing.hbm = hbm_traffic(tensors, hardware_.core.vmem_bytes * options_.cores);
  const std::int64_t first_tile = product({std::min<std::int64_t>(timing.folds, mxus), r, c,
                                           bytes_per_element(mxu.input_type)}, kTensorBytes);
  timing.mxu_cycles = timing.compute_cycles;
  finish(timing, first_tile, 2.0 * static_cast<double>(timing.useful_macs));
  timing.mxu_utilization = mxu_utilization(timing);
  return timing;
}

double TimingModel::mxu_utilization(const OpTiming& timing) const {
  if (timing.cycles <= 0) return 0.0;
  return static_cast<double>(timing.useful_macs) /
         (static_cast<double>(peak_macs_per_cycle_per_core(hardware_)) * options_.cores *
          static_cast<double>(timing.cycles));
}

// The busiest MXU runs folds_per_mxu folds with the op's streamed length T.
// In both conventions a fold's cycles do not depend on how full it is, so
// the PE model runs a GEMM of that many folds: full-height rows, the folds
// laid side by side along the columns.
std::int64_t TimingModel::cycle_accurate_compute_cycles(const ArrayMapping& mapping,
                                                        std::int64_t folds_per_mxu) const {
  const auto& mxu = hardware_.core.mxu;
  const std::int64_t r = mxu.rows, c = mxu.columns, t = mapping.time_dim;
  const bool scalesim = options_.convention == TimingConvention::kScaleSim;
  // In double: for a large op the PE-cycle product itself overflows int64.
  const double estimate = scalesim ? static_cast<double>(folds_per_mxu) * static_cast<double>(2 * r + c + t)
                                   : static_cast<double>(folds_per_mxu - 1) * static_cast<double>(std::max(t, r)) +
                                         static_cast<double>(t + 2 * r + c);
  const double pe_cycles = static_cast<double>(r * c) * estimate;
  if (pe_cycles > static_cast<double>(kCycleAccuratePeCycleLimit)) {
    throw CycleAccurateLimitError(
        "tpu_sim.mode=cycle_accurate steps at most " + std::to_string(kCycleAccuratePeCycleLimit) +
        " PE-cycles (rows x columns x cycles of the busiest MXU) per op; this op needs about " +
        fmt_count(pe_cycles) + " (" + std::to_string(folds_per_mxu) + " folds of " +
        std::to_string(t) + " cycles on a " + std::to_string(r) + "x" + std::to_string(c) +
        " array); use tpu_sim.mode=analytical or a smaller shape");
  }
  const std::int64_t rows_dim = std::min(mapping.rows_dim, r);
  const std::int64_t columns_dim = (folds_per_mxu - 1) * c + std::min(mapping.columns_dim, c);
  GemmShape share;  // inverse of map_to_array
  switch (mxu.dataflow) {
    case Dataflow::kOutputStationary: share = {rows_dim, columns_dim, t}; break;
    case Dataflow::kWeightStationary: share = {t, columns_dim, rows_dim}; break;
    case Dataflow::kInputStationary: share = {columns_dim, t, rows_dim}; break;
  }
  const std::vector<float> a(static_cast<std::size_t>(share.m * share.k)), b(static_cast<std::size_t>(share.k * share.n));
  const SystolicRun run = SystolicArray(mxu.rows, mxu.columns, mxu.dataflow, options_.convention).multiply(a, b, share);
  return scalesim ? run.cycles - 1 : run.cycles;  // SCALE-Sim reports the last cycle's index
}

OpTiming TimingModel::estimate_vector_op(VectorOpKind kind, std::int64_t elements, NumberType dtype) const {
  const VectorOpProfile profile = vector_op_profile(kind);
  const std::int64_t tensor_bytes = checked_mul(elements, bytes_per_element(dtype), kTensorBytes);
  return estimate_vector_op(kind, elements, checked_mul(profile.tensors_read, tensor_bytes, kTensorBytes),
                            checked_mul(profile.tensors_written, tensor_bytes, kTensorBytes), bytes_per_element(dtype));
}

OpTiming TimingModel::estimate_vector_op(VectorOpKind kind, std::int64_t elements, std::int64_t bytes_read,
                                         std::int64_t bytes_written, std::int64_t element_bytes,
                                         std::int64_t vmem_bytes_read) const {
  OpTiming timing;
  timing.op = std::string(to_string(kind));
  const VectorUnitCycles vpu = vector_unit_cycles(hardware_.core.vector_unit, kind, elements);
  timing.compute_cycles = ceil_div(vpu.cycles, options_.cores);
  timing.hbm.input = bytes_read;
  timing.hbm.output = bytes_written;
  // The unit loads every operand from VMEM and stores its results there.
  timing.vmem_access_bytes = static_cast<double>(bytes_read) + static_cast<double>(bytes_written) +
                             static_cast<double>(vmem_bytes_read);
  timing.vector_element_ops =
      static_cast<double>(elements) * vector_op_profile(kind).instructions_per_element;
  const std::int64_t width = static_cast<std::int64_t>(hardware_.core.vector_unit.sublanes) *
                             hardware_.core.vector_unit.lanes;
  finish(timing, checked_mul(std::min(elements, width), element_bytes, kTensorBytes),
         static_cast<double>(elements) * vector_op_profile(kind).instructions_per_element);
  return timing;
}

void TimingModel::finish(OpTiming& timing, std::int64_t first_tile_bytes, double flops) const {
  timing.flops = flops;
  timing.first_tile_bytes = first_tile_bytes;
  timing.hbm_bytes = checked_add(checked_add(timing.hbm.input, timing.hbm.weights, kTensorBytes),
                                 checked_add(timing.hbm.output, timing.hbm.epilogue, kTensorBytes), kTensorBytes);
  const double bytes_per_cycle = hbm_bytes_per_cycle();
  const MemoryTiming memory = overlap_with_compute(timing.compute_cycles, timing.hbm_bytes, first_tile_bytes,
                                                   bytes_per_cycle, options_.ideal_memory);
  timing.memory_cycles = memory.memory_cycles;
  timing.stall_cycles = memory.stall_cycles;
  timing.cycles = memory.total_cycles;
  timing.seconds = static_cast<double>(timing.cycles) / hardware_.clock_hz;
  timing.arithmetic_intensity = timing.hbm_bytes > 0 ? flops / static_cast<double>(timing.hbm_bytes) : 0.0;
  timing.bound = !options_.ideal_memory && memory.memory_bound ? Bound::kMemory : Bound::kCompute;
  timing.energy = energy_of(timing);
}

double TimingModel::hbm_bytes_per_cycle() const {
  return hardware_.hbm.bandwidth_bytes_per_s * options_.cores / hardware_.cores_per_chip / hardware_.clock_hz;
}

std::optional<Energy> TimingModel::energy_of(const OpTiming& timing) const {
  EnergyCounts counts;
  counts.macs = static_cast<double>(timing.useful_macs);
  counts.hbm_bytes = static_cast<double>(timing.hbm_bytes);
  // Every HBM byte also passes through VMEM (loaded into it, or stored from it).
  counts.sram_bytes = timing.vmem_access_bytes + counts.hbm_bytes;
  counts.vector_element_ops = timing.vector_element_ops;
  return tpu::energy_of(hardware_, counts);
}

}  // namespace accel::tpu
