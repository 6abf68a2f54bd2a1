// Checks a FUSED_ELEMENTWISE program against its operands and resolves it
// into a FusedPlan (fused_program.hpp). Every rule here is written in
// docs/op-set.md ("FUSED_ELEMENTWISE"); a program that breaks one is
// InvalidArgument with the instruction or output named, never a wrong result.
#include "fused_program.hpp"

#include "kernels.hpp"

#include <accel/plugin/op_classes.hpp>

#include <algorithm>
#include <string>

namespace accel::host_kernels::detail {
namespace {

std::string dtype_text(AccelDType dtype) { return sdk::dtype_name(dtype); }

std::string shape_text(int32_t rank, const int64_t* shape) {
  std::string text = "[";
  for (int32_t axis = 0; axis < rank; ++axis) text += (axis ? "," : "") + std::to_string(shape[axis]);
  return text + "]";
}

bool is_known_dtype(AccelDType dtype) { return dtype >= ACCEL_DTYPE_F32 && dtype < ACCEL_DTYPE_COUNT; }
bool is_comparison(AccelOp op) { return op >= ACCEL_OP_EQUAL && op <= ACCEL_OP_GREATER_EQUAL; }
bool is_reduction(AccelOp op) { return op >= ACCEL_OP_REDUCE_SUM && op <= ACCEL_OP_REDUCE_MIN; }
bool is_transcendental(AccelOp op) {
  return op == ACCEL_OP_EXP || op == ACCEL_OP_LOG || op == ACCEL_OP_SIGMOID || op == ACCEL_OP_TANH ||
         op == ACCEL_OP_POW || op == ACCEL_OP_ERF;
}

// Elementary operations per element, for the parallel grain: a libm call
// costs about as much as 16 additions.
int64_t cost_of(const FusedStep& step) {
  if (!step.live || step.kind == ACCEL_FUSED_CONSTANT) return 0;
  return step.kind == ACCEL_FUSED_OP && is_transcendental(step.op) ? 16 : 1;
}

// Bytes of a value's compute type: BF16/F16 are computed in float.
int64_t compute_size_of(AccelDType dtype) {
  const size_t stored = sdk::dtype_size(dtype);
  return stored == 2 ? 4 : static_cast<int64_t>(stored);
}

bool overlaps(const HostTensor& a, const HostTensor& b) {
  const int64_t a_bytes = element_count(a) * static_cast<int64_t>(element_size(a));
  const int64_t b_bytes = element_count(b) * static_cast<int64_t>(element_size(b));
  if (a_bytes == 0 || b_bytes == 0) return false;
  const char* a_begin = static_cast<const char*>(a.data);
  const char* b_begin = static_cast<const char*>(b.data);
  return a_begin < b_begin + b_bytes && b_begin < a_begin + a_bytes;
}

class Planner {
 public:
  Planner(std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
          const AccelFusedElementwiseAttributes& program)
      : inputs_(inputs), outputs_(outputs), program_(program) {}

  FusedPlan plan() {
    check_program_shape();
    for (int32_t index = 0; index < program_.num_instructions; ++index) {
      plan_.steps.push_back(plan_instruction(index, program_.instructions[index]));
    }
    for (int32_t index = 0; index < program_.num_outputs; ++index) {
      plan_.outputs.push_back(plan_output(index, program_.outputs[index]));
    }
    check_aliasing();
    choose_direct_outputs();
    mark_live_steps();
    build_layout();
    for (const FusedStep& step : plan_.steps) plan_.cost_per_element += cost_of(step);
    return std::move(plan_);
  }

 private:
  [[noreturn]] static void fail_at(const std::string& where, const std::string& what) {
    invalid(where + ": " + what);
  }

  void check_program_shape() {
    if (program_.rank < 0 || program_.rank > ACCEL_MAX_RANK) {
      invalid("iteration rank " + std::to_string(program_.rank) + " is outside [0, " +
              std::to_string(ACCEL_MAX_RANK) + "]");
    }
    iteration_.rank = program_.rank;
    plan_.total = 1;
    for (int32_t axis = 0; axis < program_.rank; ++axis) {
      if (program_.shape[axis] < 0) invalid("iteration shape has a negative dimension");
      iteration_.shape[axis] = program_.shape[axis];
      plan_.total *= program_.shape[axis];
    }
    if (program_.num_instructions < 1 || program_.num_instructions > ACCEL_FUSED_MAX_INSTRUCTIONS ||
        program_.instructions == nullptr) {
      invalid("a program has 1 to " + std::to_string(ACCEL_FUSED_MAX_INSTRUCTIONS) + " instructions, got " +
              std::to_string(program_.num_instructions));
    }
    if (program_.num_outputs < 1 || program_.num_outputs > ACCEL_FUSED_MAX_OUTPUTS || program_.outputs == nullptr) {
      invalid("a program has 1 to " + std::to_string(ACCEL_FUSED_MAX_OUTPUTS) + " outputs, got " +
              std::to_string(program_.num_outputs));
    }
    if (static_cast<size_t>(program_.num_outputs) != outputs_.size()) {
      invalid("the program has " + std::to_string(program_.num_outputs) + " outputs but the call passes " +
              std::to_string(outputs_.size()));
    }
    if (inputs_.size() > ACCEL_FUSED_MAX_INPUTS) {
      invalid("a fusion takes at most " + std::to_string(ACCEL_FUSED_MAX_INPUTS) + " inputs, got " +
              std::to_string(inputs_.size()));
    }
  }

