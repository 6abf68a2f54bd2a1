// The FUSED_ELEMENTWISE interpreter kernel (plugin API 1.2): one thread per
// element of the iteration space (grid-stride) runs the checked program
// (FusedKernelPlan, the kernel's by-value argument) step by step into an array
// of ElementValue, one per step, then stores the full-shape outputs. Every
// load of an element comes before any store of it, so an output written over
// an input of the iteration shape reads the input's old value. Each op uses
// the plain kernels' formula (elementwise_formulas.cuh); BF16 / F16 values are
// computed in float and rounded to their dtype after every op, as the plain
// ops round their outputs.
#include "device_math.cuh"
#include "elementwise_formulas.cuh"
#include "kernels.hpp"

#include <accel/plugin/op_classes.hpp>

#include <cstdint>

namespace accel::cuda {
namespace {

// Kernel arguments are limited to 4 KiB on older toolkits.
static_assert(sizeof(FusedKernelPlan) <= 4096, "the fused program must fit in a kernel argument");

__device__ __forceinline__ ElementValue unary_value(AccelOp op, AccelDType dtype, ElementValue x) {
  ElementValue y;
  y.i64 = 0;
  switch (dtype) {
    case ACCEL_DTYPE_I32: y.i32 = unary_integer<int32_t>(op, x.i32); break;
    case ACCEL_DTYPE_I64: y.i64 = unary_integer<int64_t>(op, x.i64); break;
    case ACCEL_DTYPE_BOOL: y.u8 = logical_not(x.u8); break;  // the one op defined for BOOL
    default: y.f = round_to(dtype, unary_float<float>(op, x.f)); break;
  }
  return y;
}

// `dtype` is the operands'; comparisons yield BOOL, the rest `dtype`.
__device__ __forceinline__ ElementValue binary_value(AccelOp op, AccelDType dtype, ElementValue a,
                                                     ElementValue b) {
  ElementValue y;
  y.i64 = 0;
  if (is_comparison_op(op)) {
    bool result;
    switch (dtype) {
      case ACCEL_DTYPE_I32: result = compare(op, a.i32, b.i32); break;
      case ACCEL_DTYPE_I64: result = compare(op, a.i64, b.i64); break;
      case ACCEL_DTYPE_U8:
      case ACCEL_DTYPE_BOOL: result = compare(op, a.u8, b.u8); break;  // bytes as they are, as the plain op
      default: result = compare(op, a.f, b.f); break;
    }
    y.u8 = result ? 1 : 0;
    return y;
  }
  switch (dtype) {
    case ACCEL_DTYPE_I32: y.i32 = binary_integer<int32_t>(op, a.i32, b.i32); break;
    case ACCEL_DTYPE_I64: y.i64 = binary_integer<int64_t>(op, a.i64, b.i64); break;
    default: y.f = round_to(dtype, binary_float(op, a.f, b.f)); break;
  }
  return y;
}

__device__ __forceinline__ bool is_zero(AccelDType dtype, ElementValue v) {
  return dtype == ACCEL_DTYPE_I64 ? v.i64 == 0 : v.i32 == 0;
}

__device__ __forceinline__ ElementValue op_value(const FusedStep& step, const ElementValue* values,
                                                 int32_t* zero_divisor) {
  const AccelOp op = static_cast<AccelOp>(step.op);
  const AccelDType operand_dtype = static_cast<AccelDType>(step.operand_dtype);
  const ElementValue a = values[step.operands[0]];
  if (op == ACCEL_OP_CAST) return convert_value(a, operand_dtype, static_cast<AccelDType>(step.dtype));
  if (op == ACCEL_OP_SELECT) return a.u8 != 0 ? values[step.operands[1]] : values[step.operands[2]];
  if (sdk::is_unary_elementwise(op)) return unary_value(op, operand_dtype, a);
  const ElementValue b = values[step.operands[1]];
  if (step.checks_divisor && is_zero(operand_dtype, b)) atomicMin(zero_divisor, static_cast<int32_t>(step.instruction));
  return binary_value(op, operand_dtype, a, b);
}

__global__ void fused_elementwise_kernel(const FusedKernelPlan plan, int32_t* zero_divisor) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < plan.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t coordinates[kMaxRank];
    if (plan.needs_coordinates) {
      int64_t rest = i;
      for (int32_t d = plan.rank - 1; d >= 0; --d) {
        coordinates[d] = rest % plan.shape[d];
        rest /= plan.shape[d];
      }
    }
    ElementValue values[kFusedMaxSteps];
    for (int32_t s = 0; s < plan.num_steps; ++s) {
      const FusedStep& step = plan.steps[s];
      switch (step.kind) {
        case ACCEL_FUSED_LOAD: {
          const int input = step.operands[0];
          int64_t at = i;
          if (!plan.input_contiguous[input]) {
            at = 0;
            for (int32_t d = 0; d < plan.rank; ++d) at += coordinates[d] * plan.input_strides[input][d];
          }
          values[s] = load_element(plan.inputs[input], static_cast<AccelDType>(plan.input_dtypes[input]), at);
          break;
        }
        case ACCEL_FUSED_CONSTANT: values[s] = step.constant; break;
        default: values[s] = op_value(step, values, zero_divisor); break;
      }
    }
    for (int32_t j = 0; j < plan.num_stores; ++j) {
      const int32_t s = plan.store_steps[j];
      store_element(plan.stores[j], static_cast<AccelDType>(plan.steps[s].dtype), i, values[s]);
    }
  }
}

}  // namespace

cudaError_t launch_fused_elementwise(const FusedKernelPlan& plan, int32_t* zero_divisor,
                                     cudaStream_t stream) {
  if (plan.count <= 0 || plan.num_stores == 0) return cudaSuccess;
  if (plan.num_steps < 1 || plan.num_steps > kFusedMaxSteps || plan.num_stores > kFusedMaxStores) {
    return cudaErrorInvalidValue;
  }
  fused_elementwise_kernel<<<grid_for(plan.count), kThreads, 0, stream>>>(plan, zero_divisor);
  return cudaGetLastError();
}

}  // namespace accel::cuda
