// How one element changes dtype: the rules of CAST (docs/op-set.md), shared by
// the CAST kernel, FILL's scalar encoding and the CAST instructions of a
// fusion, so that all three convert alike.
#pragma once

#include "kernel_support.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace accel::host_kernels::detail {

// Storage type of BOOL: kept apart from uint8_t (U8) because converting to it
// is `x != 0`, not a truncation.
struct bool_t { uint8_t value; };

// Storage -> arithmetic value: floats widen to float, bool to 0/1.
inline float widen(float x) { return x; }
inline float widen(bf16_t x) { return sdk::bf16_to_float(x.bits); }
inline float widen(f16_t x) { return sdk::f16_to_float(x.bits); }
inline int32_t widen(int32_t x) { return x; }
inline int64_t widen(int64_t x) { return x; }
inline uint8_t widen(uint8_t x) { return x; }
inline uint8_t widen(bool_t x) { return x.value != 0; }

// Float to integer: truncate toward zero; NaN gives 0 and out-of-range values
// saturate (C++ leaves both undefined).
template <typename Int>
Int truncate_to(double x) {
  if (std::isnan(x)) return Int{0};
  if (x <= static_cast<double>(std::numeric_limits<Int>::lowest())) return std::numeric_limits<Int>::lowest();
  if (x >= static_cast<double>(std::numeric_limits<Int>::max())) return std::numeric_limits<Int>::max();
  return static_cast<Int>(x);
}

// Arithmetic value -> storage of another dtype.
template <typename Dst, typename Value>
Dst narrow(Value x) {
  if constexpr (std::is_same_v<Dst, bool_t>) {
    return bool_t{static_cast<uint8_t>(x != Value{0})};
  } else if constexpr (std::is_same_v<Dst, float>) {
    return static_cast<float>(x);
  } else if constexpr (std::is_same_v<Dst, bf16_t>) {
    return bf16_t{sdk::float_to_bf16(static_cast<float>(x))};
  } else if constexpr (std::is_same_v<Dst, f16_t>) {
    return f16_t{sdk::float_to_f16(static_cast<float>(x))};
  } else if constexpr (std::is_floating_point_v<Value>) {
    return truncate_to<Dst>(x);
  } else {
    return static_cast<Dst>(x);  // integer to integer wraps (modulo 2^n)
  }
}

// A float that holds a value of storage type S exactly (a maximum of S
// values, a result already rounded to S) -> S. For bfloat16 the top half of
// the bits, with no rounding to do: a third of narrow's work in a vector loop.
template <typename S>
S narrow_exact(float x) {
  if constexpr (std::is_same_v<S, bf16_t>) {
    uint32_t word;
    std::memcpy(&word, &x, sizeof(word));
    return bf16_t{static_cast<uint16_t>(word >> 16)};
  } else {
    return narrow<S>(x);
  }
}

// Calls body(T{}) with T the storage type of `dtype`.
template <typename Body>
decltype(auto) with_storage_type(AccelDType dtype, const Body& body) {
  switch (dtype) {
    case ACCEL_DTYPE_F32: return body(float{});
    case ACCEL_DTYPE_BF16: return body(bf16_t{});
    case ACCEL_DTYPE_F16: return body(f16_t{});
    case ACCEL_DTYPE_I32: return body(int32_t{});
    case ACCEL_DTYPE_I64: return body(int64_t{});
    case ACCEL_DTYPE_U8: return body(uint8_t{});
    case ACCEL_DTYPE_BOOL: return body(bool_t{});
    default: invalid("unknown dtype");
  }
}

}  // namespace accel::host_kernels::detail
