// exp and erf for float, written without branches or library calls so that
// the compiler vectorizes the loops that call them.
//
// glibc's expf and erff are scalar calls: a loop over them runs one element
// at a time (softmax over attention rows, GELU's erf: 1-2 GB/s, the largest
// elementwise costs of a Transformer step). These run in the vector lanes at
// memory speed. Accuracy, over every float (tests/cpu/vector_math_test.cpp
// checks a sample of them in CI): exp within 1 ulp of the correctly rounded
// result, erf within 5e-7 absolute (TensorFlow's float erf, Eigen's, is the
// same approximation); NaN, the infinities, overflow and gradual underflow
// behave as std::exp and std::erf.
#pragma once

#include <bit>
#include <cstdint>

namespace accel::host_kernels::detail {

// e^x = 2^n * e^r with n = round(x / ln 2) and |r| <= ln(2) / 2; e^r by a
// degree-6 polynomial (Cephes's coefficients), 2^n built in the exponent
// bits. n is applied in two halves so that results beyond the normal range
// still overflow to infinity or underflow gradually to zero.
inline float vector_exp(float x) {
  // Past these the result is infinity or zero.
  constexpr float kHighest = 89.0f, kLowest = -105.0f;
  const float clamped_low = x >= kLowest ? x : kLowest;  // NaN becomes kLowest here, restored below
  const float clamped = clamped_low <= kHighest ? clamped_low : kHighest;
  // Round to nearest by adding and removing 1.5 * 2^23 (plain SSE2 has no rounding instruction).
  constexpr float kRoundingShift = 12582912.0f;
  const float n = (clamped * 1.44269504088896341f + kRoundingShift) - kRoundingShift;
  // Cody-Waite: ln 2 in two parts so that x - n ln 2 loses no bits.
  const float r = (clamped - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t exponent = static_cast<int32_t>(n);
  const int32_t half = exponent >> 1;
  const float first_scale = std::bit_cast<float>((half + 127) << 23);
  const float second_scale = std::bit_cast<float>((exponent - half + 127) << 23);
  const float result = p * first_scale * second_scale;
  return x == x ? result : x;
}

// erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (the rational approximation Eigen
// and XLA use for float), and +-1 beyond, where erf rounds to 1 in float.
inline float vector_erf(float x) {
  const float low = x >= -4.0f ? x : -4.0f;
  const float clamped = low <= 4.0f ? low : 4.0f;
  const float x2 = clamped * clamped;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 + -2.10102402082508e-06f;
  p = p * x2 + -5.69250639462346e-05f;
  p = p * x2 + -7.34990630326855e-04f;
  p = p * x2 + -2.95459980854025e-03f;
  p = p * x2 + -1.60960333262415e-02f;
  p *= clamped;
  float q = -1.45660718464996e-05f;
  q = q * x2 + -2.13374055278905e-04f;
  q = q * x2 + -1.68282697438203e-03f;
  q = q * x2 + -7.37332916720468e-03f;
  q = q * x2 + -1.42647390514189e-02f;
  const float result = p / q;
  return x == x ? result : x;
}

}  // namespace accel::host_kernels::detail
