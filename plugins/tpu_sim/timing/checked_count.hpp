// Integer counts of the timing model (cycles, MACs, bytes, folds) in int64
// without silent wrap-around. A shape large enough to overflow (a GEMM of
// 10^7 x 10^7 x 10^7 has 10^21 MACs) must not come out as a negative or
// INT64_MIN cycle count: per-op arithmetic throws CountOverflowError naming
// what overflowed; running totals over many ops saturate at INT64_MAX.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace accel::tpu {

class CountOverflowError : public std::invalid_argument {
 public:
  explicit CountOverflowError(std::string_view what)
      : std::invalid_argument(std::string(what) +
                              " does not fit a 64-bit count; the shape is too large to time") {}
};

inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) throw CountOverflowError(what);
  return out;
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) throw CountOverflowError(what);
  return out;
}

// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// value rounded up to a multiple of `multiple` (> 0).
inline std::int64_t checked_round_up(std::int64_t value, std::int64_t multiple, std::string_view what) {
  return checked_mul(ceil_div(value, multiple), multiple, what);
}

// ceil(value) of a non-negative double as a count (a cast of anything at or
// above 2^63 is undefined behaviour).
inline std::int64_t checked_ceil_count(double value, std::string_view what) {
  const double rounded = std::ceil(value);
  if (!(rounded >= 0 && rounded < 0x1p63)) throw CountOverflowError(what);
  return static_cast<std::int64_t>(rounded);
}

// llround(value) of a non-negative double as a count, likewise checked.
inline std::int64_t checked_round_count(double value, std::string_view what) {
  const double rounded = std::round(value);
  if (!(rounded >= 0 && rounded < 0x1p63)) throw CountOverflowError(what);
  return static_cast<std::int64_t>(rounded);
}

// For running totals: pegs at INT64_MAX instead of wrapping.
inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return b > 0 ? std::numeric_limits<std::int64_t>::max()
                                                       : std::numeric_limits<std::int64_t>::min();
  return out;
}

}  // namespace accel::tpu
