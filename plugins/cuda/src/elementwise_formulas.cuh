// The formula of every elementwise op and of CAST's conversion, on one value,
// as the CPU reference computes them (docs/op-set.md). Shared by the plain
// elementwise kernels (elementwise_kernels.cu), the FUSED_ELEMENTWISE
// interpreter (fused_elementwise_kernel.cu) and the MATMUL / convolution
// epilogue (epilogue_kernels.cu), so a fused result is the unfused one.
#pragma once

#include "device_math.cuh"

#include <cstdint>
#include <type_traits>

namespace accel::cuda {

// --------------------------------------------------------------- unary

template <typename C> __device__ __forceinline__ C unary_float(AccelOp op, C x) {
  switch (op) {
    case ACCEL_OP_NEG: return -x;
    case ACCEL_OP_ABS: return fabsf(x);
    case ACCEL_OP_EXP: return expf(x);
    case ACCEL_OP_LOG: return logf(x);
    case ACCEL_OP_SQRT: return sqrtf(x);
    case ACCEL_OP_RSQRT: return 1.0f / sqrtf(x);
    case ACCEL_OP_SQUARE: return x * x;
    case ACCEL_OP_RELU: return x < 0.0f ? 0.0f : x;  // NaN and -0 pass, as on the CPU
    case ACCEL_OP_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case ACCEL_OP_TANH: return tanhf(x);
    case ACCEL_OP_SIGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);  // keeps 0, -0, NaN
    case ACCEL_OP_RECIPROCAL: return 1.0f / x;
    case ACCEL_OP_ERF: return erff(x);
    default: return x;
  }
}

template <typename I> __device__ __forceinline__ I unary_integer(AccelOp op, I x) {
  switch (op) {
    case ACCEL_OP_NEG: return wrap_sub<I>(0, x);
    case ACCEL_OP_ABS: return x < 0 ? wrap_sub<I>(0, x) : x;
    case ACCEL_OP_SQUARE: return wrap_mul<I>(x, x);
    case ACCEL_OP_RELU: return x > 0 ? x : 0;
    case ACCEL_OP_SIGN: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    default: return x;
  }
}

// LOGICAL_NOT of a BOOL byte (any nonzero byte is true).
__device__ __forceinline__ uint8_t logical_not(uint8_t x) { return x == 0 ? 1 : 0; }

// -------------------------------------------------------------- binary

// The device twin of op_dispatch.hpp's is_comparison (host only).
__device__ __forceinline__ bool is_comparison_op(AccelOp op) {
  return op >= ACCEL_OP_EQUAL && op <= ACCEL_OP_GREATER_EQUAL;
}

template <typename C> __device__ __forceinline__ bool compare(AccelOp op, C a, C b) {
  switch (op) {
    case ACCEL_OP_EQUAL: return a == b;
    case ACCEL_OP_NOT_EQUAL: return a != b;
    case ACCEL_OP_LESS: return a < b;
    case ACCEL_OP_LESS_EQUAL: return a <= b;
    case ACCEL_OP_GREATER: return a > b;
    case ACCEL_OP_GREATER_EQUAL: return a >= b;
    default: return false;
  }
}

__device__ __forceinline__ float binary_float(AccelOp op, float a, float b) {
  switch (op) {
    case ACCEL_OP_ADD: return a + b;
    case ACCEL_OP_SUB: return a - b;
    case ACCEL_OP_MUL: return a * b;
    case ACCEL_OP_DIV: return a / b;
    case ACCEL_OP_MAXIMUM: return nan_max(a, b);
    case ACCEL_OP_MINIMUM: return nan_min(a, b);
    case ACCEL_OP_POW: return powf(a, b);
    // dy where x > 0, else 0 (not dy * 0, which is NaN for an infinite or NaN dy).
    case ACCEL_OP_RELU_BACKWARD: return b > 0.0f ? a : 0.0f;
    case ACCEL_OP_SIGMOID_BACKWARD: return a * b * (1.0f - b);        // dy * y * (1 - y)
    case ACCEL_OP_TANH_BACKWARD: return a * (1.0f - b * b);           // dy * (1 - y^2)
    default: return 0.0f;
  }
}

