// FUSED_ELEMENTWISE on the CUDA plugin (plugin API 1.2; docs/op-set.md,
// "FUSED_ELEMENTWISE"). The program is checked against the call by the rules
// the CPU reference checks (core/host_kernels/fused_program.cpp), a broken one
// being InvalidArgument naming the instruction or output, before anything is
// queued. It then runs as one launch of the interpreter kernel
// (fused_elementwise_kernel.cu), which stores every full-shape output; each
// reduced output is reduced afterwards by the plugin's REDUCE_* kernels
// (reduction_kernels.cu) from the full-shape output of the same value, or
// else from scratch memory the interpreter filled. A program with an integer
// DIV has its divisors checked on the device and read back (one stream
// synchronization); no other program waits for the device.
#include "cuda_check.hpp"
#include "op_dispatch.hpp"

#include <accel/plugin/op_set_names.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace accel::cuda {
namespace {

bool is_reduction(AccelOp op) { return op >= ACCEL_OP_REDUCE_SUM && op <= ACCEL_OP_REDUCE_MIN; }

// The name of an op for messages: its op-set name ("RELU_BACKWARD"), as the
// host kernels' messages give it; the number when it is none.
std::string op_text(AccelOp op) {
  if (op >= 0 && op < ACCEL_OP_COUNT) return sdk::op_set_name(op);
  return std::to_string(static_cast<int>(op));
}

// The operands of an op a fusion may hold: unary ops and CAST take 1, binary
// ops 2, SELECT 3; 0 for any other op.
int operand_count_of(AccelOp op) {
  if (sdk::is_unary_elementwise(op) || op == ACCEL_OP_CAST) return 1;
  if (sdk::is_binary_elementwise(op)) return 2;
  return op == ACCEL_OP_SELECT ? 3 : 0;
}

// Whether the op set defines a unary or binary elementwise op, or a
// reduction, for operands of `dtype` (docs/op-set.md's tables; not what the
// plugin's plain kernels claim).
bool defined_for(AccelOp op, AccelDType dtype) {
  const bool numeric = is_float(dtype) || is_int(dtype);
  switch (op) {
    case ACCEL_OP_LOGICAL_NOT: return dtype == ACCEL_DTYPE_BOOL;
    case ACCEL_OP_EQUAL:
    case ACCEL_OP_NOT_EQUAL: return numeric || dtype == ACCEL_DTYPE_BOOL;
    case ACCEL_OP_NEG:
    case ACCEL_OP_ABS:
    case ACCEL_OP_SQUARE:
    case ACCEL_OP_RELU:
    case ACCEL_OP_SIGN:
    case ACCEL_OP_ADD:
    case ACCEL_OP_SUB:
    case ACCEL_OP_MUL:
    case ACCEL_OP_DIV:
    case ACCEL_OP_MAXIMUM:
    case ACCEL_OP_MINIMUM:
    case ACCEL_OP_LESS:
    case ACCEL_OP_LESS_EQUAL:
    case ACCEL_OP_GREATER:
    case ACCEL_OP_GREATER_EQUAL: return numeric;
    default: return is_reduction(op) ? numeric : is_float(dtype);  // EXP .. RECIPROCAL, ERF, POW, *_BACKWARD
  }
}

std::string describe(const View& v) { return sdk::dtype_name(v.dtype) + shape_text(v); }

std::string tensor_text(const AccelTensor& tensor) {
  std::string text = std::string(sdk::dtype_name(tensor.dtype)) + "[";
  for (int32_t d = 0; d < std::clamp(tensor.rank, 0, kMaxRank); ++d) {
    text += (d ? "," : "") + std::to_string(tensor.shape[d]);
  }
  return text + "]";
}

// "FUSED_ELEMENTWISE(float32[4,5] -> float32[4,5])", the start of every message.
std::string call_text(const AccelOpCall& call) {
  std::string text = "FUSED_ELEMENTWISE(";
  for (int32_t i = 0; call.inputs != nullptr && i < call.num_inputs; ++i) {
    text += (i ? ", " : "") + tensor_text(call.inputs[i]);
  }
  text += " -> ";
  for (int32_t i = 0; call.outputs != nullptr && i < call.num_outputs; ++i) {
    text += (i ? ", " : "") + tensor_text(call.outputs[i]);
  }
  return text + ")";
}

bool overlaps(const View& a, const View& b) {
  if (a.count == 0 || b.count == 0) return false;
  const char* a_begin = static_cast<const char*>(a.data);
  const char* b_begin = static_cast<const char*>(b.data);
  return a_begin < b_begin + b.bytes() && b_begin < a_begin + a.bytes();
}

// A program checked against its call.
struct CheckedFusion {
  View iteration;  // rank, shape and count of the iteration space (no data)
  std::vector<View> inputs, outputs;
  std::vector<AccelDType> dtypes;  // of each instruction's value
  std::vector<bool> live;          // some output depends on the instruction
  std::vector<std::array<bool, kMaxRank>> reduced_axes;  // per output
};

class FusionChecker {
 public:
  FusionChecker(const AccelOpCall& call, const AccelFusedElementwiseAttributes& program)
      : call_(call), program_(program) {}