  bool broadcasts_to_iteration(const HostTensor& tensor) const {
    if (tensor.rank > iteration_.rank) return false;
    const int lead = iteration_.rank - tensor.rank;
    for (int axis = 0; axis < tensor.rank; ++axis) {
      if (tensor.shape[axis] != 1 && tensor.shape[axis] != iteration_.shape[lead + axis]) return false;
    }
    return true;
  }

  FusedStep plan_instruction(int32_t index, const AccelFusedInstruction& instruction) {
    const std::string where = "instruction " + std::to_string(index);
    FusedStep step;
    step.kind = instruction.kind;
    step.dtype = instruction.dtype;
    if (!is_known_dtype(instruction.dtype)) fail_at(where, "unknown dtype " + std::to_string(instruction.dtype));
    step.compute_size = compute_size_of(instruction.dtype);
    switch (instruction.kind) {
      case ACCEL_FUSED_LOAD: {
        const int32_t input = instruction.operands[0];
        if (input < 0 || input >= static_cast<int32_t>(inputs_.size())) {
          fail_at(where, "loads input " + std::to_string(input) + ", but the call has " +
                             std::to_string(inputs_.size()) + " inputs");
        }
        const HostTensor& tensor = inputs_[static_cast<size_t>(input)];
        if (tensor.dtype != instruction.dtype) {
          fail_at(where, "loads input " + std::to_string(input) + " " + describe(tensor) + " as " +
                             dtype_text(instruction.dtype));
        }
        if (!broadcasts_to_iteration(tensor)) {
          fail_at(where, "input " + std::to_string(input) + " " + describe(tensor) +
                             " does not broadcast to the iteration shape " +
                             shape_text(iteration_.rank, iteration_.shape));
        }
        step.input = input;
        step.load = load_kernel(tensor.dtype);
        step.stored_size = static_cast<int64_t>(element_size(tensor));
        // Storage that is already the compute type is read in place.
        step.zero_copy = tensor.dtype != ACCEL_DTYPE_BF16 && tensor.dtype != ACCEL_DTYPE_F16;
        return step;
      }
      case ACCEL_FUSED_CONSTANT:
        constant_value(instruction.value, instruction.dtype, step.constant);
        return step;
      case ACCEL_FUSED_OP:
        plan_op(where, index, instruction, step);
        return step;
      default:
        fail_at(where, "unknown instruction kind " + std::to_string(instruction.kind));
    }
  }

  void plan_op(const std::string& where, int32_t index, const AccelFusedInstruction& instruction, FusedStep& step) {
    const AccelOp op = instruction.op;
    step.op = op;
    if (sdk::is_unary_elementwise(op) || op == ACCEL_OP_CAST) step.operand_count = 1;
    else if (sdk::is_binary_elementwise(op)) step.operand_count = 2;
    else if (op == ACCEL_OP_SELECT) step.operand_count = 3;
    else {
      fail_at(where, std::string("op ") + op_name(op) +
                         " cannot be fused: a fusion holds unary and binary elementwise ops, SELECT and CAST");
    }
    AccelDType operand_dtypes[3] = {};
    for (int k = 0; k < step.operand_count; ++k) {
      const int32_t operand = instruction.operands[k];
      if (operand < 0 || operand >= index) {
        fail_at(where, std::string(op_name(op)) + " operand " + std::to_string(k) + " is value " +
                           std::to_string(operand) + "; an operand must be an earlier instruction (0 to " +
                           std::to_string(index - 1) + ")");
      }
      step.operands[k] = operand;
      operand_dtypes[k] = plan_.steps[static_cast<size_t>(operand)].dtype;
    }
    const AccelDType dtype = operand_dtypes[0];
    AccelDType result = dtype;
    auto mismatch = [&](const std::string& what) { fail_at(where, std::string(op_name(op)) + " " + what); };
    if (op == ACCEL_OP_CAST) {
      result = instruction.dtype;
      step.kernel = cast_step_kernel(dtype, result);
    } else if (op == ACCEL_OP_SELECT) {
      if (operand_dtypes[0] != ACCEL_DTYPE_BOOL) mismatch("condition must be bool, got " + dtype_text(operand_dtypes[0]));
      if (operand_dtypes[1] != operand_dtypes[2]) {
        mismatch("values differ in dtype: " + dtype_text(operand_dtypes[1]) + " and " + dtype_text(operand_dtypes[2]));
      }
      result = operand_dtypes[1];
      step.kernel = select_step_kernel(result);
    } else {
      if (step.operand_count == 2 && operand_dtypes[1] != dtype) {
        mismatch("operands differ in dtype: " + dtype_text(dtype) + " and " + dtype_text(operand_dtypes[1]));
      }
      if (!supports(op, dtype)) mismatch("is not defined for " + dtype_text(dtype));
      result = is_comparison(op) ? ACCEL_DTYPE_BOOL : dtype;
      step.kernel = step.operand_count == 1 ? unary_step_kernel(op, dtype) : binary_step_kernel(op, dtype);
      if (result != ACCEL_DTYPE_BOOL) step.round = round_kernel(result);
      step.checks_divisor = op == ACCEL_OP_DIV && (dtype == ACCEL_DTYPE_I32 || dtype == ACCEL_DTYPE_I64);
    }
    if (instruction.dtype != result) {
      mismatch("yields " + dtype_text(result) + ", but the instruction says " + dtype_text(instruction.dtype));
    }
    if (step.kernel == nullptr) mismatch("is not defined for " + dtype_text(dtype));
  }