// DIV truncates toward zero, and b == -1 negates with wrap-around (the lowest
// value divided by -1 is itself, not a trap). A zero divisor gives 0 here; the
// op set makes it an error, which the caller reports.
template <typename I> __device__ __forceinline__ I binary_integer(AccelOp op, I a, I b) {
  switch (op) {
    case ACCEL_OP_ADD: return wrap_add(a, b);
    case ACCEL_OP_SUB: return wrap_sub(a, b);
    case ACCEL_OP_MUL: return wrap_mul(a, b);
    case ACCEL_OP_DIV:
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<I>) {
        if (b == -1) return wrap_sub<I>(0, a);
      }
      return static_cast<I>(a / b);
    case ACCEL_OP_MAXIMUM: return a > b ? a : b;
    case ACCEL_OP_MINIMUM: return a < b ? a : b;
    default: return 0;
  }
}

// ---------------------------------------------------------------- cast

// Float to integer as the CPU plugin casts (docs/op-set.md): truncate toward
// zero, NaN gives 0, out-of-range values saturate. Spelled out because CUDA
// leaves out-of-range float-to-integer conversions undefined, and a U8 target
// must saturate at 0 and 255, not wrap an int32.
template <typename Int> struct IntRange;
template <> struct IntRange<uint8_t> {
  static constexpr uint8_t kLowest = 0, kMax = 255;
};
template <> struct IntRange<int32_t> {
  static constexpr int32_t kLowest = INT32_MIN, kMax = INT32_MAX;
};
template <> struct IntRange<int64_t> {
  static constexpr int64_t kLowest = INT64_MIN, kMax = INT64_MAX;
};

template <typename Int> __device__ __forceinline__ Int float_to_int(float f) {
  using Range = IntRange<Int>;
  // As floats: kLowest is exact (0 or -2^n), kMax rounds up to 2^n for the wide types.
  if (f != f) return 0;
  if (f <= static_cast<float>(Range::kLowest)) return Range::kLowest;
  if (f >= static_cast<float>(Range::kMax)) return Range::kMax;
  if constexpr (std::is_same_v<Int, int64_t>) {
    return __float2ll_rz(f);
  } else {
    return static_cast<Int>(__float2int_rz(f));
  }
}

// CAST of one value from dtype `from` to dtype `to`, both in their compute
// type (ElementValue): floats round to nearest even, float to integer as
// float_to_int, integer to integer wraps, anything to BOOL is `x != 0`, and a
// BOOL source is 0 or 1 as a number, whatever nonzero byte it holds.
__device__ __forceinline__ ElementValue convert_value(ElementValue x, AccelDType from, AccelDType to) {
  ElementValue y;
  y.i64 = 0;
  if (is_float_dtype(from)) {
    const float f = x.f;
    switch (to) {
      case ACCEL_DTYPE_F32: y.f = f; break;
      case ACCEL_DTYPE_BF16:
      case ACCEL_DTYPE_F16: y.f = round_to(to, f); break;
      case ACCEL_DTYPE_I32: y.i32 = float_to_int<int32_t>(f); break;
      case ACCEL_DTYPE_I64: y.i64 = float_to_int<int64_t>(f); break;
      case ACCEL_DTYPE_U8: y.u8 = float_to_int<uint8_t>(f); break;
      default: y.u8 = f != 0.0f ? 1 : 0; break;  // BOOL
    }
    return y;
  }
  const int64_t v = from == ACCEL_DTYPE_I32   ? static_cast<int64_t>(x.i32)
                    : from == ACCEL_DTYPE_I64 ? x.i64
                    : from == ACCEL_DTYPE_BOOL ? (x.u8 != 0 ? 1 : 0)
                                               : static_cast<int64_t>(x.u8);
  switch (to) {
    case ACCEL_DTYPE_F32: y.f = static_cast<float>(v); break;
    case ACCEL_DTYPE_BF16:
    case ACCEL_DTYPE_F16: y.f = round_to(to, static_cast<float>(v)); break;
    case ACCEL_DTYPE_I32: y.i32 = static_cast<int32_t>(v); break;
    case ACCEL_DTYPE_I64: y.i64 = v; break;
    case ACCEL_DTYPE_U8: y.u8 = static_cast<uint8_t>(v); break;
    default: y.u8 = v != 0 ? 1 : 0; break;  // BOOL
  }
  return y;
}

}  // namespace accel::cuda