  CheckedFusion check() {
    check_program_shape();
    for (int32_t i = 0; i < call_.num_inputs; ++i) {
      fusion_.inputs.push_back(view_of(call_.inputs[i], ("input " + std::to_string(i)).c_str()));
    }
    for (int32_t j = 0; j < call_.num_outputs; ++j) {
      fusion_.outputs.push_back(view_of(call_.outputs[j], ("output " + std::to_string(j)).c_str()));
    }
    for (int32_t index = 0; index < program_.num_instructions; ++index) {
      fusion_.dtypes.push_back(check_instruction(index, program_.instructions[index]));
    }
    for (int32_t j = 0; j < program_.num_outputs; ++j) check_output(j, program_.outputs[j]);
    check_aliasing();
    mark_live();
    return std::move(fusion_);
  }

 private:
  [[noreturn]] static void fail_at(const std::string& where, const std::string& what) { invalid(where + ": " + what); }

  void check_program_shape() {
    if (program_.rank < 0 || program_.rank > kMaxRank) {
      invalid("iteration rank " + std::to_string(program_.rank) + " is outside [0, " + std::to_string(kMaxRank) + "]");
    }
    View& iteration = fusion_.iteration;
    iteration.rank = program_.rank;
    iteration.count = 1;
    for (int32_t d = 0; d < program_.rank; ++d) {
      const int64_t dim = program_.shape[d];
      if (dim < 0) invalid("iteration shape has a negative dimension");
      if (dim != 0 && iteration.count > std::numeric_limits<int64_t>::max() / 8 / dim) {
        invalid("iteration shape has too many elements");
      }
      iteration.shape[d] = dim;
      iteration.count *= dim;
    }
    if (program_.num_instructions < 1 || program_.num_instructions > kFusedMaxSteps ||
        program_.instructions == nullptr) {
      invalid("a program has 1 to " + std::to_string(kFusedMaxSteps) + " instructions, got " +
              std::to_string(program_.num_instructions));
    }
    if (program_.num_outputs < 1 || program_.num_outputs > kFusedMaxStores || program_.outputs == nullptr) {
      invalid("a program has 1 to " + std::to_string(kFusedMaxStores) + " outputs, got " +
              std::to_string(program_.num_outputs));
    }
    if (program_.num_outputs != call_.num_outputs || call_.outputs == nullptr) {
      invalid("the program has " + std::to_string(program_.num_outputs) + " outputs but the call passes " +
              std::to_string(call_.num_outputs));
    }
    if (call_.num_inputs > kFusedMaxInputs || (call_.num_inputs > 0 && call_.inputs == nullptr)) {
      invalid("a fusion takes at most " + std::to_string(kFusedMaxInputs) + " inputs, got " +
              std::to_string(call_.num_inputs));
    }
  }

