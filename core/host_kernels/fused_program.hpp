// A FUSED_ELEMENTWISE program checked against its operands and resolved into
// what the block executor (fused_elementwise.cpp) runs: one step per
// instruction with its kernel picked for its dtypes, the broadcast layout of
// the inputs and of the reduced outputs, and how each output is stored.
//
// Values live in blocks: up to kFusedBlock consecutive elements of the
// iteration space (part of one run of the innermost merged axis, or several
// whole runs when runs are short), in their compute type (float for
// F32/BF16/F16, int32, int64, uint8 for U8/BOOL). A value that is the same for
// every element of a block (a constant, a broadcast input, an op on such
// values) is held once.
#pragma once

#include "broadcast_layout.hpp"

#include <memory>
#include <span>
#include <vector>

namespace accel::host_kernels::detail {

// Elements per block: small enough that a program's live values stay in the
// first-level cache, large enough for long vector loops.
inline constexpr int64_t kFusedBlock = 512;
// Bytes of one element of any compute type, at most.
inline constexpr size_t kFusedSlotElementBytes = 8;
// Layout operands: the inputs, then one per reduced output.
inline constexpr int kFusedLayoutOperands = ACCEL_FUSED_MAX_INPUTS + ACCEL_FUSED_MAX_OUTPUTS;

// One value of a block: `count` elements at `data`, or one element repeated.
struct BlockValue {
  const void* data = nullptr;
  bool repeated = false;
};

// Computes an op on a block: operands[0..] are the op's operands; `count` is
// 1 when every operand is repeated.
using StepKernel = void (*)(const BlockValue* operands, void* result, int64_t count);
// Converts stored elements source[0], source[step], ... into `count` compute
// values (step 0 repeats source[0]).
using LoadKernel = void (*)(const void* source, int64_t step, void* destination, int64_t count);
// Converts `count` compute values into the stored dtype.
using StoreKernel = void (*)(BlockValue values, void* destination, int64_t count);
// Rounds float compute values to BF16 or F16 in place.
using RoundKernel = void (*)(void* values, int64_t count);

struct FusedStep {
  AccelFusedInstructionKind kind = ACCEL_FUSED_LOAD;
  AccelOp op = ACCEL_OP_MATMUL;  // ACCEL_FUSED_OP
  AccelDType dtype = ACCEL_DTYPE_F32;
  int operand_count = 0;
  int32_t operands[3] = {};
  bool live = true;  // some output depends on it
  // LOAD
  int32_t input = 0;
  bool zero_copy = false;  // the block reads the input's memory as it is
  int64_t stored_size = 0;  // bytes of one element of the input
  LoadKernel load = nullptr;
  // CONSTANT: the value in its compute type
  alignas(8) unsigned char constant[kFusedSlotElementBytes] = {};
  // OP
  StepKernel kernel = nullptr;
  RoundKernel round = nullptr;     // BF16/F16 results round as the plain op's output does
  bool checks_divisor = false;     // integer DIV: a zero divisor is an error
  // An unreduced output this step's value is computed straight into (the
  // output stores what the value holds, aliases no input), or -1.
  int32_t direct_output = -1;
  int64_t compute_size = 4;        // bytes of one value element
};

// How a reduced output combines values (the type-erased half of a reduction;
// fused_elementwise.cpp instantiates one per accumulator type and rule).
class ReductionRule {
 public:
  virtual ~ReductionRule() = default;
  virtual size_t accumulator_size() const noexcept = 0;
  virtual void fill_identity(void* accumulators, int64_t count) const noexcept = 0;
  // For each of `rows` rows of `length` values (row r at values + r * length):
  // accumulators[offset + r * row_stride + i * step] combined with value i of
  // row r, rows and values in order.
  virtual void accumulate(void* accumulators, int64_t offset, int64_t step, int64_t row_stride, BlockValue values,
                          int64_t rows, int64_t length) const noexcept = 0;
  // For each row: accumulators[offset + r * row_stride] combined with the
  // lane reduction of the row.
  virtual void accumulate_runs(void* accumulators, int64_t offset, int64_t row_stride, BlockValue values,
                               int64_t rows, int64_t length) const noexcept = 0;
  virtual void join(void* into, const void* from, int64_t count) const noexcept = 0;
  // A row reduced in pieces in reduce_run's order (LaneReduction), its state
  // in caller storage of kRowStateBytes.
  static constexpr size_t kRowStateBytes = 256;
  virtual void row_begin(void* state, int64_t length) const noexcept = 0;
  virtual void row_feed(void* state, BlockValue values, int64_t count) const noexcept = 0;
  virtual void row_finish(void* state, void* accumulators, int64_t offset) const noexcept = 0;
  // Writes the accumulators into the output (MEAN divides by `reduced_count`).
  virtual void store(const void* accumulators, const HostTensor& output, int64_t reduced_count) const = 0;
};

struct FusedOutputPlan {
  int32_t value = 0;
  StoreKernel store = nullptr;            // unreduced outputs
  std::unique_ptr<ReductionRule> rule;    // reduced outputs, else null
  int layout_operand = -1;                // reduced outputs: their operand in the layout
  int64_t kept_count = 0;                 // elements of the reduced output
  int64_t reduced_count = 1;              // elements reduced into each
  // Reduced in rows as the plain reduction would (reduce_run over each
  // output element's contiguous run of `reduced_count`), else element by
  // element in iteration order.
  bool row_reduction = false;
};

struct FusedPlan {
  std::vector<FusedStep> steps;
  std::vector<FusedOutputPlan> outputs;
  BroadcastLayout<kFusedLayoutOperands> layout;
  int64_t total = 0;               // elements of the iteration shape
  int64_t cost_per_element = 1;    // for the parallel grain
  bool has_reductions = false;
};

// Checks the program against the operands (throws InvalidArgument naming the
// instruction or output and what was expected) and resolves it.
FusedPlan plan_fusion(std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
                      const AccelFusedElementwiseAttributes& program);

// fused_value_kernels.cpp: the kernels of the steps, by dtype. Each returns
// null for a combination the op set does not define.
StepKernel unary_step_kernel(AccelOp op, AccelDType dtype);
StepKernel binary_step_kernel(AccelOp op, AccelDType dtype);
StepKernel select_step_kernel(AccelDType dtype);
StepKernel cast_step_kernel(AccelDType from, AccelDType to);
LoadKernel load_kernel(AccelDType dtype);
StoreKernel store_kernel(AccelDType dtype);
RoundKernel round_kernel(AccelDType dtype);  // null for dtypes that need no rounding
// Encodes `value` as a CONSTANT of `dtype` in its compute type (as FILL would).
void constant_value(double value, AccelDType dtype, void* compute_value);
// fused_elementwise.cpp: the combining rule of a reduced output.
std::unique_ptr<ReductionRule> make_reduction_rule(AccelOp reduce_op, AccelDType dtype);

}  // namespace accel::host_kernels::detail
