// The vector work of fused kernels (see fused_work.hpp). Instruction counts
// come from the vector unit's table (timing/vector_unit_model.cpp), so an op
// costs the same inside a fusion as alone; loads and constants cost no
// vector instruction (their cost is the HBM traffic, or nothing), just as a
// plain ADD counts one instruction for reading two tensors and writing one.
#include "fused_work.hpp"

#include <accel/plugin/host_kernels.hpp>
#include <accel/plugin/op_classes.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include <fmt/format.h>

#include "timing/checked_count.hpp"
#include "timing/vector_unit_model.hpp"

namespace accel::tpu_sim {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, message);
}

bool is_fusable_op(AccelOp op) noexcept {
  return sdk::is_unary_elementwise(op) || sdk::is_binary_elementwise(op) || op == ACCEL_OP_SELECT ||
         op == ACCEL_OP_CAST;
}

int operand_count(AccelOp op) noexcept {
  if (op == ACCEL_OP_SELECT) return 3;
  return sdk::is_binary_elementwise(op) ? 2 : 1;
}

bool is_reduction(AccelOp op) noexcept {
  return op == ACCEL_OP_REDUCE_SUM || op == ACCEL_OP_REDUCE_MEAN || op == ACCEL_OP_REDUCE_MAX ||
         op == ACCEL_OP_REDUCE_MIN;
}

bool is_epilogue_op(AccelOp op) noexcept {
  return op == ACCEL_OP_MATMUL || op == ACCEL_OP_CONV2D || op == ACCEL_OP_CONV2D_BACKWARD_INPUT;
}

bool is_activation(AccelOp op) noexcept {
  return op == ACCEL_OP_RELU || op == ACCEL_OP_SIGMOID || op == ACCEL_OP_TANH;
}

constexpr std::int32_t kKnownEpilogueFlags = ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK;

// The epilogue fields of a 1.2 struct; flags 0 for an older one.
template <typename Attributes>
void epilogue_fields(const void* attributes, std::int32_t& flags, AccelOp& activation) {
  const auto* typed = static_cast<const Attributes*>(attributes);
  if (typed == nullptr || !ACCEL_STRUCT_HOLDS(typed, Attributes, activation)) return;
  flags = typed->epilogue_flags;
  activation = typed->activation;
}

}  // namespace

bool is_transcendental(AccelOp op) noexcept {
  switch (op) {
    case ACCEL_OP_EXP: case ACCEL_OP_LOG: case ACCEL_OP_SQRT: case ACCEL_OP_RSQRT: case ACCEL_OP_SIGMOID:
    case ACCEL_OP_TANH: case ACCEL_OP_RECIPROCAL: case ACCEL_OP_POW: case ACCEL_OP_ERF:
      return true;
    default:
      return false;
  }
}

std::int64_t vector_instructions_per_element(AccelOp op) {
  const tpu::VectorOpKind kind = is_transcendental(op) ? tpu::VectorOpKind::kTranscendental
                                                       : tpu::VectorOpKind::kElementwise;
  return tpu::vector_op_profile(kind).instructions_per_element;
}

FusionSummary summarize_fusion(const void* attributes, std::size_t num_inputs, std::size_t num_outputs) {
  const auto* program = static_cast<const AccelFusedElementwiseAttributes*>(attributes);
  if (program == nullptr || program->struct_size < sizeof(AccelFusedElementwiseAttributes)) {
    invalid("FUSED_ELEMENTWISE: AccelFusedElementwiseAttributes missing or too small");
  }
  if (program->rank < 0 || program->rank > ACCEL_MAX_RANK) {
    invalid(fmt::format("FUSED_ELEMENTWISE: rank {} outside 0..{}", program->rank, ACCEL_MAX_RANK));
  }
  if (program->num_instructions < 1 || program->num_instructions > ACCEL_FUSED_MAX_INSTRUCTIONS ||
      program->instructions == nullptr) {
    invalid(fmt::format("FUSED_ELEMENTWISE: {} instructions; expected 1..{}", program->num_instructions,
                        ACCEL_FUSED_MAX_INSTRUCTIONS));
  }
  if (program->num_outputs < 1 || static_cast<std::size_t>(program->num_outputs) != num_outputs ||
      program->outputs == nullptr) {
    invalid(fmt::format("FUSED_ELEMENTWISE: the program has {} outputs, the call {}", program->num_outputs,
                        num_outputs));
  }
  FusionSummary summary;
  summary.elements = 1;
  for (int32_t axis = 0; axis < program->rank; ++axis) {
    if (program->shape[axis] < 0) invalid("FUSED_ELEMENTWISE: a negative dimension in the iteration shape");
    summary.elements = tpu::checked_mul(summary.elements, program->shape[axis], "the fusion's elements");
  }
  summary.instructions = program->num_instructions;
  summary.loaded.assign(num_inputs, false);
  for (int32_t index = 0; index < program->num_instructions; ++index) {
    const AccelFusedInstruction& instruction = program->instructions[index];
    switch (instruction.kind) {
      case ACCEL_FUSED_LOAD: {
        const int32_t input = instruction.operands[0];
        if (input < 0 || static_cast<std::size_t>(input) >= num_inputs) {
          invalid(fmt::format("FUSED_ELEMENTWISE: instruction {} loads input {} of {}", index, input, num_inputs));
        }
        summary.loaded[static_cast<std::size_t>(input)] = true;
        break;
      }
      case ACCEL_FUSED_CONSTANT: break;
      case ACCEL_FUSED_OP: {
        if (!is_fusable_op(instruction.op)) {
          invalid(fmt::format("FUSED_ELEMENTWISE: instruction {} is {}, not an elementwise op, SELECT or CAST",
                              index, host_kernels::op_name(instruction.op)));
        }
        for (int operand = 0; operand < operand_count(instruction.op); ++operand) {
          const int32_t value = instruction.operands[operand];
          if (value < 0 || value >= index) {
            invalid(fmt::format("FUSED_ELEMENTWISE: instruction {} reads value {}, not an earlier one", index, value));
          }
        }
        summary.ops.push_back(instruction.op);
        summary.vector_instructions_per_element = tpu::checked_add(
            summary.vector_instructions_per_element, vector_instructions_per_element(instruction.op),
            "the fusion's instructions");
        break;
      }
      default:
        invalid(fmt::format("FUSED_ELEMENTWISE: instruction {} has an unknown kind {}", index,
                            static_cast<int>(instruction.kind)));
    }
  }
  for (int32_t index = 0; index < program->num_outputs; ++index) {
    const AccelFusedOutput& output = program->outputs[index];
    if (output.value < 0 || output.value >= program->num_instructions) {
      invalid(fmt::format("FUSED_ELEMENTWISE: output {} stores value {} of {}", index, output.value,
                          program->num_instructions));
    }
    if (output.reduce_op == 0) continue;
    if (!is_reduction(output.reduce_op)) {
      invalid(fmt::format("FUSED_ELEMENTWISE: output {} reduces with {}, not REDUCE_SUM, _MEAN, _MAX or _MIN",
                          index, host_kernels::op_name(output.reduce_op)));
    }
    summary.reductions.push_back(output.reduce_op);
  }
  return summary;
}