  FusedOutputPlan plan_output(int32_t index, const AccelFusedOutput& output) {
    const std::string where = "output " + std::to_string(index);
    FusedOutputPlan planned;
    if (output.value < 0 || output.value >= program_.num_instructions) {
      fail_at(where, "stores value " + std::to_string(output.value) + ", but the program has " +
                         std::to_string(program_.num_instructions) + " instructions");
    }
    planned.value = output.value;
    const AccelDType dtype = plan_.steps[static_cast<size_t>(output.value)].dtype;
    const HostTensor& tensor = outputs_[static_cast<size_t>(index)];
    if (tensor.dtype != dtype) fail_at(where, "is " + describe(tensor) + " but its value is " + dtype_text(dtype));
    HostTensor expected = iteration_;
    expected.dtype = dtype;
    if (output.reduce_op == 0) {
      planned.store = store_kernel(dtype);
      planned.kept_count = plan_.total;
    } else {
      if (!is_reduction(output.reduce_op)) {
        fail_at(where, "reduce_op " + std::to_string(output.reduce_op) +
                           " is none of 0, REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX, REDUCE_MIN");
      }
      if (!supports(output.reduce_op, dtype)) {
        fail_at(where, std::string(op_name(output.reduce_op)) + " is not defined for " + dtype_text(dtype));
      }
      if (output.num_axes < 0 || output.num_axes > iteration_.rank) {
        fail_at(where, "num_axes " + std::to_string(output.num_axes) + " is outside [0, " +
                           std::to_string(iteration_.rank) + "]");
      }
      bool reduced[ACCEL_MAX_RANK] = {};
      for (int32_t k = 0; k < output.num_axes; ++k) {
        const int32_t axis = output.axes[k];
        if (axis < 0 || axis >= iteration_.rank || (k > 0 && axis <= output.axes[k - 1])) {
          fail_at(where, "reduction axes must be sorted, unique and within the iteration rank " +
                             std::to_string(iteration_.rank) + "; axis " + std::to_string(axis) + " is not");
        }
        reduced[axis] = true;
      }
      planned.rule = make_reduction_rule(output.reduce_op, dtype);
      // The keep-dims shape: a layout operand whose strides are 0 on reduced axes.
      kept_shapes_.push_back(iteration_);
      HostTensor& kept = kept_shapes_.back();
      kept.dtype = dtype;
      planned.kept_count = 1;
      expected.rank = 0;
      for (int32_t axis = 0; axis < iteration_.rank; ++axis) {
        if (reduced[axis]) {
          kept.shape[axis] = 1;
          planned.reduced_count *= iteration_.shape[axis];
          if (output.keep_dims) expected.shape[expected.rank++] = 1;
        } else {
          planned.kept_count *= iteration_.shape[axis];
          expected.shape[expected.rank++] = iteration_.shape[axis];
        }
      }
      planned.row_reduction = is_row_reduction(reduced);
      plan_.has_reductions = true;
    }
    if (!same_shape(tensor, expected)) {
      fail_at(where, "is " + describe(tensor) + " but should be " + describe(expected) +
                         (output.reduce_op == 0 ? " (the iteration shape)" : " (the reduced shape)"));
    }
    return planned;
  }

