// Vector-unit (VPU) cycles for the ops that do not use the MXU: elementwise
// ops, reductions, softmax and optimizer updates. The unit processes
// sublanes x lanes elements per instruction and issues alus_per_lane
// instructions per cycle; each op kind costs a fixed number of vector
// instructions per element (the table in vector_unit_model.cpp).
#pragma once

#include <cstdint>
#include <string_view>

#include "timing/hardware_config.hpp"

namespace accel::tpu {

enum class VectorOpKind {
  kElementwise,      // add, mul, relu, ...: 1 instruction
  kTranscendental,   // exp, tanh, sigmoid: 4 instructions
  kReduction,        // sum / max over the elements
  kSoftmax,          // max, subtract, exp, sum, scale
  kSgdUpdate,        // w -= lr * g
  kMomentumUpdate,   // v = mu * v + g; w -= lr * v
  kAdamUpdate,       // m, v moments, bias correction, rsqrt, update
};

std::string_view to_string(VectorOpKind kind);
bool parse_vector_op_kind(std::string_view text, VectorOpKind& out);

struct VectorOpProfile {
  int instructions_per_element = 1;
  int tensors_read = 1;      // tensors of `elements` read from HBM
  int tensors_written = 1;   // tensors of `elements` written to HBM
};
VectorOpProfile vector_op_profile(VectorOpKind kind);

struct VectorUnitCycles {
  std::int64_t cycles = 0;
  std::int64_t vector_registers = 0;  // ceil(elements / (sublanes * lanes))
};

VectorUnitCycles vector_unit_cycles(const VectorUnitConfig& unit, VectorOpKind kind, std::int64_t elements);

// Cycles of a program of `instructions_per_element` vector instructions run
// over `elements` elements (a fused kernel, an MXU op's epilogue): the
// formula of vector_unit_cycles with the program's own instruction count.
// 0 instructions or 0 elements cost 0 cycles.
VectorUnitCycles vector_program_cycles(const VectorUnitConfig& unit, std::int64_t instructions_per_element,
                                       std::int64_t elements);

// Cycles to combine a reduction's partial results across the sublanes and
// lanes of one vector register: a log2 tree.
std::int64_t reduction_tree_cycles(const VectorUnitConfig& unit);

}  // namespace accel::tpu