  bool broadcasts_to_iteration(const View& tensor) const {
    const View& iteration = fusion_.iteration;
    if (tensor.rank > iteration.rank) return false;
    const int32_t lead = iteration.rank - tensor.rank;
    for (int32_t d = 0; d < tensor.rank; ++d) {
      if (tensor.shape[d] != 1 && tensor.shape[d] != iteration.shape[lead + d]) return false;
    }
    return true;
  }

  AccelDType check_instruction(int32_t index, const AccelFusedInstruction& instruction) {
    const std::string where = "instruction " + std::to_string(index);
    if (!is_known(instruction.dtype)) fail_at(where, "unknown dtype " + std::to_string(instruction.dtype));
    switch (instruction.kind) {
      case ACCEL_FUSED_LOAD: {
        const int32_t input = instruction.operands[0];
        if (input < 0 || input >= call_.num_inputs) {
          fail_at(where, "loads input " + std::to_string(input) + ", but the call has " +
                             std::to_string(call_.num_inputs) + " inputs");
        }
        const View& tensor = fusion_.inputs[static_cast<size_t>(input)];
        if (tensor.dtype != instruction.dtype) {
          fail_at(where, "loads input " + std::to_string(input) + " " + describe(tensor) + " as " +
                             sdk::dtype_name(instruction.dtype));
        }
        if (!broadcasts_to_iteration(tensor)) {
          fail_at(where, "input " + std::to_string(input) + " " + describe(tensor) +
                             " does not broadcast to the iteration shape " + shape_text(fusion_.iteration));
        }
        return instruction.dtype;
      }
      case ACCEL_FUSED_CONSTANT: return instruction.dtype;
      case ACCEL_FUSED_OP: return check_op(where, index, instruction);
      default: fail_at(where, "unknown instruction kind " + std::to_string(instruction.kind));
    }
  }

  AccelDType check_op(const std::string& where, int32_t index, const AccelFusedInstruction& instruction) {
    const AccelOp op = instruction.op;
    const int operand_count = operand_count_of(op);
    if (operand_count == 0) {
      fail_at(where, "op " + op_text(op) +
                         " cannot be fused: a fusion holds unary and binary elementwise ops, SELECT and CAST");
    }
    AccelDType operand_dtypes[3] = {};
    for (int k = 0; k < operand_count; ++k) {
      const int32_t operand = instruction.operands[k];
      if (operand < 0 || operand >= index) {
        fail_at(where, op_text(op) + " operand " + std::to_string(k) + " is value " + std::to_string(operand) +
                           "; an operand must be an earlier instruction (0 to " + std::to_string(index - 1) + ")");
      }
      operand_dtypes[k] = fusion_.dtypes[static_cast<size_t>(operand)];
    }
    auto mismatch = [&](const std::string& what) { fail_at(where, op_text(op) + " " + what); };
    const AccelDType dtype = operand_dtypes[0];
    AccelDType result = dtype;
    if (op == ACCEL_OP_CAST) {
      result = instruction.dtype;
    } else if (op == ACCEL_OP_SELECT) {
      if (dtype != ACCEL_DTYPE_BOOL) mismatch(std::string("condition must be bool, got ") + sdk::dtype_name(dtype));
      if (operand_dtypes[1] != operand_dtypes[2]) {
        mismatch(std::string("values differ in dtype: ") + sdk::dtype_name(operand_dtypes[1]) + " and " +
                 sdk::dtype_name(operand_dtypes[2]));
      }
      result = operand_dtypes[1];
    } else {
      if (operand_count == 2 && operand_dtypes[1] != dtype) {
        mismatch(std::string("operands differ in dtype: ") + sdk::dtype_name(dtype) + " and " +
                 sdk::dtype_name(operand_dtypes[1]));
      }
      if (!defined_for(op, dtype)) mismatch(std::string("is not defined for ") + sdk::dtype_name(dtype));
      result = is_comparison(op) ? ACCEL_DTYPE_BOOL : dtype;
    }
    if (instruction.dtype != result) {
      mismatch(std::string("yields ") + sdk::dtype_name(result) + ", but the instruction says " +
               sdk::dtype_name(instruction.dtype));
    }
    return result;
  }