  // Whether the plain reduction reduces this as rows (reduce_run), which it
  // does when, after dropping size-1 axes and merging neighbours alike, the
  // axes are [reduced] or [kept, reduced] (see reductions.cpp).
  bool is_row_reduction(const bool* reduced) const {
    bool groups[ACCEL_MAX_RANK];  // reduced or not, per merged group
    int count = 0;
    for (int32_t axis = 0; axis < iteration_.rank; ++axis) {
      if (iteration_.shape[axis] == 1) continue;
      if (count == 0 || groups[count - 1] != reduced[axis]) groups[count++] = reduced[axis];
    }
    return count == 0 || (count == 1 && groups[0]) || (count == 2 && !groups[0] && groups[1]);
  }

  // An output may share memory only with an input of its own shape and
  // dtype, starting at the same byte (it is then written in place); outputs
  // never share memory with each other.
  void check_aliasing() {
    for (size_t j = 0; j < outputs_.size(); ++j) {
      for (size_t k = 0; k < j; ++k) {
        if (overlaps(outputs_[j], outputs_[k])) {
          invalid("output " + std::to_string(j) + " overlaps output " + std::to_string(k));
        }
      }
      for (size_t i = 0; i < inputs_.size(); ++i) {
        if (!overlaps(outputs_[j], inputs_[i])) continue;
        if (outputs_[j].data != inputs_[i].data || !same_shape(outputs_[j], inputs_[i]) ||
            outputs_[j].dtype != inputs_[i].dtype) {
          invalid("output " + std::to_string(j) + " " + describe(outputs_[j]) + " overlaps input " +
                  std::to_string(i) + " " + describe(inputs_[i]) +
                  "; an output may only be the same tensor as an input of its shape and dtype");
        }
        // Written in place: a block's loads all run before its outputs are
        // stored (the output is never computed into directly, see
        // choose_direct_outputs), so the input may still be read where it
        // lies, unless an output stores or reduces the loaded value itself:
        // outputs are stored and reduced one after another, after the
        // in-place store may have overwritten it.
        aliased_outputs_[j] = true;
        for (size_t index = 0; index < plan_.steps.size(); ++index) {
          FusedStep& step = plan_.steps[index];
          if (step.kind != ACCEL_FUSED_LOAD || step.input != static_cast<int32_t>(i)) continue;
          const bool output_reads_it = std::any_of(plan_.outputs.begin(), plan_.outputs.end(), [&](const auto& output) {
            return output.value == static_cast<int32_t>(index);
          });
          if (output_reads_it) step.zero_copy = false;
        }
      }
    }
  }

  // An op whose value an unreduced output stores in its compute type writes
  // the output's memory itself, saving a copy per block; not when the output
  // is an input's memory, which later loads of the block may still read.
  void choose_direct_outputs() {
    for (size_t j = 0; j < plan_.outputs.size(); ++j) {
      const FusedOutputPlan& output = plan_.outputs[j];
      FusedStep& step = plan_.steps[static_cast<size_t>(output.value)];
      const bool half = step.dtype == ACCEL_DTYPE_BF16 || step.dtype == ACCEL_DTYPE_F16;
      if (output.rule || aliased_outputs_[j] || half || step.kind != ACCEL_FUSED_OP || step.direct_output >= 0) continue;
      step.direct_output = static_cast<int32_t>(j);
    }
  }

  void mark_live_steps() {
    for (FusedStep& step : plan_.steps) step.live = false;
    for (const FusedOutputPlan& output : plan_.outputs) plan_.steps[static_cast<size_t>(output.value)].live = true;
    for (size_t index = plan_.steps.size(); index-- > 0;) {
      const FusedStep& step = plan_.steps[index];
      if (!step.live) continue;
      for (int k = 0; k < step.operand_count; ++k) plan_.steps[static_cast<size_t>(step.operands[k])].live = true;
    }
  }

  void build_layout() {
    std::vector<const HostTensor*> operands;
    for (const HostTensor& input : inputs_) operands.push_back(&input);
    size_t kept = 0;
    for (FusedOutputPlan& output : plan_.outputs) {
      if (!output.rule) continue;
      output.layout_operand = static_cast<int>(operands.size());
      operands.push_back(&kept_shapes_[kept++]);
    }
    plan_.layout = make_layout<kFusedLayoutOperands>(iteration_, operands);
  }

  std::span<const HostTensor> inputs_;
  std::span<const HostTensor> outputs_;
  const AccelFusedElementwiseAttributes& program_;
  HostTensor iteration_;
  std::vector<HostTensor> kept_shapes_;  // of the reduced outputs, in order
  bool aliased_outputs_[ACCEL_FUSED_MAX_OUTPUTS] = {};
  FusedPlan plan_;
};

}  // namespace

FusedPlan plan_fusion(std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
                      const AccelFusedElementwiseAttributes& program) {
  return Planner(inputs, outputs, program).plan();
}

}  // namespace accel::host_kernels::detail
