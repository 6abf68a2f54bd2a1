// C++ conveniences for plugin authors, compiled into the plugin (header-only).
// Nothing here crosses the boundary: exceptions thrown inside a plugin are
// caught by `guard` and turned into an AccelStatus made by the host.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

namespace accel::sdk {

// An error a plugin throws internally; `guard` converts it to a status.
class PluginError : public std::runtime_error {
 public:
  PluginError(AccelStatusCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  AccelStatusCode code() const noexcept { return code_; }

 private:
  AccelStatusCode code_;
};

// Throws an INVALID_ARGUMENT PluginError with `message` unless `condition`:
// the check at the top of an entry point for what the host passed in.
inline void require_argument(bool condition, const char* message) {
  if (!condition) throw PluginError(ACCEL_STATUS_INVALID_ARGUMENT, message);
}

// Runs `body` and converts any exception into a host-owned status (NULL = OK).
template <typename Body>
AccelStatus* guard(const AccelHostApi* host, Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const PluginError& error) {
    return host->status_create(error.code(), error.what());
  } catch (const std::bad_alloc&) {
    return host->status_create(ACCEL_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  } catch (const std::exception& error) {
    return host->status_create(ACCEL_STATUS_INTERNAL, error.what());
  } catch (...) {
    return host->status_create(ACCEL_STATUS_INTERNAL, "unknown exception in plugin");
  }
}

constexpr size_t dtype_size(AccelDType dtype) noexcept {
  switch (dtype) {
    case ACCEL_DTYPE_F32: case ACCEL_DTYPE_I32: return 4;
    case ACCEL_DTYPE_BF16: case ACCEL_DTYPE_F16: return 2;
    case ACCEL_DTYPE_I64: return 8;
    case ACCEL_DTYPE_U8: case ACCEL_DTYPE_BOOL: return 1;
    default: return 0;
  }
}

inline const char* dtype_name(AccelDType dtype) noexcept {
  switch (dtype) {
    case ACCEL_DTYPE_F32: return "float32";
    case ACCEL_DTYPE_BF16: return "bfloat16";
    case ACCEL_DTYPE_F16: return "float16";
    case ACCEL_DTYPE_I32: return "int32";
    case ACCEL_DTYPE_I64: return "int64";
    case ACCEL_DTYPE_U8: return "uint8";
    case ACCEL_DTYPE_BOOL: return "bool";
    default: return "unknown";
  }
}

inline int64_t element_count(const AccelTensor& tensor) noexcept {
  int64_t count = 1;
  for (int32_t axis = 0; axis < tensor.rank; ++axis) count *= tensor.shape[axis];
  return count;
}

inline uint64_t byte_size(const AccelTensor& tensor) noexcept {
  return static_cast<uint64_t>(element_count(tensor)) * dtype_size(tensor.dtype);
}

// How many times a window of `span` elements (a pool window, or a filter
// with its dilation) fits along an axis of `padded_input` elements at this
// stride. TensorFlow's rule: a window longer than the padded input fits no
// times, so the output is empty (plain `(padded - span) / stride + 1` would
// truncate toward zero and say 1). Every plugin checks output shapes with it.
constexpr int64_t window_positions(int64_t padded_input, int64_t span, int64_t stride) noexcept {
  return padded_input >= span ? (padded_input - span) / stride + 1 : 0;
}

// Reads an op's attribute struct, checking it is at least `minimum_size`
// bytes: by default this plugin's whole view of it. An op whose struct grew
// (MATMUL and CONV2D gained epilogue fields in 1.2) passes the size of its
// first version, so that older hosts' smaller structs are accepted; the
// caller then reads the newer fields only below struct_size.
template <typename Attributes>
const Attributes& attributes_of(const AccelOpCall& call, size_t minimum_size = sizeof(Attributes)) {
  auto* attributes = static_cast<const Attributes*>(call.attributes);
  if (attributes == nullptr || attributes->struct_size < minimum_size) {
    throw PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "op attributes missing or too small");
  }
  return *attributes;
}

// bfloat16: the top 16 bits of an IEEE float; rounding is to nearest even.
inline float bf16_to_float(uint16_t bits) noexcept {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

// Written without a branch so that loops over it vectorize.
inline uint16_t float_to_bf16(float value) noexcept {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  const uint32_t rounded = (word + 0x7FFFu + ((word >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (word >> 16) | 0x0040u;  // a NaN stays NaN, quiet
  return static_cast<uint16_t>((word & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : rounded);
}

// Rounds a float to the nearest bfloat16 value (ties to even), kept as float.
inline float round_to_bf16(float value) noexcept { return bf16_to_float(float_to_bf16(value)); }

// IEEE half precision conversions (round to nearest even).
inline float f16_to_float(uint16_t half) noexcept {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1Fu;
  uint32_t mantissa = half & 0x3FFu;
  uint32_t word;
  if (exponent == 0) {
    if (mantissa == 0) {
      word = sign;
    } else {  // subnormal: normalise
      int shift = 0;
      while ((mantissa & 0x400u) == 0) { mantissa <<= 1; ++shift; }
      mantissa &= 0x3FFu;
      word = sign | (static_cast<uint32_t>(127 - 15 - shift + 1) << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1F) {
    word = sign | 0x7F800000u | (mantissa << 13);
  } else {
    word = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

inline uint16_t float_to_f16(float value) noexcept {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  uint32_t sign = (word >> 16) & 0x8000u;
  int32_t exponent = static_cast<int32_t>((word >> 23) & 0xFFu) - 127 + 15;
  uint32_t mantissa = word & 0x7FFFFFu;
  if (((word >> 23) & 0xFFu) == 0xFFu) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7C00u | (mantissa ? 0x200u : 0u));
  }
  if (exponent >= 0x1F) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow to inf
  if (exponent <= 0) {                                                 // subnormal or zero
    if (exponent < -10) return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exponent);
    uint32_t half_mantissa = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u))) ++half_mantissa;
    return static_cast<uint16_t>(sign | half_mantissa);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t remainder = mantissa & 0x1FFFu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;  // may carry into exponent
  return static_cast<uint16_t>(half);
}

}  // namespace accel::sdk