  void check_output(int32_t index, const AccelFusedOutput& output) {
    const std::string where = "output " + std::to_string(index);
    if (output.value < 0 || output.value >= program_.num_instructions) {
      fail_at(where, "stores value " + std::to_string(output.value) + ", but the program has " +
                         std::to_string(program_.num_instructions) + " instructions");
    }
    const AccelDType dtype = fusion_.dtypes[static_cast<size_t>(output.value)];
    const View& tensor = fusion_.outputs[static_cast<size_t>(index)];
    if (tensor.dtype != dtype) {
      fail_at(where, "is " + describe(tensor) + " but its value is " + sdk::dtype_name(dtype));
    }
    const View& iteration = fusion_.iteration;
    View expected = iteration;
    expected.dtype = dtype;
    std::array<bool, kMaxRank> reduced{};
    const bool reduces = static_cast<int>(output.reduce_op) != 0;
    if (reduces) {
      if (!is_reduction(output.reduce_op)) {
        fail_at(where, "reduce_op " + std::to_string(output.reduce_op) +
                           " is none of 0, REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX, REDUCE_MIN");
      }
      if (!defined_for(output.reduce_op, dtype)) {
        fail_at(where, op_text(output.reduce_op) + " is not defined for " + sdk::dtype_name(dtype));
      }
      if (output.num_axes < 0 || output.num_axes > iteration.rank) {
        fail_at(where, "num_axes " + std::to_string(output.num_axes) + " is outside [0, " +
                           std::to_string(iteration.rank) + "]");
      }
      for (int32_t k = 0; k < output.num_axes; ++k) {
        const int32_t axis = output.axes[k];
        if (axis < 0 || axis >= iteration.rank || (k > 0 && axis <= output.axes[k - 1])) {
          fail_at(where, "reduction axes must be sorted, unique and within the iteration rank " +
                             std::to_string(iteration.rank) + "; axis " + std::to_string(axis) + " is not");
        }
        reduced[static_cast<size_t>(axis)] = true;
      }
      expected.rank = 0;
      for (int32_t d = 0; d < iteration.rank; ++d) {
        if (!reduced[static_cast<size_t>(d)]) {
          expected.shape[expected.rank++] = iteration.shape[d];
        } else if (output.keep_dims) {
          expected.shape[expected.rank++] = 1;
        }
      }
    }
    if (!same_shape(tensor, expected)) {
      fail_at(where, "is " + describe(tensor) + " but should be " + describe(expected) +
                         (reduces ? " (the reduced shape)" : " (the iteration shape)"));
    }
    fusion_.reduced_axes.push_back(reduced);
  }

  // An output may share memory only with an input of its own shape and
  // dtype, starting at the same byte; outputs never share memory.
  void check_aliasing() const {
    const std::vector<View>& inputs = fusion_.inputs;
    const std::vector<View>& outputs = fusion_.outputs;
    for (size_t j = 0; j < outputs.size(); ++j) {
      for (size_t k = 0; k < j; ++k) {
        if (overlaps(outputs[j], outputs[k])) {
          invalid("output " + std::to_string(j) + " overlaps output " + std::to_string(k));
        }
      }
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (!overlaps(outputs[j], inputs[i])) continue;
        if (outputs[j].data != inputs[i].data || !same_shape(outputs[j], inputs[i]) ||
            outputs[j].dtype != inputs[i].dtype) {
          invalid("output " + std::to_string(j) + " " + describe(outputs[j]) + " overlaps input " +
                  std::to_string(i) + " " + describe(inputs[i]) +
                  "; an output may only be the same tensor as an input of its shape and dtype");
        }
      }
    }
  }

