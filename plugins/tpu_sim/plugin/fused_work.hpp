// The vector work of the fused kernels a compiled program sends: the
// program of a FUSED_ELEMENTWISE call (its instructions per element, its
// reductions, the inputs it loads) and the epilogue of an MXU op (bias add,
// activation, relu mask). Reads and checks the 1.2 attribute structs;
// op_costing turns the result into the timing model's VectorKernelWork and
// EpilogueWork.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace accel::tpu_sim {

// EXP, LOG, SQRT, RSQRT, SIGMOID, TANH, RECIPROCAL, POW, ERF: the vector unit
// evaluates them as short polynomials (VectorOpKind::kTranscendental).
bool is_transcendental(AccelOp op) noexcept;

// Vector instructions per element that `op` costs when it runs alone:
// kTranscendental's count for the transcendental ops, kElementwise's for the
// other elementwise ops (arithmetic, comparisons, SELECT, CAST, *_BACKWARD).
std::int64_t vector_instructions_per_element(AccelOp op);

// A FUSED_ELEMENTWISE program as the timing model sees it.
struct FusionSummary {
  std::int64_t elements = 0;                         // of the iteration shape
  int instructions = 0;                              // loads, constants and ops
  std::int64_t vector_instructions_per_element = 0;  // the ops', each as it costs alone
  std::vector<AccelOp> ops;                          // the ACCEL_FUSED_OP instructions, in order
  std::vector<AccelOp> reductions;                   // reduce_op of each reduced output
  std::vector<bool> loaded;                          // per input: does the program load it
};

// Reads the program of a call with `num_inputs` inputs and `num_outputs`
// outputs. Throws sdk::PluginError(InvalidArgument) naming what is wrong
// (a missing or short struct, an instruction count past the limit, an
// operand that names no input or no earlier value, an unknown reduction).
FusionSummary summarize_fusion(const void* attributes, std::size_t num_inputs, std::size_t num_outputs);

// The epilogue of a MATMUL, CONV2D or CONV2D_BACKWARD_INPUT call.
struct EpilogueSummary {
  std::int32_t flags = 0;  // AccelEpilogueFlag bits; 0: none
  AccelOp activation = ACCEL_OP_RELU;
  std::int64_t vector_instructions_per_element = 0;
  int bias_input = -1;  // index of the bias among the call's inputs, or -1
  int mask_input = -1;  // index of the relu mask, or -1
  std::vector<std::string_view> steps;  // "bias_add", the activation's name, "relu_mask"
};

// The call's epilogue; flags 0 for another op, no attributes, or a struct
// from before 1.2. Throws sdk::PluginError(InvalidArgument) when the flags
// name inputs the call lacks or an activation the emulator does not know.
EpilogueSummary read_epilogue(AccelOp op, const void* attributes, std::size_t num_inputs);

// True when the emulator can time this epilogue: a MATMUL, CONV2D or
// CONV2D_BACKWARD_INPUT with known flags and, with ACCEL_EPILOGUE_ACTIVATION,
// RELU, SIGMOID or TANH.
bool epilogue_is_known(AccelOp op, std::int32_t flags, AccelOp activation) noexcept;

// True for the kernels only a compiled program sends: FUSED_ELEMENTWISE,
// MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER and MXU ops with an epilogue
// (vmem_residency's "fused" mode keys on them).
bool is_fused_kernel(AccelOp op, const void* attributes) noexcept;

}  // namespace accel::tpu_sim
