#include "timing/memory_model.hpp"

#include <algorithm>
#include <cmath>

#include "timing/checked_count.hpp"

namespace accel::tpu {
namespace {

constexpr std::string_view kTraffic = "the HBM traffic in bytes";
constexpr std::string_view kMemoryCycles = "the memory cycles";

}  // namespace

HbmTraffic hbm_traffic(const OperandBytes& tensors, std::int64_t buffer_bytes) {
  HbmTraffic traffic{tensors.input, tensors.weights, tensors.output, 1, 1};
  if (checked_add(checked_add(tensors.input, tensors.weights, kTraffic), tensors.output, kTraffic) <= buffer_bytes / 2) {
    return traffic;
  }
  const std::int64_t chunk = std::max<std::int64_t>(1, buffer_bytes / 4);
  // Three ways to tile the GEMM, each keeping one tensor on chip in chunks
  // of a quarter of the buffer: the weights (the input streams once per
  // weight chunk), the input (the weights stream once per input chunk), or
  // the output's partial sums (the reduction dimension streams through: each
  // output chunk needs all of one operand's matching rows or columns and
  // the whole other operand). The last is how a convolution's filter
  // gradient runs: two large operands reduced into a small one, each read once.
  const std::int64_t input_passes = ceil_div(tensors.weights, chunk);
  const std::int64_t weight_passes = ceil_div(tensors.input, chunk);
  const std::int64_t output_chunks = ceil_div(tensors.output, chunk);
  // In double to compare: a choice that is not taken may not fit int64.
  const double input = static_cast<double>(tensors.input), weights = static_cast<double>(tensors.weights);
  struct Choice {
    double bytes;
    std::int64_t input_passes;
    std::int64_t weight_passes;
  };
  const Choice choices[] = {
      {input * static_cast<double>(input_passes) + weights, input_passes, 1},                // weights resident
      {weights * static_cast<double>(weight_passes) + input, 1, weight_passes},              // input resident
      {input + weights * static_cast<double>(output_chunks), 1, output_chunks},              // output, split by rows
      {input * static_cast<double>(output_chunks) + weights, output_chunks, 1},              // output, split by columns
  };
  const Choice* best = &choices[0];
  for (const Choice& choice : choices) {
    if (choice.bytes < best->bytes) best = &choice;
  }
  traffic.input_passes = best->input_passes;
  traffic.weight_passes = best->weight_passes;
  traffic.input = checked_mul(tensors.input, best->input_passes, kTraffic);
  traffic.weights = checked_mul(tensors.weights, best->weight_passes, kTraffic);
  (void)checked_add(checked_add(traffic.input, traffic.weights, kTraffic), traffic.output, kTraffic);  // total()
  return traffic;
}

MemoryTiming overlap_with_compute(std::int64_t compute_cycles, std::int64_t traffic_bytes,
                                  std::int64_t first_tile_bytes, double bytes_per_cycle, bool ideal_memory) {
  MemoryTiming timing;
  timing.memory_cycles = checked_ceil_count(static_cast<double>(traffic_bytes) / bytes_per_cycle, kMemoryCycles);
  timing.memory_bound = timing.memory_cycles > compute_cycles;
  if (ideal_memory) {
    timing.total_cycles = compute_cycles;
    return timing;
  }
  const std::int64_t prologue =
      checked_ceil_count(static_cast<double>(std::min(first_tile_bytes, traffic_bytes)) / bytes_per_cycle, kMemoryCycles);
  // 0 <= prologue <= memory_cycles: the difference cannot overflow.
  timing.stall_cycles = prologue + std::max<std::int64_t>(0, timing.memory_cycles - prologue - compute_cycles);
  timing.total_cycles = checked_add(compute_cycles, timing.stall_cycles, "the op's cycles");
  return timing;
}

}  // namespace accel::tpu
