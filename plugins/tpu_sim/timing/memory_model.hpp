// HBM traffic and stalls of one op on one TensorCore. Bytes per operand
// follow from the on-chip buffer (VMEM / unified buffer): half of it holds
// the resident operand, half the double-buffered streams. Loads overlap
// compute (double buffering); only the first tile's load is exposed, and
// the op waits on memory when its bytes need longer than its compute.
#pragma once

#include <cstdint>

namespace accel::tpu {

// Sizes of an op's whole tensors in HBM, in bytes.
struct OperandBytes {
  std::int64_t input = 0;
  std::int64_t weights = 0;
  std::int64_t output = 0;
};

// Bytes that cross HBM for each operand.
struct HbmTraffic {
  std::int64_t input = 0;
  std::int64_t weights = 0;
  std::int64_t output = 0;
  std::int64_t input_passes = 1;   // times the input is streamed
  std::int64_t weight_passes = 1;  // times the weights are streamed
  std::int64_t epilogue = 0;       // an MXU op's epilogue operands (bias, relu mask), read once
  std::int64_t total() const { return input + weights + output + epilogue; }
};

// If everything fits in half the buffer, each operand moves once. Otherwise
// the tiling that makes the least traffic: one tensor (the input, the
// weights, or the output's partial sums) stays resident in chunks of a
// quarter of the buffer while the others stream past it.
HbmTraffic hbm_traffic(const OperandBytes& tensors, std::int64_t buffer_bytes);

struct MemoryTiming {
  std::int64_t memory_cycles = 0;  // cycles HBM needs for the traffic
  std::int64_t stall_cycles = 0;   // cycles the op waits beyond its compute
  std::int64_t total_cycles = 0;   // compute + stalls
  bool memory_bound = false;       // memory_cycles > compute_cycles
};

// `first_tile_bytes` must arrive before the first MXU can start.
MemoryTiming overlap_with_compute(std::int64_t compute_cycles, std::int64_t traffic_bytes,
                                  std::int64_t first_tile_bytes, double bytes_per_cycle, bool ideal_memory);

}  // namespace accel::tpu