  void mark_live() {
    fusion_.live.assign(static_cast<size_t>(program_.num_instructions), false);
    for (int32_t j = 0; j < program_.num_outputs; ++j) {
      fusion_.live[static_cast<size_t>(program_.outputs[j].value)] = true;
    }
    for (int32_t index = program_.num_instructions - 1; index >= 0; --index) {
      const AccelFusedInstruction& instruction = program_.instructions[index];
      if (!fusion_.live[static_cast<size_t>(index)] || instruction.kind != ACCEL_FUSED_OP) continue;
      for (int k = 0; k < operand_count_of(instruction.op); ++k) {
        fusion_.live[static_cast<size_t>(instruction.operands[k])] = true;
      }
    }
  }

  const AccelOpCall& call_;
  const AccelFusedElementwiseAttributes& program_;
  CheckedFusion fusion_;
};

// A CONSTANT in its compute type, converted as FILL converts a double.
ElementValue constant_value(AccelDType dtype, double value) {
  const uint64_t bits = scalar_bits(dtype, value);
  ElementValue v;
  v.i64 = 0;
  switch (dtype) {
    case ACCEL_DTYPE_F32: {
      const uint32_t word = static_cast<uint32_t>(bits);
      std::memcpy(&v.f, &word, sizeof(word));
      break;
    }
    case ACCEL_DTYPE_BF16: v.f = sdk::bf16_to_float(static_cast<uint16_t>(bits)); break;
    case ACCEL_DTYPE_F16: v.f = sdk::f16_to_float(static_cast<uint16_t>(bits)); break;
    case ACCEL_DTYPE_I32: v.i32 = static_cast<int32_t>(static_cast<uint32_t>(bits)); break;
    case ACCEL_DTYPE_I64: v.i64 = static_cast<int64_t>(bits); break;
    default: v.u8 = static_cast<uint8_t>(bits); break;
  }
  return v;
}

// The interpreter's program: the live instructions in order, renumbered, and
// the inputs they load. Stores are added by the caller.
FusedKernelPlan kernel_plan(const CheckedFusion& fusion, const AccelFusedElementwiseAttributes& program,
                            std::vector<int32_t>& step_of) {
  FusedKernelPlan plan;
  const View& iteration = fusion.iteration;
  plan.rank = iteration.rank;
  plan.count = iteration.count;
  for (int32_t d = 0; d < iteration.rank; ++d) plan.shape[d] = iteration.shape[d];
  step_of.assign(static_cast<size_t>(program.num_instructions), -1);
  bool loaded[kFusedMaxInputs] = {};
  for (int32_t index = 0; index < program.num_instructions; ++index) {
    if (!fusion.live[static_cast<size_t>(index)]) continue;
    const AccelFusedInstruction& instruction = program.instructions[index];
    step_of[static_cast<size_t>(index)] = plan.num_steps;
    FusedStep& step = plan.steps[plan.num_steps++];
    step.kind = static_cast<uint8_t>(instruction.kind);
    step.dtype = static_cast<uint8_t>(fusion.dtypes[static_cast<size_t>(index)]);
    step.instruction = static_cast<uint8_t>(index);
    switch (instruction.kind) {
      case ACCEL_FUSED_LOAD:
        step.operands[0] = static_cast<uint8_t>(instruction.operands[0]);
        loaded[instruction.operands[0]] = true;
        break;
      case ACCEL_FUSED_CONSTANT: step.constant = constant_value(instruction.dtype, instruction.value); break;
      default: {
        const AccelOp op = instruction.op;
        for (int k = 0; k < operand_count_of(op); ++k) {
          step.operands[k] = static_cast<uint8_t>(step_of[static_cast<size_t>(instruction.operands[k])]);
        }
        const AccelDType operand_dtype = fusion.dtypes[static_cast<size_t>(instruction.operands[0])];
        step.op = static_cast<uint8_t>(op);
        step.operand_dtype = static_cast<uint8_t>(operand_dtype);
        step.checks_divisor = op == ACCEL_OP_DIV && is_int(operand_dtype);
        break;
      }
    }
  }
  for (size_t i = 0; i < fusion.inputs.size(); ++i) {
    const View& input = fusion.inputs[i];
    plan.inputs[i] = input.data;
    plan.input_dtypes[i] = static_cast<uint8_t>(input.dtype);
    // An input that broadcasts with as many elements as the iteration space
    // differs from it only by size-1 axes: element i is at i.
    plan.input_contiguous[i] = input.count == iteration.count;
    if (loaded[i] && !plan.input_contiguous[i]) {  // the loads checked that it broadcasts
      broadcast_strides(input, iteration, plan.input_strides[i], "FUSED_ELEMENTWISE");
      plan.needs_coordinates = true;
    }
  }
  return plan;
}