EpilogueSummary read_epilogue(AccelOp op, const void* attributes, std::size_t num_inputs) {
  EpilogueSummary epilogue;
  if (op == ACCEL_OP_MATMUL) {
    epilogue_fields<AccelMatmulAttributes>(attributes, epilogue.flags, epilogue.activation);
  } else if (op == ACCEL_OP_CONV2D || op == ACCEL_OP_CONV2D_BACKWARD_INPUT) {
    epilogue_fields<AccelConv2dAttributes>(attributes, epilogue.flags, epilogue.activation);
  }
  if (epilogue.flags == 0) return epilogue;
  const char* name = host_kernels::op_name(op);
  if (!epilogue_is_known(op, epilogue.flags, epilogue.activation)) {
    invalid(fmt::format("{}: epilogue flags {} with activation {}; expected bits of BIAS (1), ACTIVATION (2) and "
                        "RELU_MASK (4), and RELU, SIGMOID or TANH",
                        name, epilogue.flags, host_kernels::op_name(epilogue.activation)));
  }
  std::size_t next_input = 2;  // after the op's own two inputs
  if ((epilogue.flags & ACCEL_EPILOGUE_BIAS) != 0) {
    epilogue.bias_input = static_cast<int>(next_input++);
    epilogue.steps.push_back("bias_add");
    epilogue.vector_instructions_per_element += vector_instructions_per_element(ACCEL_OP_ADD);
  }
  if ((epilogue.flags & ACCEL_EPILOGUE_ACTIVATION) != 0) {
    epilogue.steps.push_back(epilogue.activation == ACCEL_OP_RELU      ? "relu"
                             : epilogue.activation == ACCEL_OP_SIGMOID ? "sigmoid"
                                                                       : "tanh");
    epilogue.vector_instructions_per_element += vector_instructions_per_element(epilogue.activation);
  }
  if ((epilogue.flags & ACCEL_EPILOGUE_RELU_MASK) != 0) {
    epilogue.mask_input = static_cast<int>(next_input++);
    epilogue.steps.push_back("relu_mask");
    epilogue.vector_instructions_per_element += vector_instructions_per_element(ACCEL_OP_RELU_BACKWARD);
  }
  if (num_inputs < next_input) {
    invalid(fmt::format("{}: epilogue flags {} need {} inputs; the call has {}", name, epilogue.flags, next_input,
                        num_inputs));
  }
  return epilogue;
}

bool epilogue_is_known(AccelOp op, std::int32_t flags, AccelOp activation) noexcept {
  if (!is_epilogue_op(op) || flags < 0 || (flags & ~kKnownEpilogueFlags) != 0) return false;
  return (flags & ACCEL_EPILOGUE_ACTIVATION) == 0 || is_activation(activation);
}

bool is_fused_kernel(AccelOp op, const void* attributes) noexcept {
  if (op == ACCEL_OP_FUSED_ELEMENTWISE || op == ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER) return true;
  std::int32_t flags = 0;
  AccelOp activation = ACCEL_OP_RELU;
  if (op == ACCEL_OP_MATMUL) {
    epilogue_fields<AccelMatmulAttributes>(attributes, flags, activation);
  } else if (op == ACCEL_OP_CONV2D || op == ACCEL_OP_CONV2D_BACKWARD_INPUT) {
    epilogue_fields<AccelConv2dAttributes>(attributes, flags, activation);
  }
  return flags != 0;
}

}  // namespace accel::tpu_sim
