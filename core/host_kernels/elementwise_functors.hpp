// The formula of every elementwise op, one functor per op, and the loop that
// applies a binary functor to one run of broadcast operands. Shared by the
// plain elementwise kernels, the fused elementwise kernel and the MATMUL /
// convolution epilogues, so that a fused result is the unfused one bit for bit.
#pragma once

#include "vector_math.hpp"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace accel::host_kernels::detail {

template <typename T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

struct Add {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return wrap_add(a, b); else return a + b;
  }
};
struct Sub {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return wrap_sub(a, b); else return a - b;
  }
};
struct Mul {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return wrap_mul(a, b); else return a * b;
  }
};
struct Div {  // integer divisors are checked for zero before the loop
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return b == -1 ? wrap_sub(T{0}, a) : a / b;
    else return a / b;
  }
};
struct Maximum {  // NaN wins, as in TensorFlow
  template <typename T> T operator()(T a, T b) const { return (a >= b || a != a) ? a : b; }
};
struct Minimum {
  template <typename T> T operator()(T a, T b) const { return (a <= b || a != a) ? a : b; }
};
struct Pow {
  float operator()(float a, float b) const { return std::pow(a, b); }
};
struct Equal { template <typename T> uint8_t operator()(T a, T b) const { return a == b; } };
struct NotEqual { template <typename T> uint8_t operator()(T a, T b) const { return a != b; } };
struct Less { template <typename T> uint8_t operator()(T a, T b) const { return a < b; } };
struct LessEqual { template <typename T> uint8_t operator()(T a, T b) const { return a <= b; } };
struct Greater { template <typename T> uint8_t operator()(T a, T b) const { return a > b; } };
struct GreaterEqual { template <typename T> uint8_t operator()(T a, T b) const { return a >= b; } };
struct ReluBackward {  // (dy, x): the gradient passes where x > 0
  float operator()(float dy, float x) const { return x > 0.0f ? dy : 0.0f; }
};
struct SigmoidBackward {  // (dy, y)
  float operator()(float dy, float y) const { return dy * y * (1.0f - y); }
};
struct TanhBackward {  // (dy, y)
  float operator()(float dy, float y) const { return dy * (1.0f - y * y); }
};

struct Neg {
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return wrap_sub(T{0}, x); else return -x;
  }
};
struct Abs {
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return x < 0 ? wrap_sub(T{0}, x) : x;
    else return std::fabs(x);
  }
};
struct Square {
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return wrap_mul(x, x); else return x * x;
  }
};
struct Relu {  // NaN passes through
  template <typename T> T operator()(T x) const { return x < T{0} ? T{0} : x; }
};
struct Sign {  // 0 and NaN map to themselves
  template <typename T> T operator()(T x) const { return x > T{0} ? T{1} : (x < T{0} ? T{-1} : x); }
};
struct Exp { float operator()(float x) const { return vector_exp(x); } };
struct Log { float operator()(float x) const { return std::log(x); } };
struct Sqrt { float operator()(float x) const { return std::sqrt(x); } };
struct Rsqrt { float operator()(float x) const { return 1.0f / std::sqrt(x); } };
struct Reciprocal { float operator()(float x) const { return 1.0f / x; } };
struct Sigmoid { float operator()(float x) const { return 1.0f / (1.0f + vector_exp(-x)); } };
struct Tanh { float operator()(float x) const { return std::tanh(x); } };
struct Erf { float operator()(float x) const { return vector_erf(x); } };
struct LogicalNot { uint8_t operator()(uint8_t x) const { return x == 0; } };

// One run of a binary op; a_step/b_step are 0 (repeat) or 1 (walk). The four
// variants exist so each loop body is simple enough to vectorize.
template <typename T, typename R, typename Op>
void binary_run(const T* __restrict a, int64_t a_step, const T* __restrict b, int64_t b_step,
                R* __restrict y, int64_t length, Op op) {
  if (a_step != 0 && b_step != 0) {
    for (int64_t i = 0; i < length; ++i) y[i] = op(a[i], b[i]);
  } else if (a_step != 0) {
    const T b_value = *b;
    for (int64_t i = 0; i < length; ++i) y[i] = op(a[i], b_value);
  } else if (b_step != 0) {
    const T a_value = *a;
    for (int64_t i = 0; i < length; ++i) y[i] = op(a_value, b[i]);
  } else {
    const R value = op(*a, *b);
    for (int64_t i = 0; i < length; ++i) y[i] = value;
  }
}

}  // namespace accel::host_kernels::detail