// Useful flops, as the op set counts them: one per element for each op on
// float values (SELECT and CAST move values) and for each float reduction.
double fused_flops(const CheckedFusion& fusion, const AccelFusedElementwiseAttributes& program) {
  int64_t per_element = 0;
  for (int32_t index = 0; index < program.num_instructions; ++index) {
    const AccelFusedInstruction& instruction = program.instructions[index];
    if (!fusion.live[static_cast<size_t>(index)] || instruction.kind != ACCEL_FUSED_OP) continue;
    if (instruction.op == ACCEL_OP_SELECT || instruction.op == ACCEL_OP_CAST) continue;
    if (is_float(fusion.dtypes[static_cast<size_t>(instruction.operands[0])])) ++per_element;
  }
  for (int32_t j = 0; j < program.num_outputs; ++j) {
    const AccelFusedOutput& output = program.outputs[j];
    if (static_cast<int>(output.reduce_op) != 0 && is_float(fusion.dtypes[static_cast<size_t>(output.value)])) {
      ++per_element;
    }
  }
  return static_cast<double>(per_element) * static_cast<double>(fusion.iteration.count);
}

uint64_t round_up(uint64_t bytes, uint64_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

OpCost run_checked(AccelDevice& device, const CheckedFusion& fusion,
                   const AccelFusedElementwiseAttributes& program) {
  std::vector<int32_t> step_of;
  FusedKernelPlan plan = kernel_plan(fusion, program, step_of);
  auto add_store = [&](void* data, int32_t value) {
    plan.stores[plan.num_stores] = data;
    plan.store_steps[plan.num_stores++] = static_cast<uint8_t>(step_of[static_cast<size_t>(value)]);
  };
  auto reduces = [&](int32_t j) { return static_cast<int>(program.outputs[j].reduce_op) != 0; };
  auto full_shape_output_of = [&](int32_t value) -> const View* {
    for (int32_t j = 0; j < program.num_outputs; ++j) {
      if (!reduces(j) && program.outputs[j].value == value) return &fusion.outputs[static_cast<size_t>(j)];
    }
    return nullptr;
  };

  // Full-shape outputs are stored. A reduced output is reduced from the
  // full-shape output that stores its value, else from a scratch region the
  // interpreter stores the value in (one per value), so each output adds at
  // most one store.
  std::vector<int32_t> scratch_values;
  std::vector<uint64_t> scratch_offsets;
  uint64_t scratch_bytes = 0;
  for (int32_t j = 0; j < program.num_outputs; ++j) {
    const int32_t value = program.outputs[j].value;
    if (!reduces(j)) {
      add_store(fusion.outputs[static_cast<size_t>(j)].data, value);
    } else if (full_shape_output_of(value) == nullptr &&
               std::find(scratch_values.begin(), scratch_values.end(), value) == scratch_values.end()) {
      scratch_values.push_back(value);
      scratch_offsets.push_back(scratch_bytes);
      const uint64_t bytes = static_cast<uint64_t>(fusion.iteration.count) *
                             sdk::dtype_size(fusion.dtypes[static_cast<size_t>(value)]);
      scratch_bytes += round_up(bytes, CachingAllocator::kAlignment);
    }
  }
  Scratch scratch(*device.allocator, scratch_bytes);
  auto scratch_of = [&](int32_t value) {
    const auto found = std::find(scratch_values.begin(), scratch_values.end(), value);
    return static_cast<char*>(scratch.get()) + scratch_offsets[static_cast<size_t>(found - scratch_values.begin())];
  };
  for (int32_t value : scratch_values) add_store(scratch_of(value), value);
  auto reduction_source_of = [&](int32_t value) -> const void* {
    const View* stored = full_shape_output_of(value);
    return stored != nullptr ? stored->data : scratch_of(value);
  };

  // Stage 1: the interpreter, with the divisor check when there is one to make.
  bool checks_divisor = false;
  for (int32_t s = 0; s < plan.num_steps; ++s) checks_divisor = checks_divisor || plan.steps[s].checks_divisor;
  checks_divisor = checks_divisor && plan.count > 0;
  if (checks_divisor && device.recording != nullptr) {
    // The check reads its flag back on the host, which a CUDA graph cannot.
    throw sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED, "an integer division's zero-divisor check cannot be recorded");
  }
  Scratch divisor_flag(*device.allocator, checks_divisor ? sizeof(int32_t) : 0);
  int32_t* zero_divisor = static_cast<int32_t*>(divisor_flag.get());
  constexpr int32_t kNoZeroDivisor = 0x7F7F7F7F;  // every byte 0x7F, above any instruction index
  if (checks_divisor) ACCEL_CUDA_CHECK(cudaMemsetAsync(zero_divisor, 0x7F, sizeof(int32_t), device.stream));
  check_launch(launch_fused_elementwise(plan, zero_divisor, device.stream), "fused_elementwise");
  if (checks_divisor) {
    int32_t first_zero_divisor = kNoZeroDivisor;
    ACCEL_CUDA_CHECK(cudaMemcpyAsync(&first_zero_divisor, zero_divisor, sizeof(int32_t), cudaMemcpyDeviceToHost,
                                     device.stream));
    ACCEL_CUDA_CHECK(cudaStreamSynchronize(device.stream));
    if (first_zero_divisor != kNoZeroDivisor) {
      invalid("instruction " + std::to_string(first_zero_divisor) + ": integer division by zero");
    }
  }

  // Stage 2: the reduced outputs, each as its REDUCE_* over the iteration space.
  for (int32_t j = 0; j < program.num_outputs; ++j) {
    if (!reduces(j)) continue;
    const AccelFusedOutput& output = program.outputs[j];
    View source = fusion.iteration;
    source.dtype = fusion.dtypes[static_cast<size_t>(output.value)];
    const ReducePlan reduction = reduce_plan(source, fusion.reduced_axes[static_cast<size_t>(j)].data());
    Scratch partials(*device.allocator, reduce_scratch_bytes(reduction));
    check_launch(launch_reduce(output.reduce_op, source.dtype, reduction_source_of(output.value),
                               fusion.outputs[static_cast<size_t>(j)].data, reduction, partials.get(),
                               device.stream),
                 "fused_elementwise reduction");
  }

  OpCost cost;
  cost.flops = fused_flops(fusion, program);
  for (const View& input : fusion.inputs) cost.bytes += static_cast<double>(input.bytes());
  for (const View& output : fusion.outputs) cost.bytes += static_cast<double>(output.bytes());
  return cost;
}

}  // namespace

OpCost run_fused_elementwise(AccelDevice& device, const AccelOpCall& call) {
  try {
    const auto& program = sdk::attributes_of<AccelFusedElementwiseAttributes>(call);
    const CheckedFusion fusion = FusionChecker(call, program).check();
    return run_checked(device, fusion, program);
  } catch (const sdk::PluginError& error) {
    throw sdk::PluginError(error.code(), call_text(call) + ": " + error.what());
  }
}

}  // namespace accel::cuda
